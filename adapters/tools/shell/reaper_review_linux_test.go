package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// Review attacks on the runtime as a child subreaper (reaper_linux.go), with real processes:
//
//	an orphan that ends on its own (a detached helper of an unguarded child: an MCP stdio
//	server's, git's background gc), in a runtime no guard of which dies (zuno serve)
//	                                                 → TestOrphanEndingOnItsOwnIsReaped: no zombie stays
//	os/exec children mid-Start and mid-Wait while sweeps run
//	                                                 → TestSweepsSpareChildrenBeingStartedAndWaited
//	no pidfds (os/exec's children cannot be told from orphans)
//	                                                 → TestNoSubreaperWithoutPidfds: not a
//	                                                   subreaper, nothing swept
func TestOrphanEndingOnItsOwnIsReaped(t *testing.T) {
	run(t, nil, Request{Command: "true"}) // a guard started: the runtime is a subreaper
	if !reaper.on.Load() {
		t.Fatal("this process is not a child subreaper")
	}
	// An unguarded child of the runtime (as an MCP stdio server is) leaves a helper that
	// outlives it and then ends by itself.
	out, err := exec.Command("sh", "-c", "sleep 0.1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		state, ppid, _, ok := guard.Stat(pid)
		if !ok {
			return // reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("the orphan %d is left in state %c under %d: a zombie of the runtime nobody reaps", pid, state, ppid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Sweeps and zombie reaps run while os/exec starts and waits for children: none of them is
// killed and each Wait gets its own exit status (a child between its clone and its pidfd, or
// between its reaping and its pidfd's close, is never taken for an orphan).
func TestSweepsSpareChildrenBeingStartedAndWaited(t *testing.T) {
	run(t, nil, Request{Command: "true"})
	if !reaper.on.Load() {
		t.Fatal("this process is not a child subreaper")
	}
	stop := make(chan struct{})
	var sweeps sync.WaitGroup
	sweeps.Add(1)
	go func() {
		defer sweeps.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			sweepOrphans(0)
			reapZombieOrphans()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				code := (w*25+i)%50 + 1
				cmd := exec.Command("sh", "-c", "exit "+strconv.Itoa(code))
				if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != code {
					errs <- "child " + strconv.Itoa(code) + ": " + err.Error()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	sweeps.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Where os/exec holds no pidfd (a kernel before 5.3, or a seccomp profile that forbids
// pidfd_open), a guard's pid is not among the held ones: the runtime must not become a
// subreaper, and a sweep must kill nothing, since no child could be told from an orphan. Run
// in a fresh process (the gate is decided once per process): the "guard" there is a child
// started without a pidfd (syscall.ForkExec), as every os/exec child is on such a kernel.
func TestNoSubreaperWithoutPidfds(t *testing.T) {
	if os.Getenv("ZUNO_TEST_NO_PIDFD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoSubreaperWithoutPidfds$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "ZUNO_TEST_NO_PIDFD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestNoSubreaperWithoutPidfds") {
			t.Fatalf("the fresh process: %v\n%s", err, out)
		}
		return
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := syscall.ForkExec(sleep, []string{"sleep", "30"}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	}()
	adoptOrphans(pid)
	if reaper.on.Load() {
		t.Fatal("the runtime sweeps though no pidfd tells its children from orphans")
	}
	var flag int32
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetChildSubreaper, uintptr(unsafe.Pointer(&flag)), 0); errno != 0 || flag != 0 {
		t.Fatalf("PR_GET_CHILD_SUBREAPER: %d, %v", flag, errno)
	}
	sweepOrphans(0)
	reapZombieOrphans()
	if !processAlive(pid) {
		t.Fatal("a sweep killed a child the runtime holds no pidfd for, with the subreaper off")
	}
}

// prGetChildSubreaper is PR_GET_CHILD_SUBREAPER (linux/prctl.h).
const prGetChildSubreaper = 37

// A process that was adopted by the runtime before a guard started (a daemon that an MCP
// server, a hook or another tool detached) is no descendant of that guard: when the guard is
// killed, the sweep takes what the guard left and spares it (every descendant of a guard
// started after the guard did). Per-command guards, each started for its command.
func TestSweepSparesOrphansOlderThanTheGuard(t *testing.T) {
	run(t, nil, Request{Command: "true"})
	if !reaper.on.Load() {
		t.Fatal("this process is not a child subreaper")
	}
	out, err := exec.Command("sh", "-c", "setsid sleep 30 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(foreign, syscall.SIGKILL) // then reaped as an ended orphan
	time.Sleep(50 * time.Millisecond)            // a few clock ticks: the guard starts later
	setPerCommand(true)
	defer setPerCommand(false)
	dir := t.TempDir()
	res := run(t, &Runner{KillGrace: 200 * time.Millisecond}, Request{Dir: dir,
		Command: `setsid sh -c 'echo $$ > a.pid; exec sleep 30' & while [ ! -s a.pid ]; do sleep 0.01; done; kill -9 $PPID; sleep 30`})
	if res.Authoritative {
		t.Fatalf("%+v", res)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "a.pid")))
	if !processAlive(foreign) {
		t.Fatal("the sweep after a killed guard killed an orphan adopted before that guard started")
	}
}
