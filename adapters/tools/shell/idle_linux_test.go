package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What a command leaves in its group is stopped by the runtime after the guard's report; the
// idle session guard then reaps it (its idle reaper, started by that report), so no zombie
// stays below a guard that waits for its next command.
func TestIdleGuardReapsWhatTheRuntimeStopped(t *testing.T) {
	dir := t.TempDir()
	res := run(t, &Runner{KillGrace: 100 * time.Millisecond}, Request{Dir: dir,
		Command: `echo $PPID > guard.pid; sleep 30 & echo $! > job.pid; (sleep 30 &); sh -c 'sleep 30' & echo done`})
	if !res.Authoritative || res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	guardPid := readPID(t, filepath.Join(dir, "guard.pid"))
	assertGone(t, readPID(t, filepath.Join(dir, "job.pid")))
	deadline := time.Now().Add(3 * time.Second)
	for {
		b, err := os.ReadFile(childrenPath(guardPid))
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(b)) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle guard still has children (zombies): %s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The guard serves the next command as before.
	if res := run(t, nil, Request{Command: "exit 5"}); !res.Authoritative || res.ExitCode != 5 {
		t.Fatalf("%+v", res)
	}
}
