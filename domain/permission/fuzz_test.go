package permission

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/settings"
)

var configCodes = []string{CodeInvalidConfig, CodeRejectedKey, CodeInvalidRuleAction, CodeInvalidMode, CodeToolsConflict}

// FuzzResolve: any permission and tools JSON either resolves or fails with a typed
// ConfigError of a known code; it never panics, and a resolved policy decides any call.
func FuzzResolve(f *testing.F) {
	seeds := [][2]string{
		{`{"mode":"standard","rules":{"read":"allow","edit":"ask","shell":{"*":"ask","git *":"allow","git push*":"deny"}}}`, `{}`},
		{`{"rules":{"write":"deny"}}`, `{"edit":false}`},
		{`{"rules":{"read":{"*":"allow","$HOME/.ssh/*":"deny"}}}`, `{"edit":false,"write":true}`},
		{`{"mode":"yolo"}`, `{"webfetch":false}`},
		{`{"rules":{"a":"allow","a":"deny"}}`, `{"shell":1}`},
		{`{"rules":{"":"allow"}}`, `[]`},
		{`{"rules":{"x":{"":"maybe"}}} trailing`, `{"read_mcp_resource":true,"read":false}`},
		{`null`, `{"apply_patch":true}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], "read", "src/../x")
	}
	f.Fuzz(func(t *testing.T, perm, tools, tool, resource string) {
		p, err := Resolve([]settings.Raw{{Layer: settings.Project, Source: "zuno.json", JSON: json.RawMessage(perm)}},
			[]settings.Raw{{Layer: settings.Global, Source: "g.json", JSON: json.RawMessage(tools)}})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || !slices.Contains(configCodes, ce.Code()) || ce.Err.Message == "" || ce.Err.Error() == "" {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		for _, r := range p.Rules() {
			if _, ok := parseAction(string(r.Action)); !ok || r.Key == "" || rejectedKeys[r.Key] != "" && r.Layer == settings.Project {
				t.Fatalf("bad rule %+v", r)
			}
		}
		if _, ok := parseMode(string(p.Mode())); !ok {
			t.Fatalf("bad mode %q", p.Mode())
		}
		d := p.Decide(Request{Tool: tool, Resource: resource, Workspace: "/w", Home: "/h", SideEffect: true})
		if _, ok := parseAction(string(d.Action)); !ok || len(d.Checks) == 0 {
			t.Fatalf("bad decision %+v", d)
		}
	})
}

// FuzzPathMatch: the asymmetry of path rules holds for any pattern and path. A deny matches
// whenever the plain spelling matches and whenever any respelling of a matched path is given
// (separators, ./, doubled separators, a detour through .., the absolute form); an allow
// matches exactly what the plain spellings match.
func FuzzPathMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"src/main.rs", "./src/main.rs"}, {"secrets/*", `src\..\secrets\k`}, {"/w/secrets/*", "secrets/k"},
		{"*/src/*", "/w/src/a"}, {"~/.ssh/*", "/h/.ssh/id"}, {"C:/w/*", `C:\w\a`}, {"a//b", "a//b"}, {"*", ""},
	} {
		f.Add(s[0], s[1], "/w")
	}
	f.Fuzz(func(t *testing.T, pattern, resource, workspace string) {
		const home = "/h"
		s := spell(resource, workspace)
		allow, deny := matchPath(pattern, Allow, s, home), matchPath(pattern, Deny, s, home)
		p := expandHome(pattern, home)
		if p != "*" {
			p = normalise(p)
		}
		plain := false
		for _, c := range []string{resource, normalise(resource)} {
			plain = plain || matchWildcard(p, c) || matchWildcard(pattern, c)
		}
		if allow != plain {
			t.Fatalf("allow %t but the plain spellings match %t (pattern %q, path %q)", allow, plain, pattern, resource)
		}
		if plain && !deny {
			t.Fatalf("deny matched less than the plain spelling (pattern %q, path %q)", pattern, resource)
		}
		if !matchWildcard(p, resolveDots(normalise(resource))) {
			return
		}
		// A deny that matches the resolved path cannot be got around by respelling it.
		variants := []string{strings.ReplaceAll(resource, "/", `\`), strings.ReplaceAll(resource, "/", "//")}
		if !isAbs(normalise(resource)) {
			variants = append(variants, "./"+resource, "zz/../"+resource)
			if ws := resolveDots(normalise(workspace)); isAbs(ws) && !strings.HasPrefix(resolveDots(normalise(resource)), "..") {
				variants = append(variants, ws+"/"+resource)
			}
		}
		for _, v := range variants {
			if !matchPath(pattern, Deny, spell(v, workspace), home) {
				t.Fatalf("deny %q matches %q but not its respelling %q (workspace %q)", pattern, resource, v, workspace)
			}
		}
	})
}

// FuzzMatchesKey: MatchesKey is exactly how Decide fits a rule's key to a call's permission,
// for any key pattern and permission. The configuration loader refuses project-layer rules by
// what MatchesKey says they could reach (docs/permissions.md, "What the project layer may not
// loosen"), so if the gate fitted keys any other way, that check would judge the wrong thing.
func FuzzMatchesKey(f *testing.F) {
	for _, s := range [][2]string{
		{"external*", ExternalDirectory}, {"*directory", ExternalDirectory}, {"?xternal_directory", ExternalDirectory},
		{"EXTERNAL*", ExternalDirectory}, {"external_directory *", ExternalDirectory}, {"sh*", "shell"}, {"mcp_*", "mcp_github_x"},
		{"e*y", "edit"}, {"**", "read"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if pattern == "*" {
			return // the catch-all below is written under it
		}
		rules, _ := json.Marshal(map[string]any{"rules": map[string]string{"*": "ask", pattern: "deny"}})
		p, err := Resolve([]settings.Raw{{Layer: settings.Global, Source: "g.json", JSON: rules}}, nil)
		if err != nil {
			return // an empty or rejected key: no rule to fit
		}
		written := p.Rules()[len(p.Rules())-1].Key // as decoded: invalid UTF-8 reads back as U+FFFD
		d := p.Decide(Request{Tool: key, Resource: "r", Workspace: "/w"})
		if denied, fits := d.Checks[0].Action == Deny, MatchesKey(written, d.Checks[0].Key); denied != fits {
			t.Fatalf("key pattern %q, permission %q: the gate denies %t, MatchesKey %t", written, d.Checks[0].Key, denied, fits)
		}
	})
}
