package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The guard (docs/shell-execution.md, "The guard"): every command, foreground or background,
// runs as the child of a small guard process, which is this very binary re-executed under the
// name GuardName. The guard leads the command's process group and binds that group to the
// runtime's lifetime:
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

// GuardName is argv[0] of a guard process.
const GuardName = "zuno-shell-guard"

// guardDiagPrefix starts the diagnostic line the guard writes to the command's output.
const guardDiagPrefix = "zuno-shell-guard: "

// Guard exit codes (reserved: see guardReport for how they are told apart from a command's).
const (
	ExitGuardFailed   = 125
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// fds of a guard process: the lifeline's read end, the report's write end, then the files
// the launcher hands the command (placed at fd 3, 4, … of the command).
const (
	guardLifelineFD = 3
	guardReportFD   = 4
	guardFirstFile  = 5
)

func init() {
	if len(os.Args) > 0 && os.Args[0] == GuardName {
		os.Exit(guardMain(os.Args[1:]))
	}
}

// guard is the runtime's side of one guard process.
type guard struct {
	lifeline *os.File // write end: kept open while the command may run
	report   *os.File // read end
	children []*os.File
}

// guardedCommand returns the command that runs argv (with files at fd 3, …) under a guard.
// After Start the caller calls g.started(); after Wait, g.settle.
func guardedCommand(argv []string, files []*os.File) (*exec.Cmd, *guard, error) {
	exe, err := guardExecutable()
	if err != nil {
		return nil, nil, err
	}
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
	return cmd, &guard{lifeline: lw, report: rr, children: []*os.File{lr, rw}}, nil
}

// guardExecutable is this binary: on Linux /proc/self/exe, which still works when the file
// was replaced or deleted since the runtime started.
func guardExecutable() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// started closes the runtime's copies of the guard's ends of both pipes.
func (g *guard) started() {
	CloseFiles(g.children)
	g.children = nil
}

// abandon releases everything when the guard could not be started.
func (g *guard) abandon() {
	g.started()
	g.lifeline.Close()
	g.report.Close()
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
// runtime's ends. ps is the guard's process state (nil when wait failed).
func (g *guard) settle(ps *os.ProcessState) GuardStatus {
	g.lifeline.Close()
	line, _ := bufio.NewReader(io.LimitReader(g.report, 4096)).ReadString('\n')
	g.report.Close()
	return guardReport(strings.TrimSuffix(line, "\n"), ps)
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

// guardMain is the guard process: args are the number of launcher files, "--", and the argv
// to run. It returns the exit status to report.
func guardMain(args []string) int {
	report := os.NewFile(guardReportFD, "report")
	if len(args) < 3 || args[1] != "--" {
		return guardFail(report, ExitGuardFailed, "invalid arguments")
	}
	nfiles, err := strconv.Atoi(args[0])
	if err != nil || nfiles < 0 || nfiles > 64 {
		return guardFail(report, ExitGuardFailed, "invalid file count")
	}
	// Nothing the guard holds may reach the command except its own files, re-placed at 3, ….
	for fd := guardLifelineFD; fd < guardFirstFile+nfiles; fd++ {
		syscall.CloseOnExec(fd)
	}
	ignoreStops()
	files := make([]*os.File, nfiles)
	for i := range files {
		files[i] = os.NewFile(uintptr(guardFirstFile+i), "launcher")
	}
	// The command's parent-death signal follows this thread: keep it for the guard's life.
	runtime.LockOSThread()
	argv := args[2:]
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return guardFail(report, startFailureCode(err), fmt.Sprintf("could not start %s: %v", argv[0], err))
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout,
		Stderr: os.Stderr, ExtraFiles: files, SysProcAttr: commandAttr()}
	becomeSubreaper()
	if err := cmd.Start(); err != nil {
		return guardFail(report, startFailureCode(err), fmt.Sprintf("could not start %s: %v", argv[0], err))
	}
	CloseFiles(files)
	go watchLifeline(os.NewFile(guardLifelineFD, "lifeline"))
	waitErr := cmd.Wait()
	ended := time.Now().UnixNano()
	// What left the group is the guard's alone to stop; the group itself is stopped by the
	// runtime (TERM, then KILL after its grace) once the guard reported.
	killDescendants(os.Getpid(), false)
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case waitErr != nil && cmd.ProcessState == nil, !ok:
		return guardFail(report, ExitGuardFailed, fmt.Sprintf("could not wait for the command: %v", waitErr))
	case ws.Signaled():
		fmt.Fprintf(report, "signal %d %d\n", int(ws.Signal()), ended)
		return 128 + int(ws.Signal())
	}
	fmt.Fprintf(report, "exit %d %d\n", ws.ExitStatus(), ended)
	return ws.ExitStatus()
}

// ignoreStops keeps the guard alive through the stop signals Zuno sends the group (the
// command gets them too) so it can still report how the command ended. Notify rather than
// ignore: an ignored disposition would be inherited by the command.
func ignoreStops() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
}

// watchLifeline kills the guard's whole process group (the guard with it) once the runtime's
// end of the lifeline closes: the runtime is gone and no one will settle the command.
func watchLifeline(f *os.File) {
	var b [1]byte
	for {
		if _, err := f.Read(b[:]); err != nil {
			killDescendants(os.Getpid(), true)
			_ = syscall.Kill(0, syscall.SIGKILL)
			return
		}
	}
}

// killDescendants sends SIGKILL to every descendant of pid (found through /proc) that is
// outside pid's process group, or to all of them when all is set.
func killDescendants(pid int, all bool) {
	children := map[int][]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := procPPID(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	pgid := syscall.Getpgrp()
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		if _, pg, ok := procStat(p); ok && (all || pg != pgid) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		queue = append(queue, children[p]...)
	}
}

// startFailureCode maps why the program could not be started onto the reserved codes.
func startFailureCode(err error) int {
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, exec.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR):
		return ExitCannotExecute
	}
	return ExitGuardFailed
}

// guardFail writes the guard's diagnostic line to the command's output and to the report,
// and returns code.
func guardFail(report io.Writer, code int, msg string) int {
	msg = strings.ReplaceAll(msg, "\n", " ")
	fmt.Fprintf(os.Stderr, "%s%s\n", guardDiagPrefix, msg)
	fmt.Fprintf(report, "guard %d %s\n", code, msg)
	return code
}
