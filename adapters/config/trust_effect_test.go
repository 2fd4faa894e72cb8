package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
)

// outsideCalls are file-tool calls outside the workspace: each needs external_directory
// besides its own permission (docs/permissions.md), which the builtin defaults ask for.
var outsideCalls = []permission.Request{
	{Tool: "read", Resource: "/h/.bashrc", Workspace: "/w", Home: "/h"},
	{Tool: "write", Resource: "/etc/cron.d/x", Workspace: "/w", Home: "/h", SideEffect: true},
	{Tool: "list", Resource: "../other", Workspace: "/w/repo", Home: "/h"},
}

// gateAllowsOutside reports whether the permission gate itself (permission.Resolve and
// Decide, with the builtin defaults below the project layer) lets a call outside the
// workspace through external_directory without asking: the effect the project layer may not
// have. ok is false when the gate refuses the configuration outright.
func gateAllowsOutside(t testing.TB, doc string) (allowed, ok bool) {
	t.Helper()
	var v struct{ Permission, Tools json.RawMessage }
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	raw := func(j json.RawMessage) []settings.Raw {
		return []settings.Raw{{Layer: settings.Project, Source: "zuno.json", JSON: j}}
	}
	p, err := permission.Resolve(raw(v.Permission), raw(v.Tools))
	if err != nil {
		return false, false
	}
	for _, req := range outsideCalls {
		for _, c := range p.Decide(req).Checks {
			if c.Key == permission.ExternalDirectory && c.Action == permission.Allow {
				return true, true
			}
		}
	}
	return false, true
}

// checkProject runs the trust check Load runs on one project file holding doc.
func checkProject(t testing.TB, doc string) error {
	t.Helper()
	n, text, err := ParseJSONC("zuno.json", []byte(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	d := Document{Layer: settings.Project, Source: "zuno.json", Node: n, text: text}
	return checkTrust([]Document{d}, Paths{GlobalDir: "/g"})
}

// The project-layer rule table judged by effect (issue 25, "Trust of the project layer by
// effect"): for each key, what the gate would make of it, and what the trust check says. Every
// rule that lets the gate allow outside the workspace is refused; a refused rule is one the
// gate's matcher fits to external_directory, even where today's merge order happens to
// neutralise it ("*" lands in the builtin catch-all's place, before external_directory).
func TestProjectRulesByTheGatesEffect(t *testing.T) {
	for _, tc := range []struct {
		doc             string
		loosens, refuse bool
	}{
		{`{"permission": {"rules": {"external_directory": "allow"}}}`, true, true},
		{`{"permission": {"rules": {"external*": "allow"}}}`, true, true},
		{`{"permission": {"rules": {"*directory": "allow"}}}`, true, true},
		{`{"permission": {"rules": {"e*_*y": "allow"}}}`, true, true},
		{`{"permission": {"rules": {"external_directory *": "allow"}}}`, true, true},
		{`{"permission": {"rules": {"**": {"/*": "allow"}}}}`, true, true},
		{`{"permission": {"rules": {"ext*": {"/etc/*": "allow", "/h/*": "allow", "*": "allow"}}}}`, true, true},
		{`{"tools": {"external_directory": true}}`, true, true},
		{`{"tools": {"*_directory": true}}`, true, true},
		{`{"permission": {"rules": {"*": "allow"}}}`, false, true},
		{`{"tools": {"*": true}}`, false, true},
		// Spellings the gate compares exactly and so never applies: refused all the same, since
		// keys of this check are case-folded (a lenient reader downstream would accept them).
		{`{"permission": {"rules": {"EXTERNAL*": "allow"}}}`, false, true},
		{`{"permission": {"rules": {"external-directory": "allow"}}}`, false, true},
		// What the gate's matcher does not fit to external_directory loads, and does not loosen.
		{`{"permission": {"rules": {"?xternal_directory": "allow"}}}`, false, false},
		{`{"permission": {"rules": {"[e]xternal_directory": "allow"}}}`, false, false},
		{`{"permission": {"rules": {"external_director": "allow", "xexternal_directory": "allow"}}}`, false, false},
		{`{"permission": {"rules": {"external*": "ask", "*": "deny"}}}`, false, false},
		{`{"permission": {"rules": {"read": {"/h/*": "allow"}, "shell": "allow"}}}`, false, false},
		{`{"tools": {"external_directory": false, "read": true}}`, false, false},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			loosens, ok := gateAllowsOutside(t, tc.doc)
			if !ok || loosens != tc.loosens {
				t.Fatalf("the gate allows outside: %t (configuration accepted: %t), want %t", loosens, ok, tc.loosens)
			}
			err := checkProject(t, tc.doc)
			if refused := err != nil; refused != tc.refuse {
				t.Fatalf("refused %t, want %t: %v", refused, tc.refuse, err)
			}
			if err != nil && codeOf(t, err).Code() != CodeUntrusted {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// FuzzProjectRuleKey: for any rule key (and pattern and action) written in the project
// layer, as a permission rule or a tools switch, the trust check refuses it exactly when the
// gate's matcher (permission.MatchesKey) fits the key, as written or case-folded, to
// external_directory and the rule allows; the refusal is typed and names the key. And
// whatever the check lets through, the gate never allows a call outside the workspace with.
func FuzzProjectRuleKey(f *testing.F) {
	for _, s := range []struct {
		key, pattern, action string
		whole, tools         bool
	}{
		{"external*", "*", "allow", true, false}, {"*directory", "/h/*", "allow", false, false},
		{"*", "*", "allow", true, false}, {"?xternal_directory", "*", "allow", true, false},
		{"EXTERNAL_DIRECTORY", "~/*", "allow", false, false}, {"external_directory", "", "", true, true},
		{"e*y *", "*", "Allow ", true, false}, {"shell", "git *", "allow", false, false}, {"", "*", "allow", true, false},
	} {
		f.Add(s.key, s.pattern, s.action, s.whole, s.tools)
	}
	f.Fuzz(func(t *testing.T, key, pattern, action string, whole, tools bool) {
		doc, key := projectRuleDoc(key, pattern, action, whole, tools)
		reaches := reachesExternal(key)
		allows := strings.ToLower(strings.TrimSpace(action)) == "allow"
		field := "permission.rules." + key
		if tools {
			reaches, allows, field = reachesExternal(permission.KeyFor(key)), whole, "tools."+key
		}
		err := checkProject(t, doc)
		if reaches && allows {
			var e *Error
			if !errors.As(err, &e) || e.Code() != CodeUntrusted || e.Key != field || !strings.Contains(e.Error(), "/g/zuno.json") {
				t.Fatalf("%s: want config_untrusted naming %s, got %v", doc, field, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: refused, but the gate's matcher does not fit %q to external_directory or the rule does not allow: %v", doc, key, err)
		}
		if loosens, _ := gateAllowsOutside(t, doc); loosens {
			t.Fatalf("%s: accepted, and the gate allows a call outside the workspace", doc)
		}
	})
}

// projectRuleDoc is a project file with one rule (or tools switch), and the key as decoded.
func projectRuleDoc(key, pattern, action string, whole, tools bool) (string, string) {
	var v any
	switch {
	case tools:
		v = map[string]any{"tools": map[string]bool{key: whole}}
	case whole:
		v = map[string]any{"permission": map[string]any{"rules": map[string]string{key: action}}}
	default:
		v = map[string]any{"permission": map[string]any{"rules": map[string]any{key: map[string]string{pattern: action}}}}
	}
	b, _ := json.Marshal(v)
	k, _ := json.Marshal(key)
	var decoded string
	_ = json.Unmarshal(k, &decoded) // invalid UTF-8 reads back as U+FFFD, as the file would
	return string(b), decoded
}

// reachesExternal is the documented rule (docs/config.md, "Trust"): the gate's matcher fits
// the key, as written or lower-cased with '-' read as '_', to external_directory.
func reachesExternal(key string) bool {
	folded := strings.ReplaceAll(strings.ToLower(key), "-", "_")
	return permission.MatchesKey(key, permission.ExternalDirectory) || permission.MatchesKey(folded, permission.ExternalDirectory)
}
