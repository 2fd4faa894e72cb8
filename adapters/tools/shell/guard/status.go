package guard

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// The sandbox's status reporter (docs/sandbox.md, "How a confined command ended"). Under
// bubblewrap with a private pid namespace the command is not the guard's child: bwrap's init
// (pid 1 inside) waits for it and exits with 128+N when a signal killed it, so the guard sees
// an ordinary exit code, indistinguishable from a command that chose `exit 137`. The launcher
// therefore runs the command under this reporter inside the sandbox: this very binary,
// executed through an open descriptor (/proc/self/fd/E, so it needs no path inside the
// sandbox), which waits for the command and writes the real wait status, in the guard's
// report format, on a pipe only the runtime reads.

// StatusName is argv[1] of a status reporter; argv[0] is /proc/self/fd/E, the descriptor
// it was executed through.
const StatusName = "zuno-sandbox-status"

// execByFD is how a status reporter's argv[0] begins.
const execByFD = "/proc/self/fd/"

// isStatusReporter reports whether args (os.Args) start a status reporter.
func isStatusReporter(args []string) bool {
	return len(args) > 1 && args[1] == StatusName && len(args[0]) > len(execByFD) &&
		args[0][:len(execByFD)] == execByFD
}

// StatusMain is the status reporter: args are the report's descriptor S, "--", and the argv
// to run; exeArg is argv[0] (/proc/self/fd/E). It writes one line on S ("exit N T",
// "signal N T", or "guard C diagnostic" when it could not run the command) and returns the
// status bwrap's init passes on (the command's code, 128+N for a signal).
func StatusMain(exeArg string, args []string) int {
	exeFD, okExe := atoi(exeArg[len(execByFD):])
	if len(args) < 3 || args[1] != "--" {
		return diagnose(-1, ExitFailed, "status reporter: invalid arguments")
	}
	fd, ok := atoi(args[0])
	if !ok || !okExe || fd < 3 || fd == exeFD {
		return diagnose(-1, ExitFailed, "status reporter: invalid descriptors")
	}
	// Neither the report's end nor this binary's descriptor reaches the command. Not
	// dumpable: the command (same user) cannot open this process's descriptors through
	// /proc/PID/fd and write a report of its own.
	syscall.CloseOnExec(fd)
	syscall.CloseOnExec(exeFD)
	setNotDumpable()
	// Zuno's stop signals reach the whole group, this process too: it outlives them to
	// report how the command ended (as the guard does).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	runtime.LockOSThread() // the command's parent-death signal follows this thread
	path, code := lookPath(args[2])
	if code != 0 {
		return diagnose(fd, code, "could not start "+args[2]+" in the sandbox: not found")
	}
	pid, err := syscall.ForkExec(path, args[2:], &syscall.ProcAttr{Env: os.Environ(),
		Files: []uintptr{0, 1, 2}, Sys: commandAttr()})
	if err != nil {
		return diagnose(fd, startFailureCode(err), "could not start "+args[2]+" in the sandbox: "+err.Error())
	}
	ws, err := waitFor(pid)
	if err != nil {
		return diagnose(fd, ExitFailed, "status reporter: could not wait for the command: "+err.Error())
	}
	line, status := waitLine(ws, time.Now().UnixNano())
	writeLine(fd, line)
	return status
}

// waitLine is the report line of a wait status seen at ended (Unix nanoseconds) and the exit
// status that mirrors it.
func waitLine(ws syscall.WaitStatus, ended int64) (string, int) {
	if ws.Signaled() {
		return "signal " + itoa(int64(ws.Signal())) + " " + itoa(ended), 128 + int(ws.Signal())
	}
	return "exit " + itoa(int64(ws.ExitStatus())) + " " + itoa(ended), ws.ExitStatus()
}

// waitFor waits for pid to end, through interrupted waits.
func waitFor(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return ws, err
		}
	}
}

// diagnose writes the reporter's diagnostic to the command's output and, when fd is valid,
// to the report, and returns code.
func diagnose(fd, code int, msg string) int {
	_, _ = syscall.Write(2, []byte(DiagPrefix+msg+"\n"))
	if fd >= 0 {
		writeLine(fd, "guard "+itoa(int64(code))+" "+msg)
	}
	return code
}

func writeLine(fd int, line string) {
	_, _ = syscall.Write(fd, []byte(line+"\n"))
}
