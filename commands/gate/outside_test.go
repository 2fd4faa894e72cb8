package gate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// A shell command naming a path outside the workspace needs external_directory for its
// directory, as the file tools' paths do (seeds 004: one grant, one spelling, covers the
// shell, file and search tools; docs/permissions.md, "Shell commands outside the
// workspace"). The built-in policy allows everything but external_directory, which asks.
func TestShellOutsideTheWorkspaceAsks(t *testing.T) {
	p, err := permission.Resolve(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	shell := &countTool{name: tools.NameShell}
	newGate := func(interactive bool) *gate.Gate {
		return gate.New(gate.Config{Policy: p, Tools: []tools.Tool{shell}, Workspace: "/home/u/proj", Home: "/home/u", Interactive: interactive})
	}
	call := func(cmd string) tools.Call {
		args, _ := json.Marshal(map[string]string{"cmd": cmd})
		return tools.Call{Call: model.ToolCall{ID: "c1", Name: tools.NameShell, Arguments: string(args)}, Decl: shell.Declaration(),
			Parsed: tools.Parsed{Args: cmd}, Policy: shell.Declaration().Policy}
	}
	g := newGate(true)
	for _, tc := range []struct {
		cmd, ask string // ask: the external_directory resource asked for, "" when the call runs unasked
		always   bool
	}{
		{"cat ~/notes.txt", "/home/u/*", true},
		{"head -1 /etc/passwd", "/etc/*", true},
		{"cat ../other/a.go", "/home/u/other/*", true},
		{"cd ..; ls", "/home/*", true}, // /home/u does not exist here: a path that is not a directory is granted by its parent
		{"grep -r key ~/.config", "/home/u/*", true},
		{"wc -l < /etc/hosts", "/etc/*", true},
		{`cat "$(cat where.txt)/x"`, "…/x", false},
		{"python3 -V", "", false},
		{"/usr/bin/env python3 -c 'print(1)'", "", false},
		{"cat src/a.go ./b.go", "", false},
		{"ls /usr/share/doc > /dev/null 2>&1", "", false},
		{"mktemp -d /tmp/x.XXXX", "", false},
		{"echo $PATH", "", false},
	} {
		v := g.Check(call(tc.cmd))
		switch {
		case tc.ask == "" && (v.Ask != nil || v.Block != nil):
			t.Errorf("%q asked or was refused: %+v", tc.cmd, v.Decision)
		case tc.ask != "" && (v.Ask == nil || v.Ask.Key != permission.ExternalDirectory || v.Ask.Resource != tc.ask):
			t.Errorf("%q: ask %+v, want external_directory %s", tc.cmd, v.Ask, tc.ask)
		case tc.ask != "" && (len(v.Grants) > 0) != tc.always:
			t.Errorf("%q: an always would save %+v", tc.cmd, v.Grants)
		}
	}

	// A standing grant for one directory does not let a second through: the ask is about
	// the one not approved, and an always saves it.
	g.Fold(events.PermissionGranted{SessionID: "s", Grants: []events.StandingGrant{{Permission: permission.ExternalDirectory, Pattern: "/home/u/*"}}})
	if v := g.Check(call("cat ~/a.txt")); v.Ask != nil || v.Block != nil {
		t.Errorf("a granted directory asked again: %+v", v.Decision)
	}
	v := g.Check(call("cat ~/a.txt /etc/hosts"))
	if v.Ask == nil || v.Ask.Resource != "/etc/*" {
		t.Fatalf("two directories, one granted: ask %+v", v.Ask)
	}

	// Without a terminal the ask is a denial that says which rule to add.
	v = newGate(false).Check(call("cat ~/notes.txt"))
	if v.Block == nil || !strings.Contains(v.Block.Fix, "external_directory") {
		t.Fatalf("no terminal: %+v", v.Block)
	}
}

// A path inside the workspace by its spelling that a symbolic link leads out of is outside:
// `cat link/secret` with link -> a directory outside asks for that directory.
func TestShellThroughALinkOutsideAsks(t *testing.T) {
	outside, err := os.MkdirTemp("/var/tmp", "zuno-gate-") // not /tmp: a system location
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	ws := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	p, err := permission.Resolve(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	shell := &countTool{name: tools.NameShell}
	g := gate.New(gate.Config{Policy: p, Tools: []tools.Tool{shell}, Workspace: ws, Home: "/home/u", Interactive: true})
	for cmd, want := range map[string]string{"cat link/secret": outside + "/*", "cat ./link": outside + "/*", "cat a.txt": ""} {
		v := g.Check(tools.Call{Call: model.ToolCall{ID: "c1", Name: tools.NameShell}, Decl: shell.Declaration(),
			Parsed: tools.Parsed{Args: cmd}, Policy: shell.Declaration().Policy})
		got := ""
		if v.Ask != nil {
			got = v.Ask.Resource
		}
		if got != want {
			t.Errorf("%q: asks for %q, want %q", cmd, got, want)
		}
	}
}

// glob and grep outside the workspace ask for external_directory on the directory searched
// (not a path key, so the gate adds the check); once granted "always", the same search runs
// beneath the granted directory and finds, and another directory still asks.
func TestSearchOutsideAsksThenFinds(t *testing.T) {
	f := newFixture(t, "", "")
	out, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "x.txt"), []byte("needle here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := `{"pattern":"needle","path":"` + out + `"}`
	c, v := f.check(t, "grep", args)
	if v.Ask == nil || v.Ask.Key != permission.ExternalDirectory || v.Ask.Resource != out+"/*" {
		t.Fatalf("grep outside: ask %+v, want external_directory %s/*", v.Ask, out)
	}
	v = f.answer(c, v, "always")
	res := f.tools["grep"].Execute(context.Background(), tools.Invocation{SessionID: "ses_review", CallID: c.Call.ID,
		ExternalRoot: v.ExternalRoot, Parsed: c.Parsed})
	if res.Outcome != tools.OutcomeCompleted || !strings.Contains(res.Output, "needle here") {
		t.Fatalf("grep outside after the grant: %s %s", res.Outcome, res.Output)
	}
	for _, a := range []string{`{"pattern":"needle","path":"` + out + `"}`, `{"pattern":"*.txt","path":"` + out + `"}`} {
		name := "grep"
		if strings.Contains(a, "*.txt") {
			name = "glob"
		}
		if _, v := f.check(t, name, a); v.Ask != nil || v.Block != nil {
			t.Errorf("%s in the granted directory asked again: %+v", name, v.Decision)
		}
	}
	if _, v := f.check(t, "glob", `{"pattern":"*","path":"`+other+`"}`); v.Ask == nil || v.Ask.Resource != other+"/*" {
		t.Fatalf("glob in another directory: ask %+v", v.Ask)
	}
}

// Seeds 004: "external_directory 授权在所有地方只有一种拼法：目录加上 /*……因此一次常驻授权同时覆盖
// shell 工具与文件、搜索工具" (one spelling everywhere, so one standing grant covers the shell,
// file and search tools). Each row answers "always" to one tool's ask for a directory
// outside, then every tool's call in that directory runs unasked.
func TestOneGrantCoversShellFileAndSearch(t *testing.T) {
	calls := func(dir string) map[string]string {
		return map[string]string{
			"read":  `{"path":"` + dir + `/x.txt"}`,
			"grep":  `{"pattern":"x","path":"` + dir + `"}`,
			"glob":  `{"pattern":"*","path":"` + dir + `"}`,
			"shell": `{"command":"cat ` + dir + `/x.txt"}`,
		}
	}
	for _, first := range []string{"read", "grep", "glob", "shell"} {
		t.Run(first, func(t *testing.T) {
			dir, err := os.MkdirTemp("/var/tmp", "zuno-grant-") // not /tmp, which the shell check leaves quiet
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, "x.txt"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, "", "")
			c, v := f.check(t, first, calls(dir)[first])
			if v.Ask == nil || v.Ask.Key != permission.ExternalDirectory || v.Ask.Resource != dir+"/*" {
				t.Fatalf("%s: ask %+v, want external_directory %s/*", first, v.Ask, dir)
			}
			f.answer(c, v, "always")
			for name, args := range calls(dir) {
				if _, v := f.check(t, name, args); v.Ask != nil || v.Block != nil {
					t.Errorf("after an always to %s, %s asked or was refused: %+v", first, name, v.Decision)
				}
			}
		})
	}
}
