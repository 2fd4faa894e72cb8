package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/preflight"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain/gitcheck"
)

// The runtime SIGKILLed while a confined command runs, in the foreground and as a background
// task: the guard kills the whole group (bwrap, the sandbox's init, everything in the pid
// namespace), so no process outlives it and the late side effect never happens. The runtime
// is this test binary re-executed (TestGuardedRuntimeHelper).
func TestRuntimeKilledLeavesNothingConfined(t *testing.T) {
	if os.Getenv("SANDBOX_GUARD_RUNTIME") != "" {
		return
	}
	requireBwrap(t)
	for _, mode := range []string{"foreground", "background"} {
		t.Run(mode, func(t *testing.T) {
			ws := t.TempDir()
			m := marker()
			command := fmt.Sprintf("sleep %s & setsid sleep %s & sleep 1.5; touch late-side-effect; wait", m, m)
			rt := exec.Command(os.Args[0], "-test.run=^TestGuardedRuntimeHelper$")
			rt.Env = append(os.Environ(), "SANDBOX_GUARD_RUNTIME="+mode, "SANDBOX_GUARD_COMMAND="+command, "SANDBOX_GUARD_WS="+ws)
			if err := rt.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(processesWithArgs(m)) < 2 {
				if time.Now().After(deadline) {
					rt.Process.Kill()
					t.Fatal("the command never started")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := rt.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = rt.Wait()
			assertNoneLeft(t, m)
			time.Sleep(2 * time.Second)
			if _, err := os.Stat(filepath.Join(ws, "late-side-effect")); err == nil {
				t.Fatal("the command finished its side effect after the runtime was killed")
			}
		})
	}
}

// TestGuardedRuntimeHelper is the runtime of TestRuntimeKilledLeavesNothingConfined.
func TestGuardedRuntimeHelper(t *testing.T) {
	mode := os.Getenv("SANDBOX_GUARD_RUNTIME")
	if mode == "" {
		t.Skip("helper process")
	}
	ws := os.Getenv("SANDBOX_GUARD_WS")
	sess := confined(t, ws, "", false)
	command := os.Getenv("SANDBOX_GUARD_COMMAND")
	if mode == "background" {
		mgr, err := bg.NewManager(t.TempDir(), bg.WithLauncher(sess.Launcher))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mgr.Start(context.Background(), bg.StartRequest{Dir: ws, Command: command}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		return
	}
	r := &shell.Runner{Root: ws, Launcher: sess.Launcher}
	_, _ = r.Run(context.Background(), shell.Request{Command: command})
}

// The git pre-flight's reads run through the session's launcher, confined like the command
// (a repository whose configuration runs programs runs them inside the sandbox), and still
// see the repository: a generated artifact is refused, source is let through.
func TestGitPreflightReadsConfined(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	for _, args := range [][]string{{"init", "-q"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	for _, f := range []string{"node_modules/x/index.js", "main.go"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &preflight.Checker{Runner: &shell.Runner{Root: ws, Launcher: sess.Launcher}}
	if r := c.Check(context.Background(), ws, "git add ."); r == nil || r.Code() != gitcheck.CodeGeneratedArtifact {
		t.Fatalf("git add . with node_modules: %v", r)
	}
	if r := c.Check(context.Background(), ws, "git add main.go"); r != nil {
		t.Fatalf("git add main.go: %v", r)
	}
}
