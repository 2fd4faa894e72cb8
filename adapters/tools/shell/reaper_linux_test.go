package shell

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attacks on "the guard dies" (docs/shell-execution.md): an unconfined command SIGKILLs its
// own guard (kill -9 $PPID) after starting processes that outlive it. The runtime is a child
// subreaper (reaper_linux.go): every one of them is re-parented to it and killed before the
// call settles. Each row, under both guards, with real processes:
//
//	a setsid daemon                                   → TestCommandKillsItsGuardAfterADaemon, row "setsid"
//	a double fork (still in the group)                → row "double fork"
//	a double fork that then leaves the session        → row "double fork, setsid"
//	a daemon in a process group of its own (set -m)   → row "new process group"
//	many daemons                                      → row "many daemons"
//	a daemon that forks again after the guard died    → TestDaemonForksAfterItsGuardDied
//	the guard killed while idle                       → TestIdleGuardKilled
//	the runtime's own children (os/exec's)            → TestSweepLeavesTheRuntimesChildren: untouched, their status theirs
//	a per-command guard's leftovers, re-parented here → TestPerCommandLeftoversReaped: no zombie stays
//	the runtime killed                                → TestRuntimeKilledLeavesNoOrphan (the lifeline)
func TestCommandKillsItsGuardLeavesNothing(t *testing.T) {
	bothGuards(t, testCommandKillsItsGuardLeavesNothing)
}

func testCommandKillsItsGuardLeavesNothing(t *testing.T) {
	many := ""
	var manyFiles []string
	for i := range 20 {
		name := "m" + strconv.Itoa(i) + ".pid"
		many += `setsid sh -c 'echo $$ > ` + name + `; exec sleep 30' & `
		manyFiles = append(manyFiles, name)
	}
	for _, row := range []struct {
		name, start string
		files       []string
		// ownGroup: the escapee must not be in the command's process group (else the row does
		// not test what it says).
		ownGroup bool
	}{
		{"setsid", `setsid sh -c 'echo $$ > a.pid; exec sleep 30' & `, []string{"a.pid"}, true},
		{"double fork", `(sh -c 'echo $$ > a.pid; exec sleep 30' &); `, []string{"a.pid"}, false},
		{"double fork, setsid", `(setsid sh -c 'echo $$ > a.pid; exec sleep 30' &); `, []string{"a.pid"}, true},
		{"new process group", `(set -m; sleep 30 & echo $! > a.pid); `, []string{"a.pid"}, true},
		{"many daemons", many, manyFiles, true},
	} {
		t.Run(row.name, func(t *testing.T) {
			dir := t.TempDir()
			wait := ""
			for _, f := range row.files {
				wait += `while [ ! -s ` + f + ` ]; do sleep 0.01; done; `
			}
			res := run(t, &Runner{KillGrace: 200 * time.Millisecond}, Request{Dir: dir,
				Command: `echo $$ > cmd.pid; ` + row.start + wait + `kill -9 $PPID; sleep 30`})
			if res.Authoritative || res.HasExitCode {
				t.Fatalf("a command whose guard was killed has a verdict: %+v", res)
			}
			cmdPid := readPID(t, filepath.Join(dir, "cmd.pid"))
			for _, f := range row.files {
				pid := readPID(t, filepath.Join(dir, f))
				if row.ownGroup {
					if _, pgrp, ok := procStat(pid); ok && pgrp == cmdPid {
						t.Fatalf("%s: the escapee is still in the command's group", f)
					}
				}
				assertGone(t, pid)
			}
			assertNoOrphans(t)
		})
	}
}

// assertNoOrphans: nothing is left re-parented to this process, living or ended.
func assertNoOrphans(t *testing.T) {
	t.Helper()
	if !reaper.on.Load() {
		t.Fatal("this process is not a child subreaper")
	}
	if left := orphanChildren(false); len(left) > 0 {
		t.Fatalf("orphans left re-parented to the runtime: %v", left)
	}
}

// A daemon that waits for its guard to die and then forks a new daemon: the sweep is held
// back (reaper.mu) until the fork happened, so the new one is there when it runs.
func TestDaemonForksAfterItsGuardDied(t *testing.T) { bothGuards(t, testDaemonForksAfterItsGuardDied) }

func testDaemonForksAfterItsGuardDied(t *testing.T) {
	dir := t.TempDir()
	reaper.mu.Lock()
	locked := true
	defer func() {
		if locked {
			reaper.mu.Unlock()
		}
	}()
	done := make(chan Result, 1)
	go func() {
		res, _ := (&Runner{KillGrace: 200 * time.Millisecond}).Run(context.Background(), Request{Dir: dir,
			Command: `G=$PPID; setsid sh -c 'echo $$ > a.pid; while kill -0 '$G' 2>/dev/null; do sleep 0.005; done; ` +
				`setsid sh -c "echo \$\$ > b.pid; exec sleep 30" & while [ ! -s b.pid ]; do sleep 0.005; done; ` +
				`for i in 1 2 3 4 5; do sh -c "sleep 30" & done; exec sleep 30' & ` +
				`while [ ! -s a.pid ]; do sleep 0.01; done; kill -9 $PPID; sleep 30`})
		done <- res
	}()
	a := readPID(t, filepath.Join(dir, "a.pid"))
	b := readPID(t, filepath.Join(dir, "b.pid"))
	time.Sleep(50 * time.Millisecond)
	reaper.mu.Unlock()
	locked = false
	if res := <-done; res.Authoritative {
		t.Fatalf("%+v", res)
	}
	assertGone(t, a)
	assertGone(t, b)
	assertNoOrphans(t)
}

// A session guard killed while idle (by anyone of the same user): it is reaped, nothing is
// left below it, and a command after it runs under another guard. The command sent right
// after the kill may reach the guard while its threads are still exiting (its main thread
// already a zombie, its socket still open): the request is accepted and never answered, and
// since the runtime cannot tell whether it was started, that call is no verdict (never
// replayed), the same as before this change; the next one gets a new guard.
func TestIdleGuardKilled(t *testing.T) {
	first, _ := parentArgv(t, nil)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	assertGone(t, first)
	res := run(t, nil, Request{Command: "echo $PPID"})
	if !res.Authoritative && (res.HasExitCode || res.Signal == "") {
		t.Fatalf("the call sent to the dying guard: %+v", res)
	}
	second, _ := parentArgv(t, nil)
	if second == first {
		t.Fatalf("the next command ran under the killed guard %d", first)
	}
	res = run(t, nil, Request{Command: "exit 3"})
	if !res.Authoritative || res.ExitCode != 3 {
		t.Fatalf("%+v", res)
	}
	assertNoOrphans(t)
}

// The sweep takes only orphans: a child this process started itself (os/exec, not yet waited
// for) lives through it, and its Wait still gets its own status.
func TestSweepLeavesTheRuntimesChildren(t *testing.T) {
	bothGuards(t, testSweepLeavesTheRuntimesChildren)
}

func testSweepLeavesTheRuntimesChildren(t *testing.T) {
	live := exec.Command("sleep", "30")
	ended := exec.Command("sh", "-c", "exit 7")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Process.Kill()
	if err := ended.Start(); err != nil {
		t.Fatal(err)
	}
	for processAlive(ended.Process.Pid) {
		time.Sleep(5 * time.Millisecond)
	}
	dir := t.TempDir()
	res := run(t, &Runner{KillGrace: 200 * time.Millisecond}, Request{Dir: dir,
		Command: `setsid sh -c 'echo $$ > a.pid; exec sleep 30' & while [ ! -s a.pid ]; do sleep 0.01; done; kill -9 $PPID; sleep 30`})
	if res.Authoritative {
		t.Fatalf("%+v", res)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "a.pid")))
	if !processAlive(live.Process.Pid) {
		t.Fatal("the sweep killed a child the runtime started itself")
	}
	if err := ended.Wait(); err == nil || ended.ProcessState.ExitCode() != 7 {
		t.Fatalf("the runtime's own ended child: %v, %v (its status was taken)", err, ended.ProcessState)
	}
	_ = live.Process.Kill()
	if err := live.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the runtime's own live child: %v", err)
	}
}

// A per-command guard that ends normally leaves its command's background job in the group;
// the job is re-parented here, the runtime stops the group, and its status is reaped: no
// zombie stays in the runtime.
func TestPerCommandLeftoversReaped(t *testing.T) {
	setPerCommand(true)
	defer setPerCommand(false)
	dir := t.TempDir()
	res := run(t, &Runner{KillGrace: 100 * time.Millisecond}, Request{Dir: dir,
		Command: `sleep 30 & echo $! > job.pid; (sleep 30 &); echo done`})
	if !res.Authoritative || res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "job.pid")))
	if z := orphanChildren(true); len(z) > 0 {
		t.Fatalf("zombies left in the runtime: %v", z)
	}
}
