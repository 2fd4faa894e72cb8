package sandbox_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain/sandbox"
)

// How a confined command ended is what really happened, as under the native backend: with
// --unshare-pid bwrap exits 128+N for a command killed by signal N, and only the status
// reporter inside the sandbox tells that from a command exiting 128+N itself (docs/sandbox.md,
// "How a confined command ended"). Both network modes: under deny the filter is fd 3 and the
// reporter's descriptors come after it.
func TestConfinedSignalIsASignal(t *testing.T) {
	rows := []struct {
		name, command string
		signal        string
		code          int
	}{
		{"kill -9 of the shell itself", `echo before; kill -9 $$; echo after`, "SIGKILL", 0},
		{"kill -TERM of the shell itself", `kill -TERM $$`, "SIGTERM", 0},
		{"a child killed by a signal, its shell exits with 128+N", `sh -c 'kill -9 $$'; exit $?`, "", 137},
		{"exit 137 is the command's own code", `exit 137`, "", 137},
		{"exit 143 is the command's own code", `exit 143`, "", 143},
		{"exit 0", `true`, "", 0},
	}
	for _, net := range []string{"deny", "allow"} {
		ws := t.TempDir()
		sess := confined(t, ws, `{"network":"`+net+`"}`, false)
		for _, row := range rows {
			res := runIn(t, sess, ws, row.command)
			if row.signal != "" {
				if res.Signal != row.signal || res.HasExitCode || res.Authoritative || res.GuardFailed {
					t.Errorf("network %s, %s: %+v\n%s", net, row.name, res, res.Output)
				}
				continue
			}
			if res.Signal != "" || !res.HasExitCode || res.ExitCode != row.code || !res.Authoritative {
				t.Errorf("network %s, %s: %+v\n%s", net, row.name, res, res.Output)
			}
		}
	}
}

// A background task is run under the same reporter: killed by a signal, it records the
// signal and no exit code; exit 137 of its own is its exit code.
func TestConfinedBackgroundSignalIsASignal(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	mgr, err := bg.NewManager(t.TempDir(), bg.WithLauncher(sess.Launcher))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close() })
	for _, row := range []struct {
		command, signal string
		code            int
	}{
		{`kill -9 $$`, "SIGKILL", -1},
		{`kill -TERM $$`, "SIGTERM", -1},
		{`exit 137`, "", 137},
	} {
		info, err := mgr.Start(context.Background(), bg.StartRequest{Dir: ws, Command: row.command, SessionID: "s1", CallID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		w, err := mgr.Wait(ctx, info.ID, 0, nil, 0)
		cancel()
		if err != nil || w.Status != bg.StatusExited {
			t.Fatalf("%s: %v %+v", row.command, err, w)
		}
		if row.code < 0 && (w.Signal != row.signal || w.ExitCode != nil) ||
			row.code >= 0 && (w.Signal != "" || w.ExitCode == nil || *w.ExitCode != row.code) {
			t.Errorf("%s: signal %q, exit code %v", row.command, w.Signal, w.ExitCode)
		}
	}
}

// The command cannot reach the reporter's pipe or the binary's descriptor: under network
// deny bwrap's fds 3 (the filter, which bwrap closes), 4 and 5 are not open in it.
func TestConfinedCommandHoldsNoReporterDescriptor(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	res := runIn(t, sess, ws, `for f in 3 4 5; do [ -e /proc/$$/fd/$f ] && echo open $f; done; echo checked`)
	if strings.TrimSpace(string(res.Output)) != "checked" {
		t.Fatalf("descriptors open in the command: %q", res.Output)
	}
}

// A reporter killed by the command leaves no report: no verdict, never bwrap's exit code.
func TestConfinedReporterKilledIsNoVerdict(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	res := runIn(t, sess, ws, `kill -9 $PPID; sleep 1; exit 0`)
	if !res.GuardFailed || res.Authoritative || !strings.Contains(res.GuardDiagnostic, "without reporting") {
		t.Fatalf("%+v\n%s", res, res.Output)
	}
}

// WrapStatus hands bwrap the binary and the pipe after the filter, and closes nothing the
// caller needs: the argv names the reporter through the binary's descriptor.
func TestWrapStatusArgv(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	sl, ok := sess.Launcher.(interface {
		WrapStatus([]string, string) ([]string, []*os.File, *os.File, error)
	})
	if !ok {
		t.Fatalf("the bubblewrap launcher has no WrapStatus: %T", sess.Launcher)
	}
	argv, files, status, err := sl.WrapStatus([]string{"/bin/true"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer status.Close()
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	tail := strings.Join(argv[len(argv)-6:], " ")
	wantTail := "-- /proc/self/fd/4 zuno-sandbox-status 5 --" // deny: the filter is fd 3
	if !strings.HasPrefix(tail, wantTail) || len(files) != 3 {
		t.Fatalf("argv ends %q with %d files, want %q…", tail, len(files), wantTail)
	}
	if files[1].Name() != "/proc/self/exe" {
		t.Fatalf("the reporter's binary is %s", files[1].Name())
	}
}

// fileOnly hides a launcher's WrapStatus: the runner then runs the command without the
// status reporter (the baseline of BenchmarkStatusReporter).
type fileOnly struct{ adsandbox.FileLauncher }

// BenchmarkStatusReporter measures what the status reporter adds to a confined shell call
// (`true` through shell.Runner, guard included), against the same call without it, in the
// same run (docs/sandbox.md, "How a confined command ended").
func BenchmarkStatusReporter(b *testing.B) {
	ws := b.TempDir()
	sess, err := adsandbox.Assemble(context.Background(), sandbox.Config{}, adsandbox.Request{Workspace: ws, Platform: "linux"}, adsandbox.Probe{})
	if err != nil || sess.Resolution.ResolutionKind != sandbox.KindConfined {
		b.Skip("the sandbox cannot be assembled here: ", err)
	}
	fl := sess.Launcher.(adsandbox.FileLauncher)
	for _, tc := range []struct {
		name     string
		launcher shell.Launcher
	}{{"without-reporter", fileOnly{fl}}, {"with-reporter", fl}} {
		r := &shell.Runner{Root: ws, Launcher: tc.launcher}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := r.Run(context.Background(), shell.Request{Command: "true", Timeout: 30 * time.Second})
				if err != nil || !res.Authoritative || res.ExitCode != 0 {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}
