package gate_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
)

// explainWorlds are the configurations the generated calls run under: rules in the global and
// the project layer (the project carving exceptions out of the global ones), in each mode.
var explainWorlds = []struct{ global, project string }{
	{`{"mode":"standard"}`, `{}`},
	{`{"mode":"standard","rules":{"shell":{"*":"ask","git *":"allow","git push*":"deny"},"read":{"*secret*":"deny"},"external_directory":{"/etc/*":"allow"}}}`,
		`{"rules":{"shell":{"git push --dry-run*":"allow"},"edit":{"*":"ask"},"external_directory":{"/usr/*":"deny"}}}`},
	{`{"mode":"strict","rules":{"external_directory":{"*":"allow"},"grep":"ask"}}`,
		`{"rules":{"read":{"*.env":"deny"},"glob":{"*":"deny"}}}`},
	{`{"mode":"allow_all","rules":{"shell":{"make*":"deny"},"external_directory":{"/usr/*":"deny"}}}`,
		`{"rules":{"edit":{"*.go":"ask"}}}`},
}

// Resources the generated calls name: paths inside and outside the workspace, and commands
// (ordinary, destructive, catastrophic, and one that reads outside).
var (
	explainPaths    = []string{"a.txt", "src/main.go", ".env", "secret/k", "/etc/hosts", "/usr/share/dict/words", "../sibling/f.txt", "/tmp/elsewhere/x"}
	explainCommands = []string{"git status", "git push origin main", "git push --dry-run", "ls -la", "make test", "rm -rf build", "rm -rf /", "cat /etc/passwd"}
)

// TestExplainAgreesWithCheck: zuno debug permissions (Gate.Explain) and the gate (Check) give
// the same decision on 240 calls generated from a fixed seed across the built-in agents, the
// tools, their resources and the configurations above, built as a run builds its gate: the
// configured layers resolved, the agent's contract applied, the real tool set's subjects.
func TestExplainAgreesWithCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	agents := agent.Builtins()
	toolNames := []string{tools.NameRead, tools.NameWrite, tools.NameGlob, tools.NameGrep, tools.NameShell}
	compared, external := 0, 0
	for i := 0; i < 240; i++ {
		w := explainWorlds[rng.IntN(len(explainWorlds))]
		ag := agents[rng.IntN(len(agents))]
		name := toolNames[rng.IntN(len(toolNames))]
		resource := explainCommands[rng.IntN(len(explainCommands))]
		if name != tools.NameShell {
			resource = explainPaths[rng.IntN(len(explainPaths))]
		}
		f := explainFixture(t, w.global, w.project, ag)
		c := f.call(t, name, argsFor(name, resource))
		v := f.g.Check(c)
		if v.Block != nil && v.Block.Kind == tools.BlockInvalidArguments {
			t.Fatalf("%s %s %q: the gate refused the call as invalid: %s", ag.Name, name, resource, v.Block.Message)
		}
		ev := f.g.Explain(name, resource)
		row := fmt.Sprintf("call %d: agent %s, %s %q, world %s / %s", i, ag.Name, name, resource, w.global, w.project)
		if ev.Record != v.Decision {
			t.Errorf("%s:\n  gate    %+v\n  explain %+v", row, v.Decision, ev.Record)
		}
		compared++
		if v.Decision.Key != permission.ExternalDirectory {
			continue
		}
		// The grant asked about by name: the same check, the same rule.
		external++
		bare := f.g.Explain(permission.ExternalDirectory, v.Decision.Resource).Record
		if bare.Resource != v.Decision.Resource || bare.RuleAction != v.Decision.RuleAction || bare.Rule != v.Decision.Rule || bare.Layer != v.Decision.Layer {
			t.Errorf("%s: external_directory by name\n  gate    %+v\n  explain %+v", row, v.Decision, bare)
		}
	}
	t.Logf("compared %d calls, %d governed by external_directory", compared, external)
	if compared < 200 || external < 20 {
		t.Fatalf("compared %d calls, %d of them governed by external_directory; want at least 200 and 20", compared, external)
	}
}

// explainFixture is the gate of one interactive run of the agent over a fresh workspace.
func explainFixture(t *testing.T, global, project string, ag agent.Agent) *fixture {
	t.Helper()
	root := t.TempDir()
	set, err := toolset.New(toolset.Config{Root: root, ArtifactDir: filepath.Join(t.TempDir(), "art"), SessionID: "ses_explain"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := permission.Resolve([]settings.Raw{
		{Layer: settings.Global, Source: "global.json", JSON: json.RawMessage(global)},
		{Layer: settings.Project, Source: "zuno.json", JSON: json.RawMessage(project)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithContract(permission.NewContract(ag.Name, ag.Tools))
	f := &fixture{set: set, root: root, tools: map[string]tools.Tool{}}
	for _, tl := range set.Tools() {
		f.tools[tl.Declaration().Name] = tl
	}
	f.g = gate.New(gate.Config{Policy: p, Tools: set.Tools(), Workspace: root, Home: "/home/explain", Interactive: true})
	return f
}

func argsFor(name, resource string) string {
	var args map[string]string
	switch name {
	case tools.NameShell:
		args = map[string]string{"command": resource}
	case tools.NameWrite:
		args = map[string]string{"path": resource, "content": "x"}
	case tools.NameGlob:
		args = map[string]string{"pattern": "*", "path": resource}
	case tools.NameGrep:
		args = map[string]string{"pattern": "x", "path": resource}
	default:
		args = map[string]string{"path": resource}
	}
	b, _ := json.Marshal(args)
	return string(b)
}
