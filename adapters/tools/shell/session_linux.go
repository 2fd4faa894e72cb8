package shell

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// sessionGuards are this process's session guards (docs/shell-execution.md, "The session
// guard"): started on first use, each serving one command at a time, kept for the next.
var sessionGuards guardPool

// maxIdleGuards bounds the session guards kept idle: as many as commands ran at once, up to
// this; more are stopped when their command ends.
const maxIdleGuards = 4

// guardPool hands out idle session guards and starts new ones.
type guardPool struct {
	mu   sync.Mutex
	idle []*sessionGuard
	// off: a session guard could not be started (its program cannot run here); from then on
	// this process runs every command under a per-command guard, whose start reports why.
	off atomic.Bool
}

// sessionGuard is the runtime's side of one session guard process.
type sessionGuard struct {
	cmd *exec.Cmd
	// conn is the runtime's end of the socket, left blocking: a read waits in the system call
	// and its thread wakes the moment the reply comes, with no trip through Go's network
	// poller (a wakeup fewer per reply, which on a busy machine is most of the guard's
	// cost). Nothing closes it while a read waits: a guard is closed only when idle, or
	// killed (abandon), which ends the read.
	conn  *os.File
	lines *bufio.Reader
	// exited is closed once the process has been waited for (cmd.ProcessState is then set).
	exited chan struct{}
	// children is the guard's /proc/PID/task/PID/children, opened once: read again from its
	// start after every command (hasChildren), one system call instead of an open, a read
	// and a close with a path walk, which was a quarter of the runtime's CPU per command. It
	// names the guard's task, not its pid, so it never reads another process's children.
	// Nil when it could not be opened: the path is opened each time then.
	children *os.File
}

// get returns an idle session guard, or a new one; nil when none can be started.
func (p *guardPool) get() *sessionGuard {
	if p.off.Load() {
		return nil
	}
	p.mu.Lock()
	for len(p.idle) > 0 {
		g := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !g.gone() {
			p.mu.Unlock()
			return g
		}
		g.close()
	}
	p.mu.Unlock()
	g, err := startSessionGuard()
	if err != nil {
		p.off.Store(true)
		return nil
	}
	return g
}

// put keeps g for the next command (or stops it: too many idle).
func (p *guardPool) put(g *sessionGuard) {
	p.mu.Lock()
	if len(p.idle) < maxIdleGuards && !g.gone() {
		p.idle = append(p.idle, g)
		g = nil
	}
	p.mu.Unlock()
	if g != nil {
		g.close()
	}
}

// startSessionGuard starts the guard program (guard.Program) as a session guard, its end of
// a socket pair at guard.SessionFD. It runs in a process group of its own, so a terminal's
// signals to Zuno's group do not reach it, with an empty environment and / as its directory:
// every command brings its own.
func startSessionGuard() (*sessionGuard, error) {
	return startGuardProcess(guard.Program(), guard.SessionName)
}

// startGuardProcess starts program, as argv0, on the runtime's side of a session guard.
func startGuardProcess(program, argv0 string) (*sessionGuard, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "session-guard"), os.NewFile(uintptr(fds[1]), "session-guard")
	cmd := &exec.Cmd{Path: program, Args: []string{argv0}, Dir: "/", Env: []string{},
		ExtraFiles: []*os.File{theirs}, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, err
	}
	started := adoptOrphans(cmd.Process.Pid)
	g := &sessionGuard{cmd: cmd, conn: ours, exited: make(chan struct{})}
	g.lines = bufio.NewReaderSize(g.conn, 4096)
	g.children, _ = os.Open(childrenPath(cmd.Process.Pid))
	go func() {
		_ = cmd.Wait()
		if g.children != nil {
			g.children.Close() // a read under way finishes first (os.File counts its users)
		}
		if !cmd.ProcessState.Success() {
			// Killed (by its own command: kill -9 $PPID), or failed: what was below it was
			// re-parented here and nothing has cleared it (docs/shell-execution.md, "The
			// guard dies"). Before exited closes, so a call settled as the guard's loss
			// returns with its daemons gone.
			sweepOrphans(started)
		}
		close(g.exited)
	}()
	go g.watchStops()
	return g, nil
}

// watchStops ends g if its process is ever stopped (SIGSTOP: a command of the same user can
// send it to its parent, `kill -STOP $PPID`). A stopped guard neither starts, reports nor
// notices the lifeline, and would hold its call forever: it is killed with everything below
// it at once, and its call settles with no verdict. The wait ends when g is reaped.
func (g *sessionGuard) watchStops() {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(g.cmd.Process.Pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WSTOPPED, 0, 0)
		switch errno {
		case syscall.EINTR:
			continue
		case 0:
			g.kill()
		}
		return
	}
}

// pPID is P_PID (sys/wait.h): waitid for one process.
const pPID = 1

// kill SIGKILLs every process below g, then g itself: what g's lifeline would do, done by
// the runtime for a guard that cannot. Its socket then closes, which ends a read of a reply.
func (g *sessionGuard) kill() {
	pid := g.cmd.Process.Pid
	for range 3 { // a process that forked while the list was read is in the next one
		for _, p := range guard.Descendants(pid) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	_ = g.cmd.Process.Kill()
}

// clearBelow kills whatever is still below g once its command has settled: every descendant
// of a guard is its one command's, and the caller has stopped the command's group, so what is
// left is a process that left the group after the guard's own sweep at the report (a setsid
// it had not yet made when the command ended). The guard would kill it before its next
// command; this kills it now, since a next command may never come. One read when nothing is
// left: the guard's children (orphans are re-parented to its main thread, which forks every
// command).
func (g *sessionGuard) clearBelow() {
	if !g.hasChildren() {
		return
	}
	for range 3 { // a process that forked while the list was read is in the next one
		for _, p := range guard.Descendants(g.cmd.Process.Pid) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// hasChildren reads the guard's children (true when they cannot be read): one system call, no
// allocation, since it runs after every command.
func (g *sessionGuard) hasChildren() bool {
	var b [1]byte
	if g.children != nil {
		n, err := g.children.ReadAt(b[:], 0)
		return n > 0 || (err != nil && err != io.EOF)
	}
	fd, err := syscall.Open(childrenPath(g.cmd.Process.Pid), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, b[:])
	return err != nil || n > 0
}

// childrenPath lists the children of pid's main thread, which forks every command and to
// which orphans are re-parented.
func childrenPath(pid int) string {
	p := strconv.Itoa(pid)
	return "/proc/" + p + "/task/" + p + "/children"
}

func (g *sessionGuard) gone() bool {
	select {
	case <-g.exited:
		return true
	default:
		return false
	}
}

// close stops g: its lifeline closes, it kills whatever it still has and exits.
func (g *sessionGuard) close() { g.conn.Close() }

// state is how g's process ended, waiting up to d for it; nil if it has not.
func (g *sessionGuard) state(d time.Duration) *os.ProcessState {
	select {
	case <-g.exited:
		return g.cmd.ProcessState
	case <-time.After(d):
		return nil
	}
}

// errBusy: the session guard started nothing and is exiting; another one is asked.
var errBusy = errors.New("the session guard could not clear its last command's processes")

// errStale: the session guard cannot read a request that splits the command's fd 1 and 2 (a
// zuno-guard older than this zuno); it started nothing and serves the next request.
var errStale = errors.New("the session guard does not know a split request")

// send writes a request with its descriptors: out (the command's fd 1, and 2 unless errOut
// is set), errOut, and files (its fd 3, …).
func (g *sessionGuard) send(mode, dir string, argv, env []string, out, errOut *os.File, files []*os.File) error {
	fds := []int{int(out.Fd())}
	if errOut != nil {
		fds = append(fds, int(errOut.Fd()))
	}
	header, body := guard.EncodeRequest(mode, dir, argv, env, errOut != nil, len(fds)+len(files))
	for _, f := range files {
		fds = append(fds, int(f.Fd()))
	}
	// Header and body in one message: the guard then finds the body already there when it
	// has read the header, and does not wait (a wakeup) for a second write.
	msg := append(header, body...)
	n, err := syscall.SendmsgN(int(g.conn.Fd()), msg, syscall.UnixRights(fds...), nil, syscall.MSG_NOSIGNAL)
	runtime.KeepAlive(out)
	runtime.KeepAlive(errOut)
	runtime.KeepAlive(files)
	if err == nil && n < len(msg) {
		_, err = g.conn.Write(msg[n:]) // a body larger than the socket's buffer
	}
	return err
}

// line reads one reply line.
func (g *sessionGuard) line() (string, error) {
	s, err := g.lines.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(s, "\n"), nil
}

// sessionRun is a command started by a session guard.
type sessionRun struct {
	g      *sessionGuard
	pid    int    // 0: the guard could not start the command
	final  string // the report line ("" until wait, and when the guard is gone)
	lost   bool   // the guard is gone: no report will come
	status *os.File
}

func (s *sessionRun) pgid() int     { return s.pid }
func (s *sessionRun) guardPid() int { return s.g.cmd.Process.Pid }

// abandon kills the guard and everything below it: its socket closes, so wait returns
// without a report (no verdict, the guard's signal), and the guard is never used again.
func (s *sessionRun) abandon() { s.g.kill() }

// reported says wait would return at once: nothing was started, the guard is gone, or the
// report is already read into the buffer (it came with "pid P").
func (s *sessionRun) reported() bool {
	if s.pid == 0 || s.lost {
		return true
	}
	n := s.g.lines.Buffered()
	if n == 0 {
		return false
	}
	b, _ := s.g.lines.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

func (s *sessionRun) wait() error {
	if s.pid == 0 {
		return nil
	}
	line, err := s.g.line()
	s.final, s.lost = line, err != nil
	return nil
}

// settle is the verdict from the report, and returns the guard to the pool: the runtime has
// stopped the command's group, so nothing of this command is the guard's any more but what it
// clears itself before the next one. A guard that is gone ended without a report: how its
// process ended decides (a signal, or a guard failure), as for a per-command guard.
func (s *sessionRun) settle(error) (GuardStatus, error) {
	var ps *os.ProcessState
	if s.lost {
		s.g.close()
		ps = s.g.state(statusWait)
	} else {
		s.g.clearBelow()
		sessionGuards.put(s.g)
	}
	gs := guardReport(s.final, ps)
	if s.status != nil {
		gs = launcherReport(gs, readStatus(s.status))
		s.status = nil
	}
	return gs, nil
}

// startSession starts p under a session guard, writing to out (and errOut, when not nil, for
// fd 2). ok is false when no session guard could take it and nothing was started: the caller
// runs the per-command guard.
func (r *Runner) startSession(p prepared, out, errOut *os.File) (run guardedRun, ok bool, err error) {
	dir := p.dir
	if dir == "" {
		// The per-command guard inherits Zuno's directory at the start; a session guard is
		// told it.
		if dir, err = os.Getwd(); err != nil {
			return nil, false, nil
		}
	}
	mode := guard.ModeSetpgid
	if r.newSession() {
		mode = guard.ModeSetsid
	}
	env := dedupEnv(p.env)
	for attempt := 0; attempt < 2; attempt++ {
		g := sessionGuards.get()
		if g == nil {
			return nil, false, nil
		}
		run, err := g.start(mode, dir, p, env, out, errOut)
		if err == errStale {
			// A zuno-guard older than this zuno cannot read the request: a guard of its own
			// (whose protocol has not changed) runs the command.
			sessionGuards.put(g)
			return nil, false, nil
		}
		if err == errBusy || (err != nil && run == nil && !errors.As(err, new(*Error))) {
			g.close() // nothing was started: it could not take a request
			continue
		}
		return run, true, err
	}
	return nil, false, nil
}

// start sends one request and reads the guard's answer to it. A nil run with a nil or
// non-*Error error means nothing was started and the guard is unusable.
func (g *sessionGuard) start(mode, dir string, p prepared, env []string, out, errOut *os.File) (guardedRun, error) {
	if err := g.send(mode, dir, p.argv, env, out, errOut, p.files); err != nil {
		return nil, err
	}
	line, err := g.line()
	switch {
	case err != nil:
		// Gone after the request was read: it may have started the command (which its death
		// then killed). No verdict, as for a per-command guard that died.
		CloseFiles(p.files)
		return &sessionRun{g: g, lost: true, status: p.status}, nil
	case line == guard.ReplyBusy:
		return nil, errBusy
	case line == guard.ReplyInvalid && errOut != nil:
		return nil, errStale
	case strings.HasPrefix(line, guard.ReplyError+" "):
		sessionGuards.put(g)
		CloseFiles(p.files)
		closeStatus(p.status)
		return nil, &Error{Code: CodeExecFailed, Msg: "start the command",
			Err: errors.New(strings.TrimPrefix(line, guard.ReplyError+" "))}
	case strings.HasPrefix(line, guard.ReplyPID+" "):
		pid, err := strconv.Atoi(strings.TrimPrefix(line, guard.ReplyPID+" "))
		CloseFiles(p.files)
		if err != nil || pid <= 0 {
			g.close()
			return &sessionRun{g: g, lost: true, status: p.status}, nil
		}
		return &sessionRun{g: g, pid: pid, status: p.status}, nil
	}
	CloseFiles(p.files)
	if !strings.HasPrefix(line, "guard ") {
		// Not a reply: a guard that says this cannot be trusted with another command.
		g.close()
		return &sessionRun{g: g, lost: true, status: p.status}, nil
	}
	// A start failure in the guard's format ("guard C …"): its report decides, as for a
	// per-command guard.
	return &sessionRun{g: g, final: line, status: p.status}, nil
}
