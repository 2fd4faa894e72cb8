package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	adconfig "github.com/zuno-run/zuno/adapters/config"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// hintCalls are one call per permission key the gate asks under: the tool, its arguments and
// the resource the asking rule is written for.
var hintCalls = []struct{ key, tool, args string }{
	{"read", "read", `{"path":"a.txt"}`},
	{"edit", "write", `{"path":"a.txt","content":"x"}`},
	{"glob", "glob", `{"pattern":"*","path":"."}`},
	{"grep", "grep", `{"pattern":"x","path":"."}`},
	{"shell", "shell", `{"command":"make test"}`},
	{"external_directory", "read", `{"path":"/etc/hosts"}`},
}

var (
	hintWhere = regexp.MustCompile(`(?:after that rule in the|in the) ([a-z]+) layer(?: or (?:in )?a layer above it)?`)
	hintAbove = regexp.MustCompile(`\(([a-z, ]+)\)$`)
)

// TestHintNamesLayersThatAcceptTheRule: whatever layer asked (the builtin default, the global
// file, the project file), every layer the refusal's hint names (Decision.Message) and the one
// the no-terminal denial names (the gate's fix) accepts the rule it says to add — loaded
// through the real configuration loader — and the rule, added there, allows the call. The
// project layer may not allow external_directory (docs/config.md, "Trust"); the CLI layer's
// rule is zuno run's --allow (docs/permissions.md, "Per-run flags").
func TestHintNamesLayersThatAcceptTheRule(t *testing.T) {
	named := 0
	for _, hc := range hintCalls {
		for _, asker := range []string{"builtin", "global", "project"} {
			if asker == "builtin" && hc.key != permission.ExternalDirectory {
				continue // only external_directory asks by default
			}
			t.Run(hc.key+"/"+asker, func(t *testing.T) {
				d, fix := hintDecision(t, hc.tool, hc.args, hintWorld(t, hc.key, asker, ""))
				if d.Action != permission.Ask || d.Key != hc.key {
					t.Fatalf("the %s layer's ask: got %s under %s", asker, d.Action, d.Key)
				}
				layers := hintLayers(t, d.Message())
				if m := hintWhere.FindStringSubmatch(fix); m != nil && strings.Contains(fix, "add permission.rules."+hc.key) {
					layers = append(layers, m[1])
				} else {
					t.Fatalf("the no-terminal fix names no layer: %s", fix)
				}
				for _, l := range layers {
					got, _ := hintDecision(t, hc.tool, hc.args, hintWorld(t, hc.key, asker, l, d.Resource))
					if got.Action != permission.Allow {
						t.Errorf("the rule added in the %s layer, as the hint says, leaves %s: %s", l, got.Action, got.Message())
					}
					named++
				}
			})
		}
	}
	if named < 20 {
		t.Fatalf("%d layers named in all; the hints were not read", named)
	}
}

// hintLayers are the layers a decision's message names for the rule to add.
func hintLayers(t *testing.T, msg string) []string {
	t.Helper()
	i := strings.Index(msg, "add permission.rules.")
	if i < 0 {
		t.Fatalf("the message names no rule to add: %s", msg)
	}
	msg = msg[i:]
	var out []string
	if m := hintWhere.FindStringSubmatch(msg); m != nil {
		out = append(out, m[1])
	}
	m := hintAbove.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("the message names no layers above: %s", msg)
	}
	return append(out, strings.Split(m[1], ", ")...)
}

// hintWorld writes the configuration: the asking rule in the asker's layer (none for the
// builtin default) and, when addTo is a layer, the allow rule for resource added there after
// anything the layer already says. It returns the loader's options for the workspace.
func hintWorld(t *testing.T, key, asker, addTo string, resource ...string) adconfig.Options {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	files := map[string]string{"global": filepath.Join(dir, "cfg", "zuno.json"), "project": filepath.Join(repo, "zuno.json"),
		"explicit": filepath.Join(dir, "explicit.json"), "managed": filepath.Join(dir, "managed", "managed.json")}
	rules := map[string][]string{}
	if asker != "builtin" {
		rules[asker] = append(rules[asker], `"*": "ask"`)
	}
	var cliRules json.RawMessage
	if addTo == "cli" { // zuno run --allow KEY:RESOURCE
		r, err := approvalRules([]string{key + ":" + resource[0]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cliRules = r
	} else if addTo != "" {
		if files[addTo] == "" {
			t.Fatalf("the hint names the %s layer, which holds no permission rules", addTo)
		}
		r, _ := json.Marshal(resource[0])
		rules[addTo] = append(rules[addTo], string(r)+`: "allow"`)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for layer, rs := range rules {
		k, _ := json.Marshal(key)
		text := `{"permission": {"rules": {` + string(k) + `: {` + strings.Join(rs, ", ") + `}}}}`
		if err := os.MkdirAll(filepath.Dir(files[layer]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(files[layer], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := adconfig.Options{Cwd: repo, GlobalDir: filepath.Dir(files["global"]), ManagedDir: filepath.Dir(files["managed"]),
		Getenv: func(string) string { return "" }}
	if _, ok := rules["explicit"]; ok {
		o.Explicit, o.ExplicitFrom = files["explicit"], "--config"
	}
	if cliRules != nil {
		o.AddCLI("--allow/--deny", "permission.rules", cliRules)
	}
	return o
}

// hintDecision loads the configuration with the real loader, resolves the policy and decides
// the call twice: the policy's decision, and the fix of the gate's denial with no terminal.
func hintDecision(t *testing.T, tool, args string, o adconfig.Options) (permission.Decision, string) {
	t.Helper()
	cfg, err := loadConfigFrom(o)
	if err != nil {
		t.Fatalf("the loader refuses the configuration: %v", err)
	}
	s := cfg.settings()
	p, err := permission.Resolve(s.Permission, s.ToolSwitches)
	if err != nil {
		t.Fatal(err)
	}
	set, err := toolset.New(toolset.Config{Root: o.Cwd, ArtifactDir: filepath.Join(t.TempDir(), "art"), SessionID: "ses_hint"})
	if err != nil {
		t.Fatal(err)
	}
	var tl tools.Tool
	for _, x := range set.Tools() {
		if x.Declaration().Name == tool {
			tl = x
		}
	}
	parsed, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	decl := tl.Declaration()
	c := tools.Call{Call: model.ToolCall{ID: "h1", Name: tool, Arguments: args}, Decl: decl, Parsed: parsed, Policy: decl.Policy}
	g := gate.New(gate.Config{Policy: p, Tools: set.Tools(), Workspace: o.Cwd, Home: "/home/hint", Interactive: false})
	fix := ""
	if v := g.Check(c); v.Block != nil {
		fix = v.Block.Fix
	}
	return g.Explain(tool, resourceOf(args)).Decision, fix
}

// resourceOf is the path or command of a call's arguments.
func resourceOf(args string) string {
	var a struct{ Path, Command string }
	_ = json.Unmarshal([]byte(args), &a)
	if a.Command != "" {
		return a.Command
	}
	return a.Path
}
