package guard

import (
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// session is the state a session guard's goroutines share.
type session struct {
	// forkMu orders a fork against the lifeline's loss: once lost is set under it, no command
	// is started, so the sweep that follows sees every process there will be.
	forkMu sync.Mutex
	lost   atomic.Bool
	once   sync.Once
	// current is the running command's process group (0: none).
	current atomic.Int64
	// running is held while a request is served: only then may its waits reap, so that the
	// idle reaper never takes a command's status from under it.
	running sync.Mutex
	// idleReaping: a reapIdle goroutine is waiting (at most one).
	idleReaping atomic.Bool
}

// SessionMain is the session guard: it serves requests from the runtime on SessionFD until
// the runtime's end closes, then kills every process it has started and exits.
//
// The main goroutine reads each request itself (one wakeup per request, no hand-off between
// threads: that wakeup is most of what the guard adds to a command's start on a busy
// machine); watchLifeline notices the runtime's end closing while a command runs, and
// reapIdle, started only after a command that left processes below the guard, collects them
// once the runtime has stopped them.
func SessionMain() int {
	syscall.CloseOnExec(SessionFD)
	// Not dumpable: a command (same user) can neither trace this process nor reach its
	// descriptors through /proc/PID/fd.
	setNotDumpable()
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	// Every command is forked from this goroutine's thread, which lives as long as the
	// guard: the commands' parent-death signal follows the forking thread.
	runtime.LockOSThread()
	becomeSubreaper()
	s := &session{}
	go s.watchLifeline()
	for {
		r, err := readRequest(SessionFD)
		if err != nil {
			s.lifelineLost()
		}
		s.serve(r)
	}
}

// watchLifeline waits for the runtime's end of the socket to close (POLLRDHUP: the peer is
// gone; a request waiting to be read does not wake it).
func (s *session) watchLifeline() {
	fds := []pollFd{{fd: SessionFD, events: pollRdHup}}
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, 0, 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 || fds[0].revents&(pollRdHup|pollHup|pollErr|pollNval) != 0 {
			s.lifelineLost()
		}
	}
}

// pollFd is struct pollfd (poll.h).
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

// poll.h's event bits.
const (
	pollIn    = 0x1
	pollErr   = 0x8
	pollHup   = 0x10
	pollNval  = 0x20
	pollRdHup = 0x2000
)

// reapIdle collects the children that end between commands (what the runtime stopped after
// the last one, which left them), and returns when none is left or a command starts (whose own
// waits then reap). It is started by a report that leaves processes below the guard, not kept
// waiting for SIGCHLD: a goroutine woken by every command's end was a share of the guard's own
// cost per command (docs/shell-execution.md, "Cost").
func (s *session) reapIdle() {
	if !s.idleReaping.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.idleReaping.Store(false)
		for waitExited() {
			if !s.running.TryLock() {
				return
			}
			left := reap()
			s.running.Unlock()
			if !left {
				return
			}
		}
	}()
}

// waitExited blocks until a child has ended, leaving it to be reaped (WNOWAIT); false when
// there is no child.
func waitExited() bool {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, unix.P_ALL, 0, uintptr(unsafe.Pointer(&info[0])),
			unix.WEXITED|unix.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return errno == 0
		}
	}
}

// received is one request as read, with the descriptors that came with it.
type received struct {
	body []byte
	fds  []int
}

// readRequest reads one frame. Descriptors arrive close-on-exec, so none reaches a command
// unless placed there.
func readRequest(fd int) (received, error) {
	var r received
	head := make([]byte, requestHeader)
	oob := make([]byte, syscall.CmsgSpace(4*maxRequestFiles))
	for got := 0; got < requestHeader; {
		n, oobn, flags, _, err := syscall.Recvmsg(fd, head[got:], oob, syscall.MSG_CMSG_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			closeAll(r.fds)
			return r, errLifeline
		}
		r.fds = append(r.fds, rights(oob[:oobn])...)
		if flags&syscall.MSG_CTRUNC != 0 {
			closeAll(r.fds)
			return r, errLifeline // more descendants than a request may carry
		}
		got += n
	}
	size := getUint32(head[0:4])
	if size > maxRequestBody || int(getUint32(head[4:8])) != len(r.fds) {
		closeAll(r.fds)
		return r, errLifeline // a runtime that sends this is not one to serve
	}
	r.body = make([]byte, size)
	for got := 0; got < len(r.body); {
		n, err := syscall.Read(fd, r.body[got:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			closeAll(r.fds)
			return r, errLifeline
		}
		got += n
	}
	return r, nil
}

var errLifeline = syscall.EPIPE

func rights(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

// lifelineLost kills the running command's group and every process below the guard, until
// none is left, and exits: the runtime is gone and no one will settle a command.
func (s *session) lifelineLost() {
	s.once.Do(func() {
		s.forkMu.Lock()
		s.lost.Store(true)
		s.forkMu.Unlock()
		if pg := int(s.current.Load()); pg > 0 {
			_ = syscall.Kill(-pg, syscall.SIGKILL)
		}
		sweep(5 * time.Second)
		os.Exit(0)
	})
	select {} // another goroutine's sweep and exit are under way
}

// serve runs one request: clears what the previous command left, starts the command and
// reports how it ended.
func (s *session) serve(r received) {
	s.running.Lock()
	defer s.running.Unlock()
	defer func() { closeAll(r.fds) }()
	if !clear() {
		// Something survived SIGKILL for the whole bound: this guard can no longer tell
		// whose its descendants are. Nothing was started; the runtime uses another guard.
		reply(ReplyBusy)
		s.lifelineLost()
	}
	req, ok := decodeRequest(r.body)
	outputs := 1
	if req.split {
		outputs = 2
	}
	if !ok || len(r.fds) < outputs || len(r.fds) > maxRequestFiles {
		reply(ReplyInvalid)
		return
	}
	out, errOut := r.fds[0], r.fds[outputs-1]
	if err := syscall.Chdir(req.dir); err != nil {
		reply(ReplyError + " could not enter the working directory " + req.dir + ": " + err.Error())
		return
	}
	path, code := lookPathIn(req.argv[0], pathOf(req.env))
	if code != 0 {
		_ = syscall.Chdir("/")
		s.startFailed(errOut, code, "could not start "+req.argv[0]+": not found")
		return
	}
	files := []uintptr{0, uintptr(out), uintptr(errOut)}
	for _, fd := range r.fds[outputs:] {
		files = append(files, uintptr(fd))
	}
	attr := commandAttr()
	attr.Setsid, attr.Setpgid = req.setsid, !req.setsid
	s.forkMu.Lock()
	if s.lost.Load() {
		s.forkMu.Unlock()
		_ = syscall.Chdir("/")
		select {} // the lifeline's sweep and exit are under way
	}
	pid, err := syscall.ForkExec(path, req.argv, &syscall.ProcAttr{Env: req.env, Files: files, Sys: attr})
	if err == nil {
		s.current.Store(int64(pid))
	}
	s.forkMu.Unlock()
	_ = syscall.Chdir("/") // no command's directory is held between commands
	if err != nil {
		s.startFailed(errOut, startFailureCode(err), "could not start "+req.argv[0]+": "+err.Error())
		return
	}
	closeAll(r.fds)
	r.fds = nil
	s.report(pid)
}

// announceAfter is how long a command may run before the guard says it started ("pid P"). A
// command that ends sooner (most of an agent's: echo, cat, ls) gets its "pid P" and its report
// in one write, so the runtime wakes once for it, not twice; a longer one is announced when
// the delay runs out. Until then the runtime cannot signal the command: its timeout and
// cancellation act this much later at most.
const announceAfter = 5 * time.Millisecond

// report waits for the command, reaping every other descendant that ends meanwhile, kills
// what left the command's group, and reports. The group itself is stopped by the runtime
// (TERM, then KILL after its grace), as under the per-command guard.
//
// The first announceAfter is waited for on a pidfd of the command, from this thread: no timer
// and no other goroutine, whose wakeups were a share of the guard's own cost per command
// (docs/shell-execution.md, "Cost"). Without a pidfd (a kernel before 5.3) the command is
// announced at once.
func (s *session) report(pid int) {
	// pidLine is written with the report, unless the command is announced before it ends.
	pidLine := ReplyPID + " " + itoa(int64(pid)) + "\n"
	if !endsWithin(pid, announceAfter) {
		if s.lost.Load() {
			select {} // the lifeline's sweep and exit are under way
		}
		_, _ = syscall.Write(SessionFD, []byte(pidLine))
		pidLine = ""
	}
	var ws syscall.WaitStatus
	for {
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR || (err == nil && got != pid) {
			continue
		}
		if err != nil {
			s.waitFailed(pidLine, err)
			return
		}
		break
	}
	ended := time.Now().UnixNano()
	if s.lost.Load() {
		select {} // the lifeline's sweep and exit are under way
	}
	if reap() {
		// Descendants are left (a command that left nothing has no child any more, and
		// then nothing below the guard needs looking at): what left the group is killed
		// now, the rest by the runtime, and all of it is reaped once it has ended.
		killOutside(pid)
		s.reapIdle()
	}
	s.current.Store(0)
	line, _ := waitLine(ws, ended)
	_, _ = syscall.Write(SessionFD, []byte(pidLine+line+"\n"))
}

// endsWithin reports whether the child pid ended within d (it is not reaped: its status is
// left for the wait). False when no pidfd can be had.
func endsWithin(pid int, d time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	fds := []pollFd{{fd: int32(fd), events: pollIn}}
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		ts := syscall.NsecToTimespec(int64(left))
		n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1,
			uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		switch {
		case errno == syscall.EINTR:
		case errno != 0:
			return false
		default:
			return n > 0
		}
	}
}

func (s *session) waitFailed(pidLine string, err error) {
	if s.lost.Load() {
		select {}
	}
	_, _ = syscall.Write(SessionFD, []byte(pidLine+"guard "+itoa(ExitFailed)+" could not wait for the command: "+err.Error()+"\n"))
}

// startFailed is a command that could not be started: the diagnostic goes to its output and
// the report, as the per-command guard's does.
func (s *session) startFailed(out, code int, msg string) {
	_, _ = syscall.Write(out, []byte(DiagPrefix+msg+"\n"))
	reply("guard " + itoa(int64(code)) + " " + msg)
}

func reply(line string) {
	_, _ = syscall.Write(SessionFD, []byte(line+"\n"))
}

// reap collects every child that has ended; it reports whether any child is left.
func reap() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil: // ECHILD: no child at all
			return false
		case pid == 0:
			return true
		}
	}
}

// clear makes sure nothing of an earlier command is left before the next starts, so that
// every descendant of the guard belongs to the command it runs. The runtime has stopped the
// last command's group before it sends another request; anything still there (a process
// that left the group after the guard's own sweep) is killed now.
func clear() bool {
	if !reap() {
		return true
	}
	return sweep(2 * time.Second)
}

// sweep SIGKILLs every descendant and reaps them until none is left, within bound.
func sweep(bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for {
		if !reap() {
			return true
		}
		for _, p := range descendants(os.Getpid()) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// killOutside SIGKILLs every descendant outside process group pgid: what left the command's
// group (setsid, setpgid), re-parented to this subreaper.
func killOutside(pgid int) {
	for _, p := range descendants(os.Getpid()) {
		if _, pgrp, ok := ProcStat(p); ok && pgrp != pgid {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}
