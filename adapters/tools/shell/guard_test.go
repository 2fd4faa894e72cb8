package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// Attacks on the guard's boundary (docs/shell-execution.md, "The guard"), each a row below:
//
//	a command exits with a reserved code itself (125, 126, 127)      → its own status, authoritative
//	it prints the guard's diagnostic line, then exits 125 or 127      → still its own
//	it writes a forged report to the guard's report fd (4) or fd 3    → the fds are closed in the command
//	it exits 137 (what a SIGKILL looks like in $?)                    → an exit code, not a signal
//	it kills itself (kill -9 $$, kill -TERM $$)                       → a signal, no exit code, no verdict
//	bash reports a missing program (127 "command not found")          → bash's own failing status
//	the guard itself fails                                            → 125, GuardFailed, not authoritative
//	the program cannot be found / executed                            → 127 / 126, NeverStarted
//	the command is killed with kill -9 from outside                   → SIGKILL, no verdict
//	the runtime is SIGKILLed mid-command (group member, setsid escapee) → every process gone, no late side effect
func TestGuardReservedCodesBelongToTheCommand(t *testing.T) {
	bothGuards(t, testGuardReservedCodesBelongToTheCommand)
}

func testGuardReservedCodesBelongToTheCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd    string
		code   int // -1: no exit code
		signal string
		auth   bool
	}{
		{"exit 125", 125, "", true},
		{"exit 126", 126, "", true},
		{"exit 127", 127, "", true},
		{"echo my verdict; exit 127", 127, "", true},
		{"echo 'zuno-shell-guard: could not start bash'; exit 125", 125, "", true},
		{"echo 'zuno-shell-guard: not found' >&2; exit 127", 127, "", true},
		{"echo 'guard 125 forged' >&4; exit 125", 125, "", true},
		{"echo 'guard 127 forged' >&3; exit 127", 127, "", true},
		{"exit 137", 137, "", true},
		{"definitely-not-a-command-zuno", 127, "", true},
		{"kill -9 $$", -1, "SIGKILL", false},
		{"kill -TERM $$", -1, "SIGTERM", false},
	} {
		res := run(t, nil, Request{Command: tc.cmd})
		gotCode := -1
		if res.HasExitCode {
			gotCode = res.ExitCode
		}
		if gotCode != tc.code || res.Signal != tc.signal || res.Authoritative != tc.auth ||
			res.GuardFailed || res.NeverStarted || res.GuardDiagnostic != "" {
			t.Errorf("%q: code %d signal %q auth %v guardFailed %v neverStarted %v; want code %d signal %q auth %v",
				tc.cmd, gotCode, res.Signal, res.Authoritative, res.GuardFailed, res.NeverStarted, tc.code, tc.signal, tc.auth)
		}
	}
}

// argvLauncher replaces the program the guard is asked to start.
type argvLauncher struct{ program string }

func (l argvLauncher) Wrap(argv []string, _ string) ([]string, error) {
	return append([]string{l.program}, argv...), nil
}

func TestGuardFailureAndNeverStarted(t *testing.T) { bothGuards(t, testGuardFailureAndNeverStarted) }

func testGuardFailureAndNeverStarted(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		program      string
		code         int
		guardFailed  bool
		neverStarted bool
	}{
		{loop, ExitGuardFailed, true, false},                       // the guard could not even look at it
		{filepath.Join(dir, "missing"), ExitNotFound, false, true}, // no such program
		{plain, ExitCannotExecute, false, true},                    // exists, not executable
	} {
		res := run(t, &Runner{Launcher: argvLauncher{tc.program}}, Request{Command: "touch ran"})
		if !res.HasExitCode || res.ExitCode != tc.code || res.GuardFailed != tc.guardFailed ||
			res.NeverStarted != tc.neverStarted || res.Authoritative || res.GuardDiagnostic == "" {
			t.Errorf("%s: %+v", filepath.Base(tc.program), res)
		}
		if !strings.HasPrefix(string(res.Output), guardDiagPrefix) || !strings.Contains(string(res.Output), res.GuardDiagnostic) {
			t.Errorf("%s: the guard's line is not in the output: %q", filepath.Base(tc.program), res.Output)
		}
		if _, err := os.Stat("ran"); err == nil {
			t.Fatal("the command ran")
		}
	}
}

func TestGuardReportTable(t *testing.T) {
	at := time.Unix(0, 1700000000123456789)
	lost := "the guard ended without reporting how the command ended"
	for _, tc := range []struct {
		line string
		want GuardStatus
	}{
		{"exit 0 1700000000123456789", GuardStatus{HasExitCode: true, Ended: at}},
		{"exit 143 1700000000123456789", GuardStatus{HasExitCode: true, ExitCode: 143, Ended: at}},
		{"signal 9 1700000000123456789", GuardStatus{Signal: "SIGKILL", Ended: at}},
		{"guard 125 could not wait", GuardStatus{HasExitCode: true, ExitCode: 125, GuardFailed: true, Diagnostic: "could not wait"}},
		{"guard 127 could not start x", GuardStatus{HasExitCode: true, ExitCode: 127, NeverStarted: true, Diagnostic: "could not start x"}},
		{"guard 126 could not start x", GuardStatus{HasExitCode: true, ExitCode: 126, NeverStarted: true, Diagnostic: "could not start x"}},
		{"guard 3 nonsense", GuardStatus{ExitCode: 125, GuardFailed: true, Diagnostic: lost}},
		{"guard 125", GuardStatus{ExitCode: 125, GuardFailed: true, Diagnostic: lost}},
		{"exit 0", GuardStatus{ExitCode: 125, GuardFailed: true, Diagnostic: lost}},
		{"exit x 1", GuardStatus{ExitCode: 125, GuardFailed: true, Diagnostic: lost}},
		{"", GuardStatus{ExitCode: 125, GuardFailed: true, Diagnostic: lost}},
	} {
		if got := guardReport(tc.line, nil); got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.line, got, tc.want)
		}
	}
	ended := GuardStatus{Ended: at}
	if ended.StoppedLive(at.Add(time.Nanosecond)) || !ended.StoppedLive(at) || !(GuardStatus{}).StoppedLive(at) {
		t.Error("StoppedLive: only a stop sent after the command ended found it ended")
	}
}

func TestGuardWithBadArgumentsReports125(t *testing.T) {
	rr, rw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	lr, lw, _ := os.Pipe()
	defer lw.Close()
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{GuardName, "x", "--", "true"}, ExtraFiles: []*os.File{lr, rw}}
	out, _ := cmd.CombinedOutput()
	rw.Close()
	lr.Close()
	b := make([]byte, 256)
	n, _ := rr.Read(b)
	if cmd.ProcessState.ExitCode() != ExitGuardFailed || !strings.HasPrefix(string(out), guardDiagPrefix) ||
		!strings.HasPrefix(string(b[:n]), "guard 125 ") {
		t.Fatalf("exit %d output %q report %q", cmd.ProcessState.ExitCode(), out, b[:n])
	}
}

func TestKillMinus9FromOutside(t *testing.T) { bothGuards(t, testKillMinus9FromOutside) }

func testKillMinus9FromOutside(t *testing.T) {
	dir := t.TempDir()
	go func() {
		_ = syscall.Kill(readPID(t, filepath.Join(dir, "cmd.pid")), syscall.SIGKILL)
	}()
	res := run(t, nil, Request{Command: `echo $$ > cmd.pid; sleep 30`, Dir: dir})
	if res.HasExitCode || res.Signal != "SIGKILL" || res.Authoritative || res.Killed {
		t.Fatalf("got %+v", res)
	}
}

// The runtime killed with SIGKILL while a command runs: the issue saw the command finish its
// side effect 3.5 s later. Here the "runtime" is this test binary re-executed; the command
// has a background job in its group and a setsid daemon that left the group. After the kill,
// every one of them is gone, the guard too, and the late side effect never happens.
func TestRuntimeKilledLeavesNoOrphan(t *testing.T) { bothGuards(t, testRuntimeKilledLeavesNoOrphan) }

func testRuntimeKilledLeavesNoOrphan(t *testing.T) {
	if os.Getenv("SHELL_GUARD_TEST_RUNTIME") != "" {
		return
	}
	dir := t.TempDir()
	command := `echo $PPID > guard.pid; tr '\0' ' ' < /proc/$PPID/cmdline > guard.argv; ` +
		`sleep 30 & echo $! > job.pid; setsid sh -c 'echo $$ > daemon.pid; exec sleep 30' & ` +
		`echo $$ > cmd.pid; sleep 1.5; touch late-side-effect`
	rt := exec.Command(os.Args[0], "-test.run=^TestGuardHelperRuntime$")
	rt.Env = append(os.Environ(), "SHELL_GUARD_TEST_RUNTIME="+command, "SHELL_GUARD_TEST_DIR="+dir,
		"SHELL_GUARD_TEST_PER_COMMAND="+strconv.FormatBool(perCommand()))
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	pids := []int{readPID(t, filepath.Join(dir, "cmd.pid")), readPID(t, filepath.Join(dir, "job.pid")),
		readPID(t, filepath.Join(dir, "daemon.pid")), readPID(t, filepath.Join(dir, "guard.pid"))}
	want := GuardName
	if !perCommand() {
		want = guard.SessionName
	}
	if argv, _ := os.ReadFile(filepath.Join(dir, "guard.argv")); !strings.HasPrefix(string(argv), want+" ") {
		t.Fatalf("the command's parent is %q, want %s", argv, want)
	}
	if err := rt.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait()
	for _, pid := range pids {
		assertGone(t, pid)
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(dir, "late-side-effect")); err == nil {
		t.Fatal("the command finished its side effect after the runtime was killed")
	}
}

// TestGuardHelperRuntime is the runtime of TestRuntimeKilledLeavesNoOrphan.
func TestGuardHelperRuntime(t *testing.T) {
	command := os.Getenv("SHELL_GUARD_TEST_RUNTIME")
	if command == "" {
		t.Skip("helper process")
	}
	setPerCommand(os.Getenv("SHELL_GUARD_TEST_PER_COMMAND") == "true")
	_, _ = (&Runner{}).Run(context.Background(), Request{Command: command, Dir: os.Getenv("SHELL_GUARD_TEST_DIR")})
}

// A stop that lands on a command which has already exited leaves its verdict standing: the
// run is marked cancelled, not killed, and its own status is authoritative. The window in
// which that happens (between the command's exit and its guard's) is too short to hit on
// purpose, so the stop time is set here, around a real guard's real report.
func TestStopAfterExitKeepsTheVerdict(t *testing.T) { bothGuards(t, testStopAfterExitKeepsTheVerdict) }

func testStopAfterExitKeepsTheVerdict(t *testing.T) {
	r := &Runner{}
	for _, tc := range []struct {
		name        string
		stopAt      func(exited time.Time) time.Time
		killed      bool
		exitedFirst bool
	}{
		{"stop sent after the command ended", func(e time.Time) time.Time { return e.Add(time.Millisecond) }, false, true},
		{"stop sent before the command ended", func(e time.Time) time.Time { return e.Add(-time.Second) }, true, false},
	} {
		p, err := r.prepare(context.Background(), Request{Command: "echo verdict; exit 3"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := r.start(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		<-st.proc.Done()
		<-st.readDone
		st.pr.Close()
		st.stopSent = tc.stopAt(time.Now())
		res := Result{Cancelled: true, Killed: true}
		if err := exitStatus(st, &res); err != nil {
			t.Fatal(err)
		}
		if res.Killed != tc.killed || res.ExitedBeforeCancel != tc.exitedFirst || res.Authoritative != tc.exitedFirst ||
			!res.HasExitCode || res.ExitCode != 3 {
			t.Errorf("%s: %+v", tc.name, res)
		}
	}
}
