package catalog_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/catalog"
	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/commands/turn"
	dsandbox "github.com/zuno-run/zuno/domain/sandbox"
)

func open(t *testing.T, probe sandbox.Probe) turn.Surface {
	t.Helper()
	dir := t.TempDir()
	sup, err := bg.NewSupervisor(bg.SupervisorConfig{Dir: filepath.Join(dir, "bg")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close() })
	c := &catalog.Catalog{Sandbox: dsandbox.Config{}, DataDir: dir, Supervisor: sup, Probe: probe}
	s, err := c.OpenTools()(turn.ToolsRequest{Dir: t.TempDir(), SessionID: "ses_cat"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func names(s turn.Surface) []string {
	var out []string
	for _, tl := range s.Tools() {
		out = append(out, tl.Declaration().Name)
	}
	slices.Sort(out)
	return out
}

// The catalogue opens a session's whole surface over its workspace, confined by the real
// sandbox: the core tools, bg, the work tools and the delegation tools, each declared once.
func TestOpenConfined(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("SKIP: bubblewrap is not installed")
	}
	s := open(t, sandbox.Probe{})
	want := []string{"apply_patch", "bg", "glob", "goal_get", "goal_request_input", "goal_update", "grep", "job", "job_reconcile", "plan_exit", "plan_get", "plan_update", "question", "question_async", "read", "report_write", "session_message",
		"shell", "task", "task_context", "todo_get", "todo_update", "tool_search", "webfetch", "write"}
	if got := names(s); !slices.Equal(got, want) {
		t.Fatalf("tools %q, want %q", got, want)
	}
	c := s.Confinement()
	if c.Refusal != nil || c.Resolution == nil || c.Resolution.Backend != dsandbox.BackendBubblewrap {
		t.Fatalf("confinement %+v", c)
	}
}

// A sandbox that cannot be assembled fails closed: no shell and no bg are offered, and the
// surface carries the refusal the turn records.
func TestOpenRefusedSandboxLeavesCommandsOut(t *testing.T) {
	s := open(t, sandbox.Probe{Launcher: "/nonexistent/bwrap"})
	got := names(s)
	if slices.Contains(got, "shell") || slices.Contains(got, "bg") || !slices.Contains(got, "read") {
		t.Fatalf("tools with a refused sandbox: %q", got)
	}
	if s.Confinement().Refusal == nil {
		t.Fatal("no refusal recorded")
	}
}

// Every built-in tool's declaration compiles: the validators are compiled at first use
// (schema.MustCompile), so this is where one that does not compile is found, not in a turn.
func TestBuiltInSchemasCompile(t *testing.T) {
	if err := schema.CompileDeferred(); err != nil {
		t.Fatal(err)
	}
}
