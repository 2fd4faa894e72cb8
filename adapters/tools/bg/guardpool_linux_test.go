package bg

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// Attacks on a background task run under the session guard pool (docs/shell-execution.md,
// "The session guard"), each a test with real processes:
//
//	a daemonising grandchild (setsid, a double fork) outlives the task               → killed when the task ends (TestTaskEscapeesDieWithTheTask)
//	the task forks a job and exits; the job lingers into the guard's next command    → the group is reaped, the guard goes back to the pool clean (TestTaskForksAndExits)
//	Zuno SIGKILLed while the task runs                                               → TestRuntimeKilledLeavesNoOrphanTask (guard_test.go), the task's parent asserted a session guard
//	more tasks than idle guards; a foreground command while tasks hold guards       → a guard each, none shared; at most maxIdle kept afterwards (TestPoolExhaustion)
//	the task's guard dies mid-task                                                   → the command dies with it, no verdict, the next task gets a new guard (TestTaskGuardKilled)
//	the task stops its guard (kill -STOP $PPID)                                      → settled at once with no verdict, its escapee killed (TestTaskStopsItsGuard)
//	two sessions (two supervisors in one process) share the pool                     → one's end kills only its own escapee (TestTwoSessionsKeepTheirOwnProcesses)
//	the sandbox refuses the command                                                  → sandbox_failed, nothing runs, no guard is started (TestSandboxRefusalStartsNoGuard)
//	the program cannot be started (guard 127): no process group                      → never started; no signal goes to group 0, i.e. Zuno's own (TestNeverStartedTaskSignalsNoGroup)

// parentOf reads a pid file the command wrote ($PPID) and that process's argv[0].
func parentOf(t *testing.T, path string) (pid int, argv0 string) {
	t.Helper()
	pid = readPid(t, path)
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	argv0, _, _ = strings.Cut(string(b), "\x00")
	return pid, argv0
}

// sessionGuardsOfThisProcess counts this process's live children running as session guards.
func sessionGuardsOfThisProcess() int {
	n := 0
	for _, p := range guard.Descendants(os.Getpid()) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		_, ppid, _, _ := guard.Stat(p)
		if argv0, _, _ := strings.Cut(string(b), "\x00"); argv0 == guard.SessionName && ppid == os.Getpid() && alive(p) {
			n++
		}
	}
	return n
}

func TestTaskEscapeesDieWithTheTask(t *testing.T) {
	m := newManager(t)
	dir := t.TempDir()
	info, err := m.Start(context.Background(), StartRequest{Dir: dir, Command: `echo $PPID > guard.pid; ` +
		`setsid sh -c 'echo $$ > daemon.pid; exec sleep 30' & (sh -c 'echo $$ > double.pid; exec sleep 30' &); ` +
		`while [ ! -s daemon.pid ] || [ ! -s double.pid ]; do sleep 0.01; done; exit 0`})
	if err != nil {
		t.Fatal(err)
	}
	if _, argv0 := parentOf(t, filepath.Join(dir, "guard.pid")); argv0 != guard.SessionName {
		t.Fatalf("the task's parent runs %q, want the session guard", argv0)
	}
	w := settled(t, m, info.ID)
	if w.Status != StatusExited || w.ExitCode == nil || *w.ExitCode != 0 {
		t.Fatalf("%+v", w)
	}
	for _, f := range []string{"daemon.pid", "double.pid"} {
		pid := readPid(t, filepath.Join(dir, f))
		eventually(t, f+" gone", func() bool { return !alive(pid) })
	}
}

func TestTaskForksAndExits(t *testing.T) {
	m := newManager(t)
	dir := t.TempDir()
	info, err := m.Start(context.Background(), StartRequest{Dir: dir,
		Command: `echo $PPID > guard.pid; sleep 30 & echo $! > job.pid; exit 3`})
	if err != nil {
		t.Fatal(err)
	}
	w := settled(t, m, info.ID)
	job := readPid(t, filepath.Join(dir, "job.pid"))
	if w.ExitCode == nil || *w.ExitCode != 3 || alive(job) {
		t.Fatalf("%+v, job alive %v", w, alive(job))
	}
	first, _ := parentOf(t, filepath.Join(dir, "guard.pid"))
	// The guard went back to the pool, and the next command (taken from the top of the idle
	// stack) runs under it with nothing of the last one left.
	next := t.TempDir()
	info, err = m.Start(context.Background(), StartRequest{Dir: next,
		Command: `echo $PPID > guard.pid; ps -o pid= --ppid $PPID | wc -l`})
	if err != nil {
		t.Fatal(err)
	}
	w = settled(t, m, info.ID)
	if again, _ := parentOf(t, filepath.Join(next, "guard.pid")); again != first {
		t.Fatalf("the next task ran under guard %d, the first under %d: the guard was not kept", again, first)
	}
	// The guard's one child: the task's bash (ps and wc are bash's).
	if strings.TrimSpace(w.Text) != "1" {
		t.Fatalf("the guard's children while the next task ran: %q", w.Text)
	}
}

func TestPoolExhaustion(t *testing.T) {
	m := newManager(t)
	dir := t.TempDir()
	const n = 6
	for i := range n {
		if _, err := m.Start(context.Background(), StartRequest{Dir: dir, Command: "echo $PPID > guard" +
			strconv.Itoa(i) + ".pid; while [ ! -e release ]; do sleep 0.02; done"}); err != nil {
			t.Fatal(err)
		}
	}
	guards := map[int]bool{}
	for i := range n {
		pid, argv0 := parentOf(t, filepath.Join(dir, "guard"+strconv.Itoa(i)+".pid"))
		if argv0 != guard.SessionName || guards[pid] {
			t.Fatalf("task %d under %d %q; guards so far %v", i, pid, argv0, guards)
		}
		guards[pid] = true
	}
	res, err := (&shell.Runner{}).Run(context.Background(), shell.Request{Command: "echo $PPID"})
	fg, _ := strconv.Atoi(strings.TrimSpace(string(res.Output)))
	if err != nil || !res.Authoritative || fg == 0 || guards[fg] {
		t.Fatalf("a foreground command while %d tasks run: under %d (%v, %+v)", n, fg, err, res)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ti := range mustList(t, m) {
		if w := settled(t, m, ti.ID); w.ExitCode == nil || *w.ExitCode != 0 {
			t.Fatalf("%+v", w)
		}
	}
	eventually(t, "at most 4 idle session guards", func() bool { return sessionGuardsOfThisProcess() <= 4 })
}

func TestTaskGuardKilled(t *testing.T) {
	m := newManager(t)
	dir := t.TempDir()
	info, err := m.Start(context.Background(), StartRequest{Dir: dir,
		Command: `echo $$ > cmd.pid; echo $PPID > guard.pid; sleep 30; touch late`})
	if err != nil {
		t.Fatal(err)
	}
	killed, _ := parentOf(t, filepath.Join(dir, "guard.pid"))
	cmd := readPid(t, filepath.Join(dir, "cmd.pid"))
	if err := syscall.Kill(killed, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w := settled(t, m, info.ID)
	if w.ExitCode != nil || w.Signal != "SIGKILL" {
		t.Fatalf("a task whose guard was killed: %+v", w)
	}
	eventually(t, "the command gone", func() bool { return !alive(cmd) })
	next := t.TempDir()
	info = startIn(t, m, next, "echo $PPID > guard.pid")
	settled(t, m, info.ID)
	if pid, argv0 := parentOf(t, filepath.Join(next, "guard.pid")); pid == killed || argv0 != guard.SessionName {
		t.Fatalf("the next task under %d %q; the killed guard was %d", pid, argv0, killed)
	}
}

func TestTaskStopsItsGuard(t *testing.T) {
	m := newManager(t)
	dir := t.TempDir()
	began := time.Now()
	info, err := m.Start(context.Background(), StartRequest{Dir: dir, Command: `setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & ` +
		`while [ ! -s esc.pid ]; do sleep 0.01; done; kill -STOP $PPID; sleep 30`})
	if err != nil {
		t.Fatal(err)
	}
	w := settled(t, m, info.ID)
	if w.ExitCode != nil || w.Signal != "SIGKILL" || time.Since(began) > 8*time.Second {
		t.Fatalf("a task that stopped its guard: %+v after %v", w, time.Since(began))
	}
	esc := readPid(t, filepath.Join(dir, "esc.pid"))
	eventually(t, "the escapee gone", func() bool { return !alive(esc) })
}

func TestTwoSessionsKeepTheirOwnProcesses(t *testing.T) {
	a, b := newManager(t), newManager(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	const command = `setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & echo $PPID > guard.pid; sleep 30`
	ta, tb := startIn(t, a, dirA, command), startIn(t, b, dirB, command)
	escA, escB := readPid(t, filepath.Join(dirA, "esc.pid")), readPid(t, filepath.Join(dirB, "esc.pid"))
	if ga, gb := readPid(t, filepath.Join(dirA, "guard.pid")), readPid(t, filepath.Join(dirB, "guard.pid")); ga == gb {
		t.Fatalf("two sessions' tasks share guard %d", ga)
	}
	if _, err := a.Cancel(context.Background(), ta.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "session a's escapee gone", func() bool { return !alive(escA) })
	time.Sleep(100 * time.Millisecond)
	if !alive(escB) {
		t.Fatal("ending session a's task killed session b's escapee")
	}
	if w := settled(t, a, ta.ID); w.Status != StatusCancelled {
		t.Fatalf("%+v", w)
	}
	if _, err := b.Cancel(context.Background(), tb.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "session b's escapee gone", func() bool { return !alive(escB) })
}

// refusingLauncher is a sandbox that cannot prepare any command.
type refusingLauncher struct{}

func (refusingLauncher) Wrap([]string, string) ([]string, error) {
	return nil, errors.New("the sandbox is not available")
}

func TestSandboxRefusalStartsNoGuard(t *testing.T) {
	m := newManager(t, WithLauncher(refusingLauncher{}))
	dir := t.TempDir()
	before := sessionGuardsOfThisProcess()
	_, err := m.Start(context.Background(), StartRequest{Dir: dir, Command: "touch ran"})
	wantCode(t, err, CodeSandboxFailed, "")
	if _, serr := os.Stat(filepath.Join(dir, "ran")); serr == nil {
		t.Fatal("the refused command ran")
	}
	if after := sessionGuardsOfThisProcess(); after > before {
		t.Fatalf("session guards %d before, %d after a refused start", before, after)
	}
}

// missingLauncher runs every command through a program that does not exist.
type missingLauncher struct{}

func (missingLauncher) Wrap(argv []string, _ string) ([]string, error) {
	return append([]string{"no-such-launcher-zuno"}, argv...), nil
}

// A task whose program cannot be started has no process group: nothing may be signalled as
// group 0, which kill(2) reads as the caller's own group. The check runs in a copy of this
// test binary in a process group of its own, so a regression fails the test without
// signalling the group of the go command that runs it.
func TestNeverStartedTaskSignalsNoGroup(t *testing.T) {
	if os.Getenv("BG_NEVER_STARTED") != "" {
		neverStartedTask(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNeverStartedTaskSignalsNoGroup$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BG_NEVER_STARTED=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("%v\n%s", err, out)
	}
}

func neverStartedTask(t *testing.T) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	m := newManager(t, WithLauncher(missingLauncher{}))
	info := start(t, m, "true")
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = m.Cancel(context.Background(), info.ID) })
	w := settled(t, m, info.ID)
	wg.Wait()
	got, _ := m.Cancel(context.Background(), info.ID)
	// (Its status is cancelled or exited, as the cancel raced the guard's answer.)
	if !got.NeverStarted || w.ExitCode == nil || *w.ExitCode != shell.ExitNotFound {
		t.Fatalf("%+v %+v", w, got)
	}
	select {
	case s := <-term:
		t.Fatalf("this process's group received %v", s)
	case <-time.After(200 * time.Millisecond):
	}
}
