package gate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// The risk gate reads a shell command from where it starts (issue 25, vector 9): the
// workspace root, or the call's workdir with its symbolic links resolved as the shell tool
// resolves them, and protects Zuno's own data the host passes in. Under allow_all only a
// catastrophic verdict blocks, so a block here is the risk gate's.
func TestRiskGateReadsFromTheWorkingDirectory(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "proj")
	data := filepath.Join(home, ".local", "share", "zuno")
	for _, d := range []string{filepath.Join(ws, "a", "b"), filepath.Join(ws, "s"), filepath.Join(ws, "deep", "x"), data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// deep/x/y is three names deep but lands one level under the workspace.
	if err := os.Symlink(filepath.Join(ws, "s"), filepath.Join(ws, "deep", "x", "y")); err != nil {
		t.Fatal(err)
	}
	set, err := toolset.New(toolset.Config{Root: ws, ArtifactDir: filepath.Join(t.TempDir(), "art"), SessionID: "ses_wd"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := permission.Resolve(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := gate.New(gate.Config{Policy: p.WithMode(permission.AllowAll, "test"), Tools: set.Tools(), Workspace: ws,
		Home: home, Zuno: []string{data}, Interactive: true})
	var shell tools.Tool
	for _, tl := range set.Tools() {
		if tl.Declaration().Name == tools.NameShell {
			shell = tl
		}
	}
	for _, tc := range []struct {
		command, workdir string
		blocked          bool
	}{
		{"rm -rf ../*", "", true},
		{"rm -rf ..", "", true},
		{"cd ..; rm -rf *", "", true},
		{`rm -rf "$(cd ..; pwd)"`, "", true},
		{"rm -rf ./build", "", false},
		{"rm -rf ../../..", "a/b", true},
		{"rm -rf ../..", "a/b", false},
		{"rm -rf ../..", "deep/x/y", true}, // from s, two levels up is the home directory
		{"rm -rf ..", "deep/x/y", false},
		{"rm -rf " + data, "", true},
		{"rm -f ../.local/share/zuno/zuno.db", "", true},
	} {
		a := map[string]string{"command": tc.command}
		if tc.workdir != "" {
			a["workdir"] = tc.workdir
		}
		args, _ := json.Marshal(a)
		parsed, err := shell.Validate(args)
		if err != nil {
			t.Fatal(err)
		}
		d := shell.Declaration()
		v := g.Check(tools.Call{Call: model.ToolCall{ID: "c1", Name: tools.NameShell, Arguments: string(args)}, Decl: d, Parsed: parsed, Policy: d.Policy})
		if got := v.Block != nil; got != tc.blocked {
			t.Errorf("%q in %q: blocked %v, want %v (%+v)", tc.command, tc.workdir, got, tc.blocked, v.Decision)
		}
	}
}
