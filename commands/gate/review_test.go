package gate_test

// Security review of the gate (helper/review): each test is an attack on the permission gate
// with the real tool set over a real workspace. A test fails when the attack gets through.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

type fixture struct {
	g     *gate.Gate
	set   *toolset.Set
	root  string
	tools map[string]tools.Tool
	seq   int
}

// newFixture builds the gate of one interactive run over a fresh workspace, with the global
// layer's permission JSON (or none) and an optional mode override.
func newFixture(t *testing.T, global string, mode permission.Mode) *fixture {
	t.Helper()
	root := t.TempDir()
	set, err := toolset.New(toolset.Config{Root: root, ArtifactDir: filepath.Join(t.TempDir(), "art"), SessionID: "ses_review"})
	if err != nil {
		t.Fatal(err)
	}
	var layers []settings.Raw
	if global != "" {
		layers = append(layers, settings.Raw{Layer: settings.Global, Source: "review", JSON: json.RawMessage(global)})
	}
	p, err := permission.Resolve(layers, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mode != "" {
		p = p.WithMode(mode, "review")
	}
	f := &fixture{set: set, root: root, tools: map[string]tools.Tool{}}
	for _, tl := range set.Tools() {
		f.tools[tl.Declaration().Name] = tl
	}
	f.g = gate.New(gate.Config{Policy: p, Tools: set.Tools(), Workspace: root,
		Home: "/home/review", Interactive: true})
	return f
}

func (f *fixture) call(t *testing.T, name, args string) tools.Call {
	t.Helper()
	tl := f.tools[name]
	if tl == nil {
		t.Fatalf("no tool %s", name)
	}
	parsed, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("validate %s %s: %v", name, args, err)
	}
	f.seq++
	d := tl.Declaration()
	return tools.Call{Index: 0, Call: model.ToolCall{ID: "c" + string(rune('0'+f.seq)), Name: name, Arguments: args},
		Decl: d, Parsed: parsed, Policy: d.Policy}
}

func (f *fixture) check(t *testing.T, name, args string) (tools.Call, turn.Verdict) {
	t.Helper()
	c := f.call(t, name, args)
	return c, f.g.Check(c)
}

// answer applies a reply as the driver does: the grants an always installs are recorded and
// folded back into the gate.
func (f *fixture) answer(c tools.Call, v turn.Verdict, reply string) turn.Verdict {
	v = f.g.Answer(c, v, reply)
	if len(v.Grants) > 0 {
		f.g.Fold(events.PermissionGranted{CallID: c.Call.ID, Grants: v.Grants})
	}
	return v
}

func shellArgs(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

// Attack: a standing "always" saved for one harmless command (pattern "prog sub *") approves a
// destructive command of the same program and subcommand without asking. The risk gate says a
// destructive command asks "only once (no standing approval covers it)", but when the rule
// itself already asks, the risk branch is skipped and the standing approval answers it.
func TestReviewStandingAlwaysDoesNotCoverDestructive(t *testing.T) {
	cases := []struct{ approved, attack string }{
		{"git push origin main", "git push --force origin main"},
		{"git reset HEAD~1", "git reset --hard HEAD~20"},
		{"git clean -n", "git clean -fdx"},                 // pattern "git clean *"
		{"rm -f build.log", "rm -rf ./src"},                // pattern "rm *"
		{"git checkout main", "git checkout -- ."},         // pattern "git checkout *"
		{"git branch feature", "git branch -D main"},       // pattern "git branch *"
		{"find . -name x", "find . -delete"},               // pattern "find . *"
		{"truncate -s 1M disk.img", "truncate -s 0 src/a"}, // pattern "truncate *"
	}
	for _, tc := range cases {
		t.Run(tc.attack, func(t *testing.T) {
			f := newFixture(t, `{"rules":{"shell":"ask"}}`, "")
			c, v := f.check(t, "shell", shellArgs(tc.approved))
			if v.Ask == nil {
				t.Fatalf("the approved command did not ask: %+v", v.Decision)
			}
			f.answer(c, v, answers.ReplyAlways)
			_, v = f.check(t, "shell", shellArgs(tc.attack))
			if v.Ask == nil {
				t.Errorf("BROKEN: %q ran without asking after always for %q (source %s, action %s)",
					tc.attack, tc.approved, v.Decision.Source, v.Decision.Action)
			}
		})
	}
}

// Attack: answering "always" to a destructive command saves a pattern that later approves
// other destructive commands of the same kind.
func TestReviewAlwaysOnDestructiveSavesNothing(t *testing.T) {
	f := newFixture(t, `{"rules":{"shell":"ask"}}`, "")
	c, v := f.check(t, "shell", shellArgs("git push --force origin main"))
	if v.Ask == nil {
		t.Fatalf("did not ask: %+v", v.Decision)
	}
	if v.Ask.Always != "" {
		t.Errorf("BROKEN: a destructive command offers a savable always pattern %q", v.Ask.Always)
	}
	f.answer(c, v, answers.ReplyAlways)
	_, v = f.check(t, "shell", shellArgs("git push --force origin other"))
	if v.Ask == nil {
		t.Errorf("BROKEN: a second destructive push ran on the standing always (source %s)", v.Decision.Source)
	}
}

// Held: with the builtin "*": allow, a destructive command asks (risk gate) and always saves
// nothing that covers a later destructive one.
func TestReviewRiskAskWithAllowRule(t *testing.T) {
	f := newFixture(t, "", "")
	c, v := f.check(t, "shell", shellArgs("rm -rf ./build"))
	if v.Ask == nil || v.Decision.Source != gate.SourceRisk {
		t.Fatalf("rm -rf ./build: %+v", v.Decision)
	}
	f.answer(c, v, answers.ReplyAlways)
	_, v = f.check(t, "shell", shellArgs("rm -rf ./src"))
	if v.Ask == nil {
		t.Errorf("BROKEN: rm -rf ./src ran on an always given to rm -rf ./build")
	}
}

// Held: the catastrophic denial holds in allow_all and no always can cover it.
func TestReviewCatastrophicInAllowAll(t *testing.T) {
	f := newFixture(t, "", permission.AllowAll)
	for _, cmd := range []string{"rm -rf /", "rm -rf ~", "cd / && rm -rf *", "sudo rm -rf --no-preserve-root /"} {
		_, v := f.check(t, "shell", shellArgs(cmd))
		if v.Block == nil {
			t.Errorf("BROKEN: %q not refused in allow_all: %+v", cmd, v.Decision)
		}
	}
}

// Held: allow_all plus an explicit deny stays a deny; strict never honours an always.
func TestReviewAllowAllDenyAndStrictStanding(t *testing.T) {
	f := newFixture(t, `{"rules":{"shell":{"*":"allow","git push*":"deny"}}}`, permission.AllowAll)
	if _, v := f.check(t, "shell", shellArgs("git push origin main")); v.Block == nil {
		t.Errorf("BROKEN: explicit deny lifted by allow_all: %+v", v.Decision)
	}
	f = newFixture(t, `{"mode":"strict"}`, "")
	c, v := f.check(t, "shell", shellArgs("go test ./..."))
	if v.Ask == nil {
		t.Fatalf("strict did not ask: %+v", v.Decision)
	}
	f.answer(c, v, answers.ReplyAlways)
	if _, v = f.check(t, "shell", shellArgs("go test ./...")); v.Ask == nil {
		t.Errorf("BROKEN: strict honoured a standing always")
	}
}

// Attack: an answer for a call that was never asked (or was asked of another gate) must not
// turn into an allow with a standing grant. Answer's verdict is the caller's; what matters is
// that no grant is installed for a call this gate did not ask about.
func TestReviewAnswerForUnaskedCallInstallsNothing(t *testing.T) {
	f := newFixture(t, `{"rules":{"edit":"ask"}}`, "")
	c := f.call(t, "write", `{"path":"a.txt","content":"x"}`)
	if v := f.answer(c, turn.Verdict{}, answers.ReplyAlways); len(v.Grants) != 0 {
		t.Errorf("BROKEN: an answer to an unasked call installed %v", v.Grants)
	}
	if _, v := f.check(t, "write", `{"path":"a.txt","content":"x"}`); v.Ask == nil {
		t.Errorf("BROKEN: the call ran unasked after an answer to an unasked call: %+v", v.Decision)
	}
}

// Attack: apply_patch touching two files through final links into two different directories
// outside the workspace. Only the first external directory is asked about; a standing grant
// for the first must not let the second through unasked.
func TestReviewApplyPatchTwoExternalDirs(t *testing.T) {
	f := newFixture(t, "", "")
	outA, outB := t.TempDir(), t.TempDir()
	for _, d := range []string{outA, outB} {
		if err := os.WriteFile(filepath.Join(d, "t.txt"), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outA, "t.txt"), filepath.Join(f.root, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outB, "t.txt"), filepath.Join(f.root, "b.txt")); err != nil {
		t.Fatal(err)
	}
	// The user grants always for outA alone (a write through a.txt).
	c, v := f.check(t, "write", `{"path":"a.txt","content":"new\n"}`)
	if v.Ask == nil {
		t.Fatalf("write through a link outside did not ask: %+v", v.Decision)
	}
	f.answer(c, v, answers.ReplyAlways)
	patch := "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Add File: b.txt\n+y\n*** End Patch\n"
	args, _ := json.Marshal(map[string]string{"patch": patch})
	tl := f.tools["apply_patch"]
	if _, err := tl.Validate(args); err != nil {
		t.Skipf("patch not accepted: %v", err)
	}
	c, v = f.check(t, "apply_patch", string(args))
	if v.Ask != nil && !strings.Contains(v.Ask.Resource, filepath.Base(outB)) {
		t.Errorf("the ask names %q, not the directory never granted (%s)", v.Ask.Resource, outB)
	}
	if v.Ask != nil || v.Block != nil {
		return
	}
	// The gate let it through on the grant for outA: the boundary left is the file tool,
	// which gets only outA as its external root.
	res := f.tools["apply_patch"].Execute(context.Background(), tools.Invocation{SessionID: "ses_review", CallID: c.Call.ID,
		ExternalRoot: v.ExternalRoot, Parsed: c.Parsed})
	if b, _ := os.ReadFile(filepath.Join(outB, "t.txt")); string(b) != "old\n" {
		t.Errorf("BROKEN: apply_patch wrote %s (never granted) on a standing grant for %s: %q (%s)", outB, outA, b, res.Output)
	}
}

// Held: grep/glob with a path outside the workspace need external_directory.
func TestReviewSearchOutsideAsks(t *testing.T) {
	f := newFixture(t, "", "")
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "x.txt"), []byte("x SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, args string }{
		{"grep", `{"pattern":"x","path":"` + out + `"}`},
		{"glob", `{"pattern":"*","path":"` + out + `"}`},
		{"grep", `{"pattern":"x","path":"../"}`},
		{"read", `{"path":"/etc/passwd"}`},
	} {
		c, v := f.check(t, tc.tool, tc.args)
		if v.Ask != nil || v.Block != nil {
			continue
		}
		// The gate allowed it (grep and glob are not path keys, so external_directory is not
		// evaluated for them); the search adapter is then the only boundary.
		res := f.tools[tc.tool].Execute(context.Background(), tools.Invocation{SessionID: "ses_review", CallID: c.Call.ID,
			ExternalRoot: v.ExternalRoot, Parsed: c.Parsed})
		if strings.Contains(res.Output, "SECRET") || strings.Contains(res.Output, "root:") {
			t.Errorf("BROKEN: %s %s read outside the workspace without asking: %s", tc.tool, tc.args, res.Output)
		}
	}
}

// Attack: report_write's name is a path segment the gate names as .zuno/reports/NAME; a name
// with separators or dots must not let it reach elsewhere.
func TestReviewReportNameStaysInReports(t *testing.T) {
	f := newFixture(t, "", "")
	for _, name := range []string{"../../x.md", "/etc/x.md", "a/../../x.md", "..", "x\\..\\..\\y.md"} {
		args, _ := json.Marshal(map[string]string{"name": name, "content": "x"})
		if _, err := f.tools["report_write"].Validate(args); err == nil {
			t.Errorf("BROKEN?: report_write accepted name %q", name)
		}
	}
}
