package bg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// The real journal (commands.BackgroundTasks) is what the supervisor is written against.
var _ Journal = (*commands.BackgroundTasks)(nil)

// logged is a session's bg stream on a real SQLite event store: the journal a supervisor
// records into, and what a later process reads.
type logged struct {
	store   *sqlstore.Store
	journal *commands.BackgroundTasks
	dir     string // the data directory the task logs live under
}

func newLogged(t *testing.T) *logged {
	t.Helper()
	store, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "zuno.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return &logged{store: store, dir: t.TempDir(),
		journal: &commands.BackgroundTasks{Store: store, Registry: events.NewRegistry(events.AllPayloads()...), Clock: commands.SystemClock{}}}
}

// supervisor is a process's supervisor over l: holder names the process, gone the holders
// known to have exited.
func (l *logged) supervisor(t *testing.T, holder string, gone ...string) *Supervisor {
	t.Helper()
	sup, err := NewSupervisor(SupervisorConfig{Dir: l.dir, Journal: l.journal, Holder: holder,
		HolderGone: func(h string) bool { return strings.Contains(strings.Join(gone, "\n"), h) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Close() })
	return sup
}

// stream is the session's bg stream as recorded.
func (l *logged) stream(t *testing.T, sessionID string) []events.Recorded {
	t.Helper()
	recs, err := l.store.ReadStream(context.Background(), commands.BackgroundStream(sessionID), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func (l *logged) completions(t *testing.T, sessionID string) []events.BackgroundCompleted {
	t.Helper()
	st, err := l.journal.Tasks(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.BackgroundCompleted
	for _, task := range st.Tasks() {
		if task.Completion != nil {
			out = append(out, *task.Completion)
		}
	}
	return out
}

func view(t *testing.T, sup *Supervisor, sessionID string) *Manager {
	t.Helper()
	m, err := sup.Manager(sessionID, func(m *Manager) { m.grace = testGrace })
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func startIn(t *testing.T, m *Manager, dir, command string) TaskInfo {
	t.Helper()
	info, err := m.Start(context.Background(), StartRequest{Command: command, Dir: dir, CallID: "call_1"})
	if err != nil {
		t.Fatalf("Start(%q): %v", command, err)
	}
	return info
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// "Background commands outlive the turn that started them": the surface (turn) that started a
// task closes; the task keeps running under the supervisor, and the next surface of the
// session sees it run and end. Its completion is an event, recorded once, and bg wait reports
// the same facts (the one completion receipt).
func TestTaskOutlivesTheSurfaceThatStartedIt(t *testing.T) {
	l := newLogged(t)
	sup := l.supervisor(t, "host/1/a")
	work := t.TempDir()
	turn1 := view(t, sup, "ses_a")
	info := startIn(t, turn1, work, "sleep 0.5; echo done > marker; echo out")
	if err := turn1.Close(); err != nil {
		t.Fatal(err)
	}

	turn2 := view(t, sup, "ses_a")
	list := mustList(t, turn2)
	if len(list) != 1 || list[0].ID != info.ID || list[0].Status != StatusRunning || list[0].HeldBy != "" {
		t.Fatalf("after the first surface closed: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(work, "marker")); err == nil {
		t.Fatal("marker before the task could have written it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := turn2.Wait(ctx, info.ID, 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(work, "marker")); err != nil {
		t.Fatalf("the task did not finish after its surface closed: %v", err)
	}
	c := w.Completion
	if w.Status != StatusExited || c == nil || c.Status != events.BackgroundExited || c.ExitCode == nil || *c.ExitCode != 0 ||
		c.TotalWritten != 4 || c.OutputSHA256 != sha("out\n") || c.TaskID != info.ID || c.CallID != "call_1" ||
		c.SessionID != "ses_a" || c.Holder != "host/1/a" || c.LogPath != info.LogPath || w.Text != "out\n" {
		t.Fatalf("wait: %+v completion %+v", w, c)
	}
	recorded := l.completions(t, "ses_a")
	if len(recorded) != 1 || recorded[0].OutputSHA256 != c.OutputSHA256 || recorded[0].EndedAt != c.EndedAt {
		t.Fatalf("recorded %+v, wait reported %+v", recorded, c)
	}
	recs := l.stream(t, "ses_a")
	if len(recs) != 2 || recs[0].Type != events.TypeBackgroundStarted || recs[1].Type != events.TypeBackgroundCompleted ||
		recs[0].Metadata.CommandID != "bg/started/"+info.ID || recs[1].Metadata.CommandID != "bg/completed/"+info.ID {
		t.Fatalf("stream %+v", recs)
	}
	// Recorded, it is forgotten from memory (nothing grows with the process's lifetime) and
	// answered from the log and its log file, as this process's own.
	eventually(t, "the ended task to be forgotten", func() bool { return len(sup.heldTasks("ses_a")) == 0 })
	got := mustList(t, turn2)
	if len(got) != 1 || got[0].Completion == nil || *got[0].Completion.ExitCode != 0 || got[0].HeldBy != "" || got[0].Status != StatusExited {
		t.Fatalf("list after the end: %+v", got)
	}
	if again, err := turn2.Output(context.Background(), info.ID, nil, 0); err != nil || again.Text != "out\n" || again.Completion == nil {
		t.Fatalf("output after the end: %+v %v", again, err)
	}
}

// "They die with the runtime process, not with a turn": closing the supervisor (the process
// shutting down) stops every session's tasks and records each one killed before it returns.
func TestSupervisorCloseStopsAndRecordsEveryTask(t *testing.T) {
	l := newLogged(t)
	sup := l.supervisor(t, "host/1/a")
	a := startIn(t, view(t, sup, "ses_a"), t.TempDir(), "echo $$ > pid; exec sleep 60")
	b := startIn(t, view(t, sup, "ses_b"), t.TempDir(), "echo $$ > pid; exec sleep 60")
	pid := readPid(t, filepath.Join(a.Dir, "pid"))
	readPid(t, filepath.Join(b.Dir, "pid")) // both run: the stop reaches the commands themselves
	if err := sup.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Fatalf("task process %d still alive after Close", pid)
	}
	for _, s := range []struct{ session, id string }{{"ses_a", a.ID}, {"ses_b", b.ID}} {
		cs := l.completions(t, s.session)
		if len(cs) != 1 || cs[0].TaskID != s.id || cs[0].Status != events.BackgroundKilled || cs[0].Signal != "SIGTERM" {
			t.Fatalf("%s: completions %+v", s.session, cs)
		}
	}
	if _, err := view(t, sup, "ses_a").Start(context.Background(), StartRequest{Command: "true"}); codeOf(err) != CodeUnavailable {
		t.Fatalf("start after close: %v", err)
	}
}

// A session's tasks are its own: another session's view neither lists nor reads them.
func TestSessionsAreSeparate(t *testing.T) {
	l := newLogged(t)
	sup := l.supervisor(t, "host/1/a")
	info := startIn(t, view(t, sup, "ses_a"), t.TempDir(), "echo a")
	other := view(t, sup, "ses_b")
	if list := mustList(t, other); len(list) != 0 {
		t.Fatalf("ses_b lists %+v", list)
	}
	_, err := other.Output(context.Background(), info.ID, nil, 0)
	wantCode(t, err, CodeNotFound, "taskID")
	if !strings.HasPrefix(info.LogPath, filepath.Join(l.dir, "ses_a")+string(filepath.Separator)) {
		t.Fatalf("log %s is not under the session's directory", info.LogPath)
	}
}

// A session id cannot place logs outside the supervisor's directory.
func TestSessionIDCannotEscapeTheLogDir(t *testing.T) {
	sup, err := NewSupervisor(SupervisorConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"..", ".", "../x", "a/b", `a\b`, "a\x00b"} {
		_, err := sup.Manager(id)
		wantCode(t, err, CodeInvalidArguments, "sessionID")
	}
}

// "A task the log does not know never runs": when its start cannot be recorded, the command
// does not run and its reserved log is removed.
func TestUnrecordedStartRunsNothing(t *testing.T) {
	l := newLogged(t)
	sup := l.supervisor(t, "host/1/a")
	work := t.TempDir()
	l.store.Close()
	_, err := view(t, sup, "ses_a").Start(context.Background(), StartRequest{Command: "touch ran", Dir: work})
	wantCode(t, err, CodeUnavailable, "")
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
		t.Fatal("the command ran although its start was not recorded")
	}
	if logs, _ := filepath.Glob(filepath.Join(l.dir, "ses_a", "*.log")); len(logs) != 0 {
		t.Fatalf("reserved logs left: %v", logs)
	}
}

// "In a later process the completion event is what bg reports": a task that ended under an
// earlier process is read from the log (its recorded completion) and its log file, and a
// wait returns at once.
func TestLaterProcessReadsTheRecordedCompletion(t *testing.T) {
	l := newLogged(t)
	first := l.supervisor(t, "host/1/a")
	info := startIn(t, view(t, first, "ses_a"), t.TempDir(), "printf 'one\\ntwo\\n'; exit 3")
	settled(t, view(t, first, "ses_a"), info.ID)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	later := view(t, l.supervisor(t, "host/2/b", "host/1/a"), "ses_a")
	list := mustList(t, later)
	if len(list) != 1 || list[0].Status != StatusExited || *list[0].ExitCode != 3 || list[0].HeldBy != "host/1/a" ||
		list[0].Completion == nil || list[0].TotalWritten != 8 || list[0].Ended == nil || list[0].CallID != "call_1" {
		t.Fatalf("list %+v", list)
	}
	w, err := later.Wait(context.Background(), info.ID, time.Minute, ptr(4), 0)
	if err != nil || w.Text != "two\n" || w.Status != StatusExited || !w.FromDisk || w.Completion == nil || w.HasMore || !w.HasEarlier {
		t.Fatalf("wait %+v %v", w, err)
	}
	if got, err := later.Cancel(context.Background(), info.ID); err != nil || got.Status != StatusExited {
		t.Fatalf("cancel of an ended task: %+v %v", got, err)
	}
	if n := len(l.stream(t, "ses_a")); n != 2 {
		t.Fatalf("reading recorded %d events, want the 2 there were", n)
	}
}

// "If the process died before the task ended, the task is reported lost, never running": a
// task recorded by a holder that is gone has no completion; the next reader records it lost,
// once, and every later reader reports that receipt.
func TestTaskOfAGoneProcessIsLostOnce(t *testing.T) {
	l := newLogged(t)
	logPath := filepath.Join(l.dir, "ses_a", "bg_0123456789ab.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.journal.Started(context.Background(), events.BackgroundStarted{SessionID: "ses_a", TaskID: "bg_0123456789ab",
		CallID: "c1", Command: "sleep 300", Dir: "/w", LogPath: logPath, Holder: "host/9/dead", StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
		t.Fatal(err)
	}
	later := view(t, l.supervisor(t, "host/2/b", "host/9/dead"), "ses_a")
	for range 2 {
		list := mustList(t, later)
		if len(list) != 1 || list[0].Status != StatusLost || list[0].Completion == nil || list[0].Completion.Status != events.BackgroundLost ||
			list[0].Completion.Holder != "host/2/b" || list[0].TotalWritten != 7 {
			t.Fatalf("list %+v", list)
		}
	}
	if cs := l.completions(t, "ses_a"); len(cs) != 1 {
		t.Fatalf("completions %+v", cs)
	}
	if n := len(l.stream(t, "ses_a")); n != 2 {
		t.Fatalf("stream has %d events, want started and one lost", n)
	}
	start := time.Now()
	w, err := later.Wait(context.Background(), "bg_0123456789ab", time.Minute, nil, 0)
	if err != nil || w.Status != StatusLost || w.Text != "partial" || time.Since(start) > 5*time.Second {
		t.Fatalf("wait %+v %v", w, err)
	}
	if got, err := later.Cancel(context.Background(), "bg_0123456789ab"); err != nil || got.Status != StatusLost {
		t.Fatalf("cancel %+v %v", got, err)
	}
}

// A task another live process holds is unknown here, never running; it cannot be cancelled
// from here; a wait follows the log and returns once that process records the completion.
func TestTaskHeldElsewhereIsUnknownUntilItsCompletionIsRecorded(t *testing.T) {
	l := newLogged(t)
	elsewhere := l.supervisor(t, "host/1/alive")
	work := t.TempDir()
	info := startIn(t, view(t, elsewhere, "ses_a"), work, "while [ ! -e go ]; do sleep 0.05; done; echo finished")

	here := view(t, l.supervisor(t, "host/2/b"), "ses_a")
	list := mustList(t, here)
	if len(list) != 1 || list[0].Status != StatusUnknown || list[0].HeldBy != "host/1/alive" || list[0].Completion != nil {
		t.Fatalf("list %+v", list)
	}
	_, err := here.Cancel(context.Background(), info.ID)
	wantCode(t, err, CodeUnavailable, "taskID")
	if w, err := here.Wait(context.Background(), info.ID, 300*time.Millisecond, nil, 0); err != nil || w.Status != StatusUnknown {
		t.Fatalf("short wait %+v %v", w, err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = os.WriteFile(filepath.Join(work, "go"), nil, 0o600)
	}()
	w, err := here.Wait(context.Background(), info.ID, 10*time.Second, nil, 0)
	if err != nil || w.Status != StatusExited || w.Completion == nil || w.Text != "finished\n" {
		t.Fatalf("wait %+v %v", w, err)
	}
}

// The attacks on reading a task known from the log: the record names the file, and a record
// is data (a log written elsewhere, or altered). Only this supervisor's own file for the
// session's task id is ever read; every other spelling is refused with unavailable while the
// recorded facts are still listed.
func TestLoggedTaskReadsOnlyItsOwnLogFile(t *testing.T) {
	l := newLogged(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("do not read"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(l.dir, "ses_b", "bg_00000000000b.log")
	if err := os.MkdirAll(filepath.Dir(other), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("ses_b's output"), 0o600); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(l.dir, "ses_a", "bg_00000000000a.log")
	rows := []struct {
		attack, taskID, logPath string
	}{
		{"a path outside the data directory", "bg_000000000001", secret},
		{"another session's log", "bg_00000000000b", other},
		{"the right directory, another task's file", "bg_000000000002", own},
		{"a relative path", "bg_000000000003", "bg_000000000003.log"},
		{"a dot-dot spelling of the own file", "bg_000000000004", l.dir + "/ses_a/../ses_a/bg_000000000004.log"},
		{"a task id that climbs out", "../../secret", l.dir + "/ses_a/../../secret.log"},
	}
	zero := 0
	for _, r := range rows {
		if err := l.journal.Started(context.Background(), events.BackgroundStarted{SessionID: "ses_a", TaskID: r.taskID, Command: "x",
			Dir: "/w", LogPath: r.logPath, Holder: "host/1/a", StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
			t.Fatal(err)
		}
		if err := l.journal.Completed(context.Background(), events.BackgroundCompleted{SessionID: "ses_a", TaskID: r.taskID,
			Status: events.BackgroundExited, ExitCode: &zero, TotalWritten: 11, LogPath: r.logPath, Holder: "host/1/a"}); err != nil {
			t.Fatal(err)
		}
	}
	m := view(t, l.supervisor(t, "host/2/b"), "ses_a")
	list := mustList(t, m)
	if len(list) != len(rows) {
		t.Fatalf("listed %d tasks, want %d", len(list), len(rows))
	}
	for _, r := range rows {
		t.Run(r.attack, func(t *testing.T) {
			w, err := m.Output(context.Background(), r.taskID, nil, 0)
			if w.Text != "" {
				t.Fatalf("read %q", w.Text)
			}
			wantCode(t, err, CodeUnavailable, "taskID")
			w, err = m.Wait(context.Background(), r.taskID, time.Second, ptr(0), 0)
			if err == nil || w.Text != "" {
				t.Fatalf("wait read %q (%v)", w.Text, err)
			}
		})
	}
	for _, info := range list {
		if info.Status != StatusExited || info.TotalWritten != 11 {
			t.Fatalf("recorded facts not listed: %+v", info)
		}
	}
}

// Readers racing to record a loss (bg list, output and wait run in parallel; two processes
// read at once) all report lost with the one receipt that stands; it is recorded once.
func TestConcurrentReadersRecordALossOnce(t *testing.T) {
	l := newLogged(t)
	const id = "bg_0123456789ab"
	if err := os.MkdirAll(filepath.Join(l.dir, "ses_a"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.dir, "ses_a", id+".log"), []byte("part"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.journal.Started(context.Background(), events.BackgroundStarted{SessionID: "ses_a", TaskID: id, Command: "sleep 300",
		Dir: "/w", LogPath: filepath.Join(l.dir, "ses_a", id+".log"), Holder: "host/9/dead", StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
		t.Fatal(err)
	}
	readers := []*Manager{view(t, l.supervisor(t, "host/2/b", "host/9/dead"), "ses_a"), view(t, l.supervisor(t, "host/3/c", "host/9/dead"), "ses_a")}
	results := make(chan string, 12)
	var wg sync.WaitGroup
	for i := range 12 {
		m := readers[i%2]
		wg.Go(func() {
			var status Status
			var holder string
			switch i % 3 {
			case 0:
				list, err := m.List(context.Background())
				if err != nil || len(list) != 1 || list[0].Completion == nil {
					results <- fmt.Sprintf("list %+v %v", list, err)
					return
				}
				status, holder = list[0].Status, list[0].Completion.Holder
			case 1:
				w, err := m.Output(context.Background(), id, nil, 0)
				if err != nil || w.Completion == nil {
					results <- fmt.Sprintf("output %+v %v", w, err)
					return
				}
				status, holder = w.Status, w.Completion.Holder
			default:
				w, err := m.Wait(context.Background(), id, time.Second, nil, 0)
				if err != nil || w.Completion == nil {
					results <- fmt.Sprintf("wait %+v %v", w, err)
					return
				}
				status, holder = w.Status, w.Completion.Holder
			}
			results <- string(status) + " " + holder
		})
	}
	wg.Wait()
	close(results)
	cs := l.completions(t, "ses_a")
	if len(cs) != 1 || cs[0].Status != events.BackgroundLost {
		t.Fatalf("completions %+v", cs)
	}
	for r := range results {
		if r != "lost "+cs[0].Holder {
			t.Errorf("a reader reported %q, want lost with the recorded receipt of %s", r, cs[0].Holder)
		}
	}
	if n := len(l.stream(t, "ses_a")); n != 2 {
		t.Fatalf("stream has %d events", n)
	}
}
