package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// TestMain builds this program beside the test binary, as `make build` and `go install`
// put zuno-guard beside zuno: the shell runner then runs every command of these tests under
// it (guard.Program), where every other package's tests run the fallback (the binary itself
// re-executed). adapters/tools/shell's tests hold the guard's guarantees under the fallback;
// these hold them under this program.
func TestMain(m *testing.M) {
	gobin, err := exec.LookPath("go")
	if err != nil { // go test ran with a go that is not on PATH: its GOROOT's
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if out, err := exec.Command(gobin, "build", "-o", beside(), ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building zuno-guard beside the test binary: %v: %s\n", err, out)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// beside is where TestMain puts the program.
func beside() string {
	self, _ := os.Executable()
	return filepath.Join(filepath.Dir(self), guard.ProgramName)
}

func run(t testing.TB, command string) shell.Result {
	t.Helper()
	res, err := (&shell.Runner{}).Run(context.Background(), shell.Request{Command: command})
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res
}

// The command's parent is this program, serving as the session guard (and, where no session
// guard can take a command, as a guard of its own), and the
// guard's report still decides what an exit code means: a command's own 125–127 and forged
// report lines stay the command's, a signal is a signal (docs/shell-execution.md, "The guard").
func TestCommandsRunUnderTheDedicatedGuard(t *testing.T) {
	if got := guard.Program(); got != beside() {
		t.Fatalf("guard program %q, want the one beside the binary %q", got, beside())
	}
	res := run(t, `readlink /proc/$PPID/exe; tr '\0' ' ' < /proc/$PPID/cmdline`)
	if exe, argv, _ := strings.Cut(string(res.Output), "\n"); filepath.Base(exe) != guard.ProgramName ||
		strings.TrimSpace(argv) != guard.SessionName {
		t.Fatalf("the command's parent: %q", res.Output)
	}
	withoutDirectory(t, func() {
		// (bash says first that it cannot name its directory.)
		out := perCommand(t, `readlink /proc/$PPID/exe; tr '\0' ' ' < /proc/$PPID/cmdline`)
		if !strings.Contains(out, "/"+guard.ProgramName+"\n"+guard.Name+" 0 -- ") {
			t.Fatalf("a per-command guard: %q", out)
		}
	})
	for _, tc := range []struct {
		cmd    string
		code   int // -1: no exit code
		signal string
	}{
		{"exit 3", 3, ""},
		{"exit 125", 125, ""},
		{"echo 'guard 127 forged' >&4; exit 127", 127, ""},
		{"echo 'guard 127 forged' >&3; exit 127", 127, ""},
		{"definitely-not-a-command-zuno", 127, ""},
		{"kill -9 $$", -1, "SIGKILL"},
	} {
		res := run(t, tc.cmd)
		code := -1
		if res.HasExitCode {
			code = res.ExitCode
		}
		if code != tc.code || res.Signal != tc.signal || res.GuardFailed || res.NeverStarted {
			t.Errorf("%q: code %d signal %q guardFailed %v neverStarted %v; want code %d signal %q",
				tc.cmd, code, res.Signal, res.GuardFailed, res.NeverStarted, tc.code, tc.signal)
		}
	}
}

// perCommand runs command under a guard of its own, the fallback where no session guard can
// take a command: here because Zuno's working directory is gone (a session guard is told the
// directory; a per-command guard inherits it). It returns the output.
func perCommand(t testing.TB, command string) string {
	t.Helper()
	res := run(t, command)
	if !res.HasExitCode || res.ExitCode != 0 {
		t.Fatalf("%q under a per-command guard: %+v %s", command, res, res.Output)
	}
	return string(res.Output)
}

// withoutDirectory runs f with Zuno's working directory deleted, so that every command runs
// under a per-command guard.
func withoutDirectory(t testing.TB, f func()) {
	t.Helper()
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	f()
}

// BenchmarkGuardedRun measures one `true` against bash alone, in the same run: through the
// runner under the session guard (this program), under a per-command guard of this program
// (the fallback where no session guard can take a command), and under a per-command guard of
// the test binary re-executed (the fallback when no zuno-guard stands beside zuno either: this
// file is moved aside for it). interleaved runs bash and the runner in turn, one command
// each, so that the machine's changing load moves both alike.
func BenchmarkGuardedRun(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	b.Run("baseline-bash", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("session", func(b *testing.B) {
		r := &shell.Runner{}
		for b.Loop() {
			if _, err := r.Run(context.Background(), shell.Request{Command: "true"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		r := &shell.Runner{}
		var bashTime, sessionTime time.Duration
		for b.Loop() {
			t0 := time.Now()
			if err := exec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := r.Run(context.Background(), shell.Request{Command: "true"}); err != nil {
				b.Fatal(err)
			}
			bashTime += t1.Sub(t0)
			sessionTime += time.Since(t1)
		}
		b.ReportMetric(float64(sessionTime)/float64(bashTime), "session/bash")
	})
	b.Run("per-command-zuno-guard", func(b *testing.B) {
		withoutDirectory(b, func() {
			for b.Loop() {
				perCommand(b, "true")
			}
		})
	})
	b.Run("per-command-self", func(b *testing.B) {
		aside := beside() + ".aside"
		if err := os.Rename(beside(), aside); err != nil {
			b.Fatal(err)
		}
		defer os.Rename(aside, beside())
		withoutDirectory(b, func() {
			for b.Loop() {
				perCommand(b, "true")
			}
		})
	})
}
