package shell

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// The runtime as the reaper of last resort (docs/shell-execution.md, "The guard dies"). A
// command runs as Zuno's user, so it can SIGKILL its own guard; what it had started outside
// its process group (a setsid daemon) was then re-parented to init and outlived the call.
// With this process a child subreaper (PR_SET_CHILD_SUBREAPER), those orphans are
// re-parented here instead, and killed when the guard's end is seen.
//
// This process reaps only what it did not start itself: os/exec holds a pidfd for every
// child it started until its Wait has reaped it, so a child of this process with no pidfd
// held here is an orphan, and nobody else waits for it. Each is SIGKILLed and reaped by its
// own pid (waitid(P_PID)), never by wait(-1), which would take exit statuses os/exec waits
// for.
var reaper struct {
	once sync.Once
	// on: this process is a child subreaper and sweeps. Off where os/exec holds no pidfd
	// (a kernel older than 5.3, or one that forbids them): an orphan could then not be told
	// from a child os/exec waits for, so nothing is adopted and nothing is swept.
	on atomic.Bool
	// mu: one sweep at a time (each reaps what it killed).
	mu sync.Mutex
}

// adoptOrphans makes this process a child subreaper, once, when its first guard has
// started: guardPid, an os/exec child, shows whether os/exec holds pidfds here. It returns
// the guard's start time (clock ticks since boot; 0 when unknown), which its sweep is given:
// see sweepOrphans.
func adoptOrphans(guardPid int) uint64 {
	reaper.once.Do(func() {
		syscall.ForkLock.RLock()
		held := heldPids()
		syscall.ForkLock.RUnlock()
		if !held[guardPid] {
			return
		}
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno == 0 {
			reaper.on.Store(true)
			go reapOnSIGCHLD()
		}
	})
	if !reaper.on.Load() {
		return 0
	}
	started, _ := startTime(guardPid) // its pidfd is held: the pid is still the guard's
	return started
}

// reapOnSIGCHLD reaps the orphans that end on their own, when they end. Every descendant of
// this process is adopted, not only a guard's: a helper that an MCP server, a hook or git
// detaches (git's background gc) is re-parented here when its parent exits, and a zombie of
// this process until someone reaps it; in a long-running `zuno serve` where no guard dies
// they would pile up (found by review, issue 32). An orphan's end sends SIGCHLD here, as
// any child's does; signals coalesce, so each wakeup looks at every child.
func reapOnSIGCHLD() {
	ended := make(chan os.Signal, 1)
	signal.Notify(ended, syscall.SIGCHLD)
	for range ended {
		if anyZombieChild() {
			reapZombieOrphans()
		}
	}
}

// anyZombieChild: a cheap look before reapZombieOrphans reads the pidfds (most SIGCHLDs are
// an os/exec child's end, waited for already or about to be).
func anyZombieChild() bool {
	for _, pid := range ownChildren() {
		if state, _, _, ok := guard.Stat(pid); ok && state == 'Z' {
			return true
		}
	}
	return false
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// orphanSweepBound bounds a sweep: a process stuck in the kernel (uninterruptible sleep) is
// left for the next one rather than holding the call.
const orphanSweepBound = 5 * time.Second

// sweepOrphans SIGKILLs every orphan re-parented to this process and reaps it, until none
// is left: run when a guard ended without having cleared what is below it (it was killed).
// Killing an orphan re-parents its own children here, so each round takes the next
// generation, and a daemon that forks again is taken with its children; nothing is
// signalled but this process's own children, which no one else reaps, so no pid can have
// been reused in between.
//
// guardStarted is the dead guard's start time (adoptOrphans; 0: unknown, every orphan is
// taken). What the guard left was started after it, every generation; an orphan started
// before it is no descendant of it (a daemon an MCP server, a hook or another tool detached,
// adopted here since this process is a subreaper) and is spared (found by review, issue 32).
// An orphan started in the guard's own clock tick is taken: the doubt goes to the sweep.
func sweepOrphans(guardStarted uint64) {
	if !reaper.on.Load() {
		return
	}
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	deadline := time.Now().Add(orphanSweepBound)
	for {
		orphans := startedSince(orphanChildren(false), guardStarted)
		if len(orphans) == 0 {
			return
		}
		for _, pid := range orphans {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, pid := range orphans {
			if !reapPid(pid, deadline) {
				return
			}
		}
	}
}

// startedSince keeps the processes started at or after since (all of them for 0, and any
// whose start cannot be read: it has ended, and is taken to be reaped).
func startedSince(pids []int, since uint64) []int {
	if since == 0 {
		return pids
	}
	kept := pids[:0]
	for _, pid := range pids {
		if started, ok := startTime(pid); !ok || started >= since {
			kept = append(kept, pid)
		}
	}
	return kept
}

// startTime is pid's start time, in clock ticks since boot (/proc/PID/stat, field 22).
func startTime(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command's name may hold anything but its end
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:]) // field 3 (state) on
	if len(f) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(f[19]), 10, 64)
	return v, err == nil
}

// reapZombieOrphans reaps the orphans that have ended, and leaves the living ones: run when a
// per-command guard ended normally, since what it left in the command's group was
// re-parented here and then stopped by the runtime (ReapGroup), each leaving its exit status.
func reapZombieOrphans() {
	if !reaper.on.Load() {
		return
	}
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	for _, pid := range orphanChildren(true) {
		reapPid(pid, time.Time{})
	}
}

// reapPid waits for the orphan pid (its own status, WEXITED), until deadline (the zero time:
// only if it has ended already); false when it has not ended by then.
func reapPid(pid int, deadline time.Time) bool {
	for {
		var info [128]byte // siginfo_t; si_pid is 0 while the child has not ended
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOHANG, 0, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0: // ECHILD: already reaped
			return true
		case *(*int32)(unsafe.Pointer(&info[16])) != 0: // si_pid (after signo, errno, code)
			return true
		case !time.Now().Before(deadline):
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// orphanChildren lists this process's children that it holds no pidfd for (only the ended
// ones: zombies). The fork lock is held while they are read, so no os/exec start is between
// its clone and the pidfd it keeps.
func orphanChildren(zombies bool) []int {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	// The pidfds before the children: os/exec's Wait reaps a child and only then closes its
	// pidfd, so a child whose pidfd is gone from the first list is gone from the second too.
	// The other order could see a child (not yet reaped) and then miss its pidfd (reaped and
	// closed in between), and kill a pid that may be reused by then.
	held := heldPids()
	children := ownChildren()
	if len(children) == 0 {
		return nil
	}
	var out []int
	for _, pid := range children {
		if held[pid] {
			continue
		}
		if zombies {
			if state, _, _, ok := guard.Stat(pid); !ok || state != 'Z' {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// ownChildren lists this process's children: every thread's (a child's parent is the thread
// that forked it; orphans go to the main thread).
func ownChildren() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var pids []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// heldPids are the processes this process holds a pidfd for: os/exec's children it has not
// reaped yet (os.Process keeps one from the start until Wait has reaped the child).
func heldPids() map[int]bool {
	held := map[int]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return held
	}
	for _, fd := range fds {
		link, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil || !strings.Contains(link, "pidfd") {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "Pid:"); ok {
				if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					held[pid] = true
				}
			}
		}
	}
	return held
}
