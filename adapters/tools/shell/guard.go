package shell

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// The per-command guard (docs/shell-execution.md, "The guard"): a command that no session
// guard can take (the fallbacks listed there) runs as the child of a small guard process of
// its own: the dedicated zuno-guard
// beside the binary, or this very binary re-executed (guard.Program), under the name
// GuardName (package guard's init runs it). The guard leads the command's process group
// and binds that group to the runtime's lifetime:
//
//   - It holds the read end of a lifeline pipe whose only write end is the runtime's. When
//     the runtime dies for any reason, SIGKILL included, the kernel closes that end, the read
//     returns, and the guard kills its whole process group. A pipe rather than the runtime's
//     PR_SET_PDEATHSIG: Go forks from whichever OS thread it is on, and that signal follows
//     the forking thread, not the process.
//   - The command gets PR_SET_PDEATHSIG(SIGKILL) from the guard (whose forking thread is
//     locked and lives as long as the guard), so a guard that dies takes the command with it.
//   - The guard is a child subreaper: a descendant that leaves the group (setsid, a double
//     fork) is re-parented to the guard, not to init, and is stopped with the group, both
//     when the runtime dies and when the command ends.
//
// The guard reports through the same exit status as the command (the timeout, env and nohup
// convention): the command's code; 125 when the guard itself failed, 126 when the program
// exists but could not be executed, 127 when it was not found. Because a command may exit
// with any of those codes itself, the guard also writes one line on a report pipe only it
// holds, and the runtime reads the verdict from there: only that line makes a reserved code
// the guard's. The same diagnostic goes to the command's output for the model to read.

// GuardName is argv[0] of a guard process (the process side is package guard).
const GuardName = guard.Name

// guardDiagPrefix starts the diagnostic line the guard writes to the command's output.
const guardDiagPrefix = guard.DiagPrefix

// Guard exit codes (reserved: see guardReport for how they are told apart from a command's).
const (
	ExitGuardFailed   = guard.ExitFailed
	ExitCannotExecute = guard.ExitCannotExecute
	ExitNotFound      = guard.ExitNotFound
)

// guardProc is the runtime's side of one guard process.
type guardProc struct {
	lifeline *os.File // write end: kept open while the command may run
	report   *os.File // read end
	children []*os.File
	// status is the read end of the launcher's status reporter (StatusLauncher), or nil:
	// settle reads it too (launcherReport).
	status *os.File
}

// guardedCommand returns the command that runs argv (with files at fd 3, …) under a guard.
// After Start the caller calls g.started(); after Wait, g.settle.
func guardedCommand(argv []string, files []*os.File) (*exec.Cmd, *guardProc, error) {
	exe := guard.Program()
	lr, lw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	rr, rw, err := os.Pipe()
	if err != nil {
		lr.Close()
		lw.Close()
		return nil, nil, err
	}
	args := append([]string{GuardName, strconv.Itoa(len(files)), "--"}, argv...)
	cmd := &exec.Cmd{Path: exe, Args: args, ExtraFiles: append([]*os.File{lr, rw}, files...)}
	return cmd, &guardProc{lifeline: lw, report: rr, children: []*os.File{lr, rw}}, nil
}

// started closes the runtime's copies of the guard's ends of both pipes.
func (g *guardProc) started() {
	CloseFiles(g.children)
	g.children = nil
}

// abandon releases everything when the guard could not be started.
func (g *guardProc) abandon() {
	g.started()
	g.lifeline.Close()
	g.report.Close()
	closeStatus(g.status)
}

// GuardStatus is how a guarded command ended, read from the guard's report and wait status.
type GuardStatus struct {
	HasExitCode bool
	ExitCode    int
	Signal      string
	// GuardFailed: the guard itself failed (exit 125 with its report); nothing is known about
	// whether the command ran or what it changed.
	GuardFailed bool
	// NeverStarted: the guard could not start the program (126: not executable, 127: not
	// found), so nothing ran.
	NeverStarted bool
	// Ended is when the guard saw the command end (zero when it did not report): a stop
	// Zuno sent before Ended may have reached a live command; one sent after found it ended.
	Ended time.Time
	// Diagnostic is the guard's own line when it failed or could not start the program.
	Diagnostic string
}

// settle reads the guard's report once the guard has been waited for, and closes the
// runtime's ends. ps is the guard's process state (nil when wait failed). With a launcher's
// status reporter, its report decides what the launcher's exit code meant (launcherReport).
func (g *guardProc) settle(ps *os.ProcessState) GuardStatus {
	g.lifeline.Close()
	line, _ := bufio.NewReader(io.LimitReader(g.report, 4096)).ReadString('\n')
	g.report.Close()
	gs := guardReport(strings.TrimSuffix(line, "\n"), ps)
	if g.status != nil {
		gs = launcherReport(gs, readStatus(g.status))
		g.status = nil
	}
	return gs
}

// guardReport interprets one report line. A guard that died without reporting (killed with
// its group after the grace period) tells only how the guard ended: a signal, never a
// verdict; one that exited without a report failed.
func guardReport(line string, ps *os.ProcessState) GuardStatus {
	f := strings.SplitN(line, " ", 3)
	code := -1
	if len(f) >= 2 {
		if n, err := strconv.Atoi(f[1]); err == nil {
			code = n
		}
	}
	var ended time.Time
	if len(f) == 3 && f[0] != "guard" {
		if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			ended = time.Unix(0, ns)
		}
	}
	switch {
	case code < 0:
	case f[0] == "exit" && !ended.IsZero():
		return GuardStatus{HasExitCode: true, ExitCode: code, Ended: ended}
	case f[0] == "signal" && !ended.IsZero():
		return GuardStatus{Signal: signalName(syscall.Signal(code)), Ended: ended}
	case f[0] == "guard" && len(f) == 3 && code == ExitGuardFailed:
		return GuardStatus{HasExitCode: true, ExitCode: code, GuardFailed: true, Diagnostic: f[2]}
	case f[0] == "guard" && len(f) == 3 && (code == ExitCannotExecute || code == ExitNotFound):
		return GuardStatus{HasExitCode: true, ExitCode: code, NeverStarted: true, Diagnostic: f[2]}
	}
	if ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return GuardStatus{Signal: signalName(ws.Signal())}
		}
	}
	return GuardStatus{HasExitCode: ps != nil, ExitCode: ExitGuardFailed, GuardFailed: true,
		Diagnostic: "the guard ended without reporting how the command ended"}
}

// StoppedLive reports whether a stop Zuno sent at sent may have reached the command alive:
// always, unless the guard saw the command end before it (a verdict it reached on its own).
func (gs GuardStatus) StoppedLive(sent time.Time) bool {
	return gs.Ended.IsZero() || !gs.Ended.Before(sent)
}

// statusWait bounds the read of a launcher's status report once the command's guard ended:
// by then every process that could hold the pipe's write end is gone (the sandbox's pid
// namespace died with its init), so the read returns at once; the bound only keeps a
// launcher that leaked the end from hanging the call.
const statusWait = 2 * time.Second

// readStatus reads a launcher's status report (StatusLauncher) and closes it: the whole
// text, at most 4 KiB, so a report of more than one line can be refused.
func readStatus(f *os.File) string {
	defer f.Close()
	_ = f.SetReadDeadline(time.Now().Add(statusWait))
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	return string(b)
}

func closeStatus(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// launcherReport is how the command ended when its launcher ran it under a status reporter
// (docs/sandbox.md, "How a confined command ended"). The guard's status is then the
// launcher's (bwrap's), whose exit code cannot tell `exit 137` from a SIGKILL; the reporter's
// one line (text) can. The guard's status stands when it says more than an exit code: the
// guard failed, could not start the launcher, or the launcher was killed by a signal (Zuno's
// stop). A missing, malformed or repeated report is no verdict: bwrap failed before the
// command ran, or something killed the reporter.
func launcherReport(outer GuardStatus, text string) GuardStatus {
	if !outer.HasExitCode || outer.GuardFailed || outer.NeverStarted {
		return outer
	}
	line, rest, found := strings.Cut(text, "\n")
	if !found || rest != "" || line == "" {
		return GuardStatus{HasExitCode: true, ExitCode: ExitGuardFailed, GuardFailed: true,
			Diagnostic: fmt.Sprintf("the sandbox ended with exit code %d without reporting how the command ended "+
				"(the sandbox could not start it, or its status reporter was killed)", outer.ExitCode)}
	}
	inner := guardReport(line, nil)
	if inner.GuardFailed && !strings.HasPrefix(line, "guard ") {
		inner.HasExitCode, inner.ExitCode = true, ExitGuardFailed
		inner.Diagnostic = "the sandbox's status reporter wrote an unreadable report"
	}
	return inner
}
