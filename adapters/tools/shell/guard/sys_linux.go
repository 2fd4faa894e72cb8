package guard

import "syscall"

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// commandAttr is how the guard starts the command: in the guard's process group, killed by
// the kernel if the guard dies (the guard's forking thread is locked for its whole life).
func commandAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// becomeSubreaper makes descendants that the command orphans (a double fork, a setsid
// daemon) the guard's children instead of init's, so the guard can still find them.
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// prSetDumpable is PR_SET_DUMPABLE (linux/prctl.h).
const prSetDumpable = 4

// setNotDumpable keeps processes of the same user out of this one's /proc/PID/fd.
func setNotDumpable() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
}
