package commands_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// A task's start and completion are recorded once in bg-<session>, with command ids derived
// from the task id: a retry records nothing twice, and a second completion (a task recorded
// lost after it was recorded ended) records nothing: the first receipt stands.
func TestBackgroundTasksRecordOnce(t *testing.T) {
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "zuno.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b := &commands.BackgroundTasks{Store: store, Registry: events.NewRegistry(events.AllPayloads()...), Clock: fixedClock{}}
	zero := 0
	started := events.BackgroundStarted{SessionID: "ses_1", TaskID: "bg_1", CallID: "c1", Command: "true", Dir: "/w",
		LogPath: "/d/bg_1.log", Holder: "h/1/a", StartedAt: "2026-12-01T10:00:00Z"}
	ended := events.BackgroundCompleted{SessionID: "ses_1", TaskID: "bg_1", CallID: "c1", Status: events.BackgroundExited,
		ExitCode: &zero, LogPath: "/d/bg_1.log", Holder: "h/1/a", EndedAt: "2026-12-01T10:00:01Z"}
	lost := events.BackgroundCompleted{SessionID: "ses_1", TaskID: "bg_1", CallID: "c1", Status: events.BackgroundLost,
		LogPath: "/d/bg_1.log", Holder: "h/2/b", EndedAt: "2026-12-01T10:05:00Z"}
	for _, step := range []func() error{
		func() error { return b.Started(ctx, started) },
		func() error { return b.Started(ctx, started) }, // a retry
		func() error { return b.Completed(ctx, ended) },
		func() error { return b.Completed(ctx, ended) }, // a retry
		func() error { return b.Completed(ctx, lost) },  // a late reader's loss
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := store.ReadStream(ctx, commands.BackgroundStream("ses_1"), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Metadata.CommandID != "bg/started/bg_1" || recs[1].Metadata.CommandID != "bg/completed/bg_1" ||
		recs[1].Metadata.CausationID != "c1" || recs[1].Metadata.CorrelationID != "ses_1" {
		t.Fatalf("stream %+v", recs)
	}
	st, err := b.Tasks(ctx, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	task, ok := st.Task("bg_1")
	if !ok || task.Completion == nil || task.Completion.Status != events.BackgroundExited {
		t.Fatalf("task %+v", task)
	}
	// A session stream's revision is not touched: the turn that owns it never sees session_busy.
	if recs, _ := store.ReadStream(ctx, commands.SessionStream("ses_1"), 0, 10); len(recs) != 0 {
		t.Fatalf("session stream %+v", recs)
	}
}
