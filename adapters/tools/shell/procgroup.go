package shell

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// reapGroup stops whatever is still alive in the group after the leader
// exited: SIGTERM, then SIGKILL after grace. Bounded: it never waits more
// than grace plus one second.
func reapGroup(pgid int, grace time.Duration) {
	if !groupAlive(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if waitGroupGone(pgid, grace) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waitGroupGone(pgid, time.Second)
}

func waitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupAlive reports whether any non-zombie process is in group pgid. On
// Linux it reads /proc so that zombies awaiting a (possibly non-reaping)
// init do not count as alive; elsewhere it falls back to kill(-pgid, 0).
// kill(-pgid, 0) answering ESRCH (no process at all, zombies included) ends it
// first: after every command the guard has reaped its group, and reading the
// stat of every process on the machine cost more than the command (issue:
// BenchmarkGuardedRun, 1.3 ms per call).
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pg, ok := procStat(pid)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat returns the state and process group of pid from /proc/pid/stat.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	state, _, pgrp, ok = guard.Stat(pid)
	return state, pgrp, ok
}
