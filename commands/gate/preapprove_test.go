package gate_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// headless builds the gate of a run without a terminal over a fresh workspace, with one layer
// of permission JSON written in the given layer.
func headless(t *testing.T, layer settings.Layer, perm string) *fixture {
	t.Helper()
	root := t.TempDir()
	set, err := toolset.New(toolset.Config{Root: root, ArtifactDir: filepath.Join(t.TempDir(), "art"), SessionID: "ses_pre"})
	if err != nil {
		t.Fatal(err)
	}
	var layers []settings.Raw
	if perm != "" {
		layers = append(layers, settings.Raw{Layer: layer, Source: "test", JSON: json.RawMessage(perm)})
	}
	p, err := permission.Resolve(layers, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{set: set, root: root, tools: map[string]tools.Tool{}}
	for _, tl := range set.Tools() {
		f.tools[tl.Declaration().Name] = tl
	}
	f.g = gate.New(gate.Config{Policy: p, Tools: set.Tools(), Workspace: root, Home: "/home/pre"})
	return f
}

// An explicit allow rule of a trusted layer whose pattern names the command pre-approves a
// destructive command, recorded as such; nothing else does, and nothing pre-approves a
// catastrophic command (docs/risk.md, "Pre-approval by a rule").
func TestPreapprovalByRule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		layer   settings.Layer
		perm    string
		command string
		// want: "pre" pre-approved, "ask" the risk gate asked (denied: no terminal),
		// "refused" catastrophic
		want string
	}{
		{"global names rm", settings.Global, `{"rules":{"shell":{"rm -rf build*":"allow"}}}`, "rm -rf build", "pre"},
		{"cli names rm", settings.CLI, `{"rules":{"shell":{"rm -rf build*":"allow"}}}`, "rm -rf build/out", "pre"},
		{"managed names git", settings.Managed, `{"rules":{"shell":{"git clean*":"allow"}}}`, "git clean -fdx", "pre"},
		{"explicit names find", settings.Explicit, `{"rules":{"shell":{"find *":"allow"}}}`, "find dist -delete", "pre"},
		{"builtin catch-all", "", ``, "rm -rf build", "ask"},
		{"bare * allow", settings.Global, `{"rules":{"shell":{"*":"allow"}}}`, "rm -rf build", "ask"},
		{"shell allow", settings.Global, `{"rules":{"shell":"allow"}}`, "rm -rf build", "ask"},
		{"project layer", settings.Project, `{"rules":{"shell":{"rm -rf build*":"allow"}}}`, "rm -rf build", "ask"},
		{"rule names another program", settings.Global, `{"rules":{"shell":{"git *":"allow"}}}`, "rm -rf build", "ask"},
		{"two commands", settings.Global, `{"rules":{"shell":{"rm -rf build*":"allow"}}}`, "rm -rf build; rm -rf src", "ask"},
		{"substitution", settings.Global, `{"rules":{"shell":{"rm -rf build*":"allow"}}}`, "rm -rf build $(echo src)", "ask"},
		{"quoted program", settings.Global, `{"rules":{"shell":{"*rm -rf build*":"allow"}}}`, "'rm' -rf build", "ask"},
		{"later ask wins", settings.Global, `{"rules":{"shell":{"rm -rf build*":"allow","rm *":"ask"}}}`, "rm -rf build", "ask"},
		{"deny wins", settings.Global, `{"rules":{"shell":{"rm -rf build*":"allow","rm -rf build/keep*":"deny"}}}`, "rm -rf build/keep", "deny"},
		{"root", settings.Global, `{"rules":{"shell":{"rm *":"allow"}}}`, "rm -rf /", "refused"},
		{"home", settings.Global, `{"rules":{"shell":{"rm *":"allow"}}}`, "rm -rf ~", "refused"},
		{"home spelled", settings.Global, `{"rules":{"shell":{"rm *":"allow"}}}`, "rm -rf /home/pre", "refused"},
		{"credentials", settings.Global, `{"rules":{"shell":{"rm *":"allow"}}}`, "rm -rf ~/.ssh", "refused"},
		{"parent of workspace", settings.CLI, `{"rules":{"shell":{"rm *":"allow"}}}`, "rm -rf /", "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := headless(t, tc.layer, tc.perm)
			_, v := f.check(t, "shell", shellArgs(tc.command))
			d := v.Decision
			switch tc.want {
			case "pre":
				if v.Block != nil || v.Ask != nil || d.Action != "allow" || d.Source != gate.SourceRule || d.Risk != "destructive" ||
					!strings.HasPrefix(d.Message, "destructive command pre-approved by rule shell: ") {
					t.Fatalf("%q not pre-approved: %+v block %+v", tc.command, d, v.Block)
				}
			case "ask":
				if v.Block == nil || d.Source != gate.SourceNoTerminal || !strings.Contains(d.Message, "destructive command") {
					t.Fatalf("%q: want the risk gate's ask (denied without a terminal), got %+v block %+v", tc.command, d, v.Block)
				}
			case "deny":
				if v.Block == nil || d.Source != gate.SourceRule || d.Action != "deny" {
					t.Fatalf("%q: want the rule's deny, got %+v", tc.command, d)
				}
			case "refused":
				if v.Block == nil || d.Source != gate.SourceRisk || d.Risk != "catastrophic" {
					t.Fatalf("%q: want the catastrophic refusal, got %+v", tc.command, d)
				}
			}
		})
	}
}

// Strict mode asks for a pre-approvable command too, and its ask offers no always; the ask
// names the gate that asked.
func TestAskNamesItsGate(t *testing.T) {
	for _, tc := range []struct {
		perm, command, gate string
		always              bool
	}{
		{`{"mode":"strict","rules":{"shell":{"rm -rf build*":"allow"}}}`, "rm -rf build", events.AskGateRisk, false},
		{`{"mode":"strict"}`, "ls", events.AskGateStrict, false},
		{``, "rm -rf build", events.AskGateRisk, false},
		{`{"rules":{"shell":{"*":"allow","ls *":"ask"}}}`, "ls -la", events.AskGateRule, true},
	} {
		f := newFixture(t, tc.perm, "")
		_, v := f.check(t, "shell", shellArgs(tc.command))
		if v.Ask == nil {
			t.Fatalf("%s %q did not ask: %+v", tc.perm, tc.command, v.Decision)
		}
		if v.Ask.Gate != tc.gate || v.Ask.Reason == "" || (v.Ask.Always != "") != tc.always || (len(v.Grants) > 0) != tc.always {
			t.Errorf("%s %q: ask %+v grants %v, want gate %s always %v", tc.perm, tc.command, *v.Ask, v.Grants, tc.gate, tc.always)
		}
		if tc.gate != events.AskGateRule && strings.Contains(v.Ask.Reason, "says ask") {
			t.Errorf("%s %q: the reason cites a rule that does not ask: %s", tc.perm, tc.command, v.Ask.Reason)
		}
	}
}
