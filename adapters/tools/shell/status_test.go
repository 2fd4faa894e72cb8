package shell

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// reporterLauncher is a StatusLauncher without bubblewrap: it runs argv under the status
// reporter (this test binary, through a descriptor) behind prefix, a program that hides the
// command's status the way bwrap's init does (it exits 128+N for a signal).
type reporterLauncher struct {
	prefix []string
	quiet  bool // run the command without the reporter: no report at all
}

func (l reporterLauncher) Wrap(argv []string, dir string) ([]string, error) { return argv, nil }

func (l reporterLauncher) WrapFiles(argv []string, dir string) ([]string, []*os.File, error) {
	return argv, nil, nil
}

func (l reporterLauncher) WrapStatus(argv []string, dir string) ([]string, []*os.File, *os.File, error) {
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		exe.Close()
		return nil, nil, nil, err
	}
	inner := append([]string{"/proc/self/fd/3", guard.StatusName, "4", "--"}, argv...)
	if l.quiet {
		inner = argv
	}
	return append(append([]string{}, l.prefix...), inner...), []*os.File{exe, w}, r, nil
}

// The shell, like bwrap's init, turns a child's signal into 128+N: `bash -c '"$@"; exit $?'`.
var hidingPrefix = []string{"bash", "-c", `"$@"; exit $?`, "hide"}

// Row by row, seeds 000: 被信号杀死的命令没有退出码，会被报告为被信号杀死，同样对工作本身不作任何判定
// (a command killed by a signal has no exit code, is reported as killed by the signal, and is
// no verdict on the work), behind a launcher whose own status hides the signal; and a command
// that exits 128+N itself keeps its code.
func TestStatusReporterTellsSignalFromCode(t *testing.T) {
	bothGuards(t, testStatusReporterTellsSignalFromCode)
}

func testStatusReporterTellsSignalFromCode(t *testing.T) {
	r := &Runner{Launcher: reporterLauncher{prefix: hidingPrefix}}
	for _, tc := range []struct {
		name, cmd string
		code      int // -1: no exit code
		signal    string
	}{
		{"被信号杀死的命令没有退出码，会被报告为被信号杀死 (kill -9)", `kill -9 $$`, -1, "SIGKILL"},
		{"被信号杀死的命令没有退出码，会被报告为被信号杀死 (kill -TERM)", `kill -TERM $$`, -1, "SIGTERM"},
		{"exit 137 is the command's own", `exit 137`, 137, ""},
		{"exit 143 is the command's own", `exit 143`, 143, ""},
		{"exit 0", `true`, 0, ""},
		{"program not found: bash's own 127", `no-such-program-zuno`, 127, ""},
	} {
		res, err := r.Run(context.Background(), Request{Command: tc.cmd, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.code < 0 {
			if res.HasExitCode || res.Signal != tc.signal || res.Authoritative || res.GuardFailed {
				t.Errorf("%s: %+v\n%s", tc.name, res, res.Output)
			}
			continue
		}
		if !res.HasExitCode || res.ExitCode != tc.code || res.Signal != "" || !res.Authoritative {
			t.Errorf("%s: %+v\n%s", tc.name, res, res.Output)
		}
	}
}

// Without the reporter's line the launcher's 137 is no verdict: never read as an exit code.
func TestStatusLauncherWithoutReportIsNoVerdict(t *testing.T) {
	bothGuards(t, testStatusLauncherWithoutReportIsNoVerdict)
}

func testStatusLauncherWithoutReportIsNoVerdict(t *testing.T) {
	r := &Runner{Launcher: reporterLauncher{prefix: hidingPrefix, quiet: true}}
	res, err := r.Run(context.Background(), Request{Command: `kill -9 $$`, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.GuardFailed || res.Authoritative || !strings.Contains(res.GuardDiagnostic, "exit code 137 without reporting") {
		t.Fatalf("%+v", res)
	}
}

// The reporter cannot start a program that is not there: 127, never started, as the guard.
func TestStatusReporterProgramMissing(t *testing.T) {
	l := reporterLauncher{}
	argv, files, status, err := l.WrapStatus([]string{"/no/such/zuno-program"}, "")
	if err != nil {
		t.Fatal(err)
	}
	cmd, g, err := guardedCommand(argv, files)
	if err != nil {
		t.Fatal(err)
	}
	g.status = status
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	CloseFiles(files)
	g.started()
	_ = cmd.Wait()
	gs := g.settle(cmd.ProcessState)
	if !gs.NeverStarted || gs.ExitCode != ExitNotFound || !strings.Contains(gs.Diagnostic, "could not start /no/such/zuno-program in the sandbox") {
		t.Fatalf("%+v", gs)
	}
}

// launcherReport row by row: the guard's status stands when it says more than an exit code;
// otherwise only the reporter's one line decides.
func TestLauncherReportTable(t *testing.T) {
	at := time.Unix(0, 1700000000123456789)
	ns := " " + strconv.FormatInt(at.UnixNano(), 10)
	exit := func(n int) GuardStatus { return GuardStatus{HasExitCode: true, ExitCode: n, Ended: at} }
	noReport := func(n int) GuardStatus {
		return GuardStatus{HasExitCode: true, ExitCode: ExitGuardFailed, GuardFailed: true,
			Diagnostic: "the sandbox ended with exit code " + strconv.Itoa(n) + " without reporting how the command ended " +
				"(the sandbox could not start it, or its status reporter was killed)"}
	}
	unreadable := GuardStatus{HasExitCode: true, ExitCode: ExitGuardFailed, GuardFailed: true,
		Diagnostic: "the sandbox's status reporter wrote an unreadable report"}
	for _, tc := range []struct {
		name  string
		outer GuardStatus
		text  string
		want  GuardStatus
	}{
		{"被信号杀死: bwrap's 137 is the reporter's SIGKILL", exit(137), "signal 9" + ns + "\n", GuardStatus{Signal: "SIGKILL", Ended: at}},
		{"被信号杀死: bwrap's 143 is the reporter's SIGTERM", exit(143), "signal 15" + ns + "\n", GuardStatus{Signal: "SIGTERM", Ended: at}},
		{"exit 137 of the command's own", exit(137), "exit 137" + ns + "\n", exit(137)},
		{"the reporter could not start the program", exit(127), "guard 127 could not start x\n",
			GuardStatus{HasExitCode: true, ExitCode: 127, NeverStarted: true, Diagnostic: "could not start x"}},
		{"no report (bwrap failed, or the reporter was killed)", exit(1), "", noReport(1)},
		{"a line without its newline", exit(0), "exit 0" + ns, noReport(0)},
		{"two lines", exit(0), "exit 0" + ns + "\nexit 1" + ns + "\n", noReport(0)},
		{"a malformed line", exit(0), "exit zero\n", unreadable},
		{"bwrap killed by Zuno's stop: the guard's signal stands", GuardStatus{Signal: "SIGKILL"}, "", GuardStatus{Signal: "SIGKILL"}},
		{"the guard failed: its status stands", GuardStatus{HasExitCode: true, ExitCode: 125, GuardFailed: true, Diagnostic: "d"},
			"exit 0" + ns + "\n", GuardStatus{HasExitCode: true, ExitCode: 125, GuardFailed: true, Diagnostic: "d"}},
		{"bwrap not found: never started stands", GuardStatus{HasExitCode: true, ExitCode: 127, NeverStarted: true, Diagnostic: "d"},
			"", GuardStatus{HasExitCode: true, ExitCode: 127, NeverStarted: true, Diagnostic: "d"}},
	} {
		if got := launcherReport(tc.outer, tc.text); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}
