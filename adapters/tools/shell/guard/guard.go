// Package guard is the process side of the shell's guards (docs/shell-execution.md, "The
// guard"): a binary executed as Name (a per-command guard) runs Main, one executed as
// SessionName (the session guard, session_linux.go) runs SessionMain, from this package's
// init, and never reaches its own main. The runtime's side (starting a guard, reading its
// report) is in package shell.
//
// The package imports as little as it can, all of it packages that every binary initialises
// early (no fmt, strconv, strings or os/exec): Go initialises packages in import-path order
// as soon as their imports are, so a guard that depends on little takes over the process
// before the rest of the runtime's packages are initialised. That start is paid by every
// command (BenchmarkGuardedRun in package shell).
package guard

import (
	"bytes"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// Name is argv[0] of a guard process.
const Name = "zuno-shell-guard"

// DiagPrefix starts the diagnostic line the guard writes to the command's output.
const DiagPrefix = "zuno-shell-guard: "

// Reserved exit codes (the timeout, env and nohup convention).
const (
	ExitFailed        = 125
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// fds of a guard process: the lifeline's read end, the report's write end, then the files
// the launcher hands the command (placed at fd 3, 4, … of the command).
const (
	LifelineFD = 3
	ReportFD   = 4
	FirstFile  = 5
)

func init() {
	if len(os.Args) > 0 && os.Args[0] == Name {
		os.Exit(Main(os.Args[1:]))
	}
	if len(os.Args) == 1 && os.Args[0] == SessionName {
		os.Exit(SessionMain())
	}
	if isStatusReporter(os.Args) {
		os.Exit(StatusMain(os.Args[0], os.Args[2:]))
	}
}

// Main is the guard process: args are the number of launcher files, "--", and the argv to
// run. It reports one line on ReportFD ("exit N T", "signal N T" with T the Unix time in
// nanoseconds when it saw the command end, or "guard C diagnostic") and returns the exit
// status to mirror: the command's code, 128+N for a signal, or the reserved code C.
func Main(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		return fail(ExitFailed, "invalid arguments")
	}
	nfiles, ok := atoi(args[0])
	if !ok || nfiles > 64 {
		return fail(ExitFailed, "invalid file count")
	}
	// Nothing the guard holds may reach the command except its own files, re-placed at 3, ….
	files := []uintptr{0, 1, 2}
	for fd := LifelineFD; fd < FirstFile+nfiles; fd++ {
		syscall.CloseOnExec(fd)
		if fd >= FirstFile {
			files = append(files, uintptr(fd))
		}
	}
	// Zuno's stop signals reach the whole group: the guard outlives them to report how the
	// command ended. Notify rather than ignore: an ignored disposition would be inherited.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	// The command's parent-death signal follows the forking thread: keep it for the guard's life.
	runtime.LockOSThread()
	becomeSubreaper()
	path, code := lookPath(args[2])
	if code != 0 {
		return fail(code, "could not start "+args[2]+": not found")
	}
	pid, err := syscall.ForkExec(path, args[2:], &syscall.ProcAttr{Env: os.Environ(), Files: files, Sys: commandAttr()})
	if err != nil {
		return fail(startFailureCode(err), "could not start "+args[2]+": "+err.Error())
	}
	for fd := FirstFile; fd < FirstFile+nfiles; fd++ {
		syscall.Close(fd)
	}
	go watchLifeline()
	ws, err := waitFor(pid)
	ended := time.Now().UnixNano()
	for orphaned.Load() {
		time.Sleep(time.Second) // the lifeline's SIGKILL to the group is on its way
	}
	// What left the group is the guard's alone to stop; the group itself is stopped by the
	// runtime (TERM, then KILL after its grace) once the guard reported.
	killDescendants(false)
	switch {
	case err != nil:
		return fail(ExitFailed, "could not wait for the command: "+err.Error())
	}
	line, status := waitLine(ws, ended)
	report(line)
	return status
}

// orphaned is set once the runtime is gone: the guard then never exits on its own, it waits
// for the SIGKILL to its group.
var orphaned atomic.Bool

// watchLifeline kills the guard's whole process group and every descendant (the guard with
// them) once the runtime's end of the lifeline closes: the runtime is gone and no one will
// settle the command.
func watchLifeline() {
	var b [1]byte
	for {
		n, err := syscall.Read(LifelineFD, b[:])
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 {
			// The command must not end, and wake the guard into reporting and exiting,
			// before its group is killed: first what left the group, then the group, the
			// guard in it, at once.
			orphaned.Store(true)
			killDescendants(false)
			_ = syscall.Kill(0, syscall.SIGKILL)
			return
		}
	}
}

// fail writes the guard's diagnostic line to the command's output and to the report, and
// returns code.
func fail(code int, msg string) int {
	msg = string(bytes.ReplaceAll([]byte(msg), []byte("\n"), []byte(" ")))
	_, _ = syscall.Write(2, []byte(DiagPrefix+msg+"\n"))
	report("guard " + itoa(int64(code)) + " " + msg)
	return code
}

func report(line string) {
	_, _ = syscall.Write(ReportFD, []byte(line+"\n"))
}

// lookPath finds a program named without a slash in PATH; it returns a reserved code when
// there is no such executable.
func lookPath(name string) (string, int) { return lookPathIn(name, os.Getenv("PATH")) }

// lookPathIn is lookPath in the directories of path.
func lookPathIn(name, path string) (string, int) {
	if bytes.IndexByte([]byte(name), '/') >= 0 {
		return name, 0
	}
	for _, dir := range bytes.Split([]byte(path), []byte(":")) {
		if len(dir) == 0 {
			dir = []byte(".")
		}
		p := string(dir) + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, 0
		}
	}
	return "", ExitNotFound
}

// startFailureCode maps why the program could not be started onto the reserved codes.
func startFailureCode(err error) int {
	switch err {
	case syscall.ENOENT, syscall.ENOTDIR:
		return ExitNotFound
	case syscall.EACCES, syscall.EPERM, syscall.ENOEXEC, syscall.EISDIR:
		return ExitCannotExecute
	}
	return ExitFailed
}

// killDescendants sends SIGKILL to every descendant of the guard that is outside its process
// group, or to all of them when all is set.
func killDescendants(all bool) {
	own := syscall.Getpgrp()
	for _, p := range descendants(os.Getpid()) {
		if all {
			_ = syscall.Kill(p, syscall.SIGKILL)
		} else if _, pgrp, ok := ProcStat(p); ok && pgrp != own {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// Descendants lists the processes below pid (the runtime ends a session guard that can no
// longer act, and what it started, with it).
func Descendants(pid int) []int { return descendants(pid) }

// descendants lists the processes below pid. It walks /proc/PID/task/TID/children, whose cost
// follows the tree, not the machine; without those files (a kernel built without them) it
// scans every /proc/PID/stat.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		kids, ok := children(queue[0])
		if !ok {
			return scanDescendants(pid)
		}
		queue = append(queue[1:], kids...)
		out = append(out, kids...)
	}
	return out
}

// children reads the children of every thread of pid; ok is false when the kernel has no
// children files. A process that is gone has none.
func children(pid int) (kids []int, ok bool) {
	dir := "/proc/" + itoa(int64(pid)) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, true
	}
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if os.IsNotExist(err) {
			return nil, false
		}
		for _, f := range bytes.Fields(b) {
			if n, ok := atoi(string(f)); ok {
				kids = append(kids, n)
			}
		}
	}
	return kids, true
}

// scanDescendants finds the processes below pid from every process's parent.
func scanDescendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	byParent := map[int][]int{}
	for _, e := range ents {
		p, ok := atoi(e.Name())
		if !ok {
			continue
		}
		if ppid, _, ok := ProcStat(p); ok {
			byParent[ppid] = append(byParent[ppid], p)
		}
	}
	var out []int
	for queue := byParent[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, byParent[queue[0]]...)
	}
	return out
}

// ProcStat returns the parent and the process group of pid from /proc/pid/stat.
func ProcStat(pid int) (ppid, pgrp int, ok bool) {
	_, ppid, pgrp, ok = Stat(pid)
	return ppid, pgrp, ok
}

// Stat returns the state, parent and process group of pid from /proc/pid/stat (the fields
// after the command name, which may itself hold spaces and parentheses).
func Stat(pid int) (state byte, ppid, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + itoa(int64(pid)) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp ...
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	ppid, ok1 := atoi(string(f[1]))
	pgrp, ok2 := atoi(string(f[2]))
	return f[0][0], ppid, pgrp, ok1 && ok2
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
