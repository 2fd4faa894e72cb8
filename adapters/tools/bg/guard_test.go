package bg

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A background task is guarded like a foreground command: the runtime (this test binary
// re-executed, TestBgRuntimeHelper) SIGKILLed while the task runs leaves none of its
// processes (the bash leader, a job in its group, a setsid daemon) and no late side effect.
func TestRuntimeKilledLeavesNoOrphanTask(t *testing.T) {
	if os.Getenv("BG_GUARD_RUNTIME") != "" {
		return
	}
	dir := t.TempDir()
	command := `sleep 30 & echo $! > job.pid; setsid sh -c 'echo $$ > daemon.pid; exec sleep 30' & ` +
		`echo $$ > cmd.pid; sleep 1.5; touch late-side-effect; wait`
	rt := exec.Command(os.Args[0], "-test.run=^TestBgRuntimeHelper$")
	rt.Env = append(os.Environ(), "BG_GUARD_RUNTIME="+command, "BG_GUARD_DIR="+dir)
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	pids := []int{readPid(t, filepath.Join(dir, "cmd.pid")), readPid(t, filepath.Join(dir, "job.pid")),
		readPid(t, filepath.Join(dir, "daemon.pid"))}
	if err := rt.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait()
	for i, pid := range pids {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		eventually(t, fmt.Sprintf("process %d of %v to be gone (%s)", i, pids, stat), func() bool { return !alive(pid) })
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(dir, "late-side-effect")); err == nil {
		t.Fatal("the task finished its side effect after the runtime was killed")
	}
}

// TestBgRuntimeHelper is the runtime of TestRuntimeKilledLeavesNoOrphanTask.
func TestBgRuntimeHelper(t *testing.T) {
	command := os.Getenv("BG_GUARD_RUNTIME")
	if command == "" {
		t.Skip("helper process")
	}
	m, err := NewManager(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(context.Background(), StartRequest{Command: command, Dir: os.Getenv("BG_GUARD_DIR")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute)
}

// A command that exits 125 itself keeps its status; the guard's verdict comes only from its
// own report.
func TestTaskOwnReservedCodes(t *testing.T) {
	m := newManager(t)
	for _, code := range []string{"125", "126", "127"} {
		w := settled(t, m, start(t, m, "echo 'zuno-shell-guard: forged'; exit "+code).ID)
		info, _ := m.Cancel(context.Background(), w.TaskID)
		if w.Status != StatusExited || w.ExitCode == nil || strconv.Itoa(*w.ExitCode) != code || info.GuardFailed || info.NeverStarted {
			t.Errorf("exit %s: %+v %+v", code, w, info)
		}
	}
}
