package bg

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Review attack: a task cancelled at once (inside the guard's first 5 ms, before it says the
// command started) whose bash ignores TERM and whose daemons (setsid + a double fork, each
// ignoring TERM) would write a file later. Nothing writes, the task reads cancelled, and the
// next task on the same guard finds no process of the last one beside it.
func TestTaskCancelledAtOnceTakesItsDaemons(t *testing.T) {
	m := newManager(t)
	for range 3 {
		dir := t.TempDir()
		info, err := m.Start(context.Background(), StartRequest{Dir: dir, Command: `trap '' TERM; echo $PPID > guard.pid; ` +
			`setsid sh -c 'trap "" TERM; sleep 0.4; touch late1' & (sh -c 'trap "" TERM; sleep 0.4; touch late2' &); ` +
			`sleep 0.4; touch late3`})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Cancel(context.Background(), info.ID); err != nil {
			t.Fatal(err)
		}
		w := settled(t, m, info.ID)
		if w.Status == StatusExited && w.ExitCode != nil && *w.ExitCode == 0 {
			t.Fatalf("a cancelled task reads exited 0: %+v", w)
		}
		time.Sleep(700 * time.Millisecond)
		for _, f := range []string{"late1", "late2", "late3"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Fatalf("%s written after the task was cancelled (%+v)", f, w)
			}
		}
		next := t.TempDir()
		info, err = m.Start(context.Background(), StartRequest{Dir: next,
			Command: `echo $PPID > guard.pid; ps -o pid= --ppid $PPID | wc -l`})
		if err != nil {
			t.Fatal(err)
		}
		w = settled(t, m, info.ID)
		if strings.TrimSpace(w.Text) != "1" {
			t.Fatalf("the guard's children while the next task ran: %q", w.Text)
		}
	}
}
