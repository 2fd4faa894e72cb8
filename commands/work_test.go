package commands_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// A child session's work commands and reads resolve to its root session's work stream, and
// readers fold that stream from its latest snapshot into the state a whole fold gives.
func TestWorkOfChildSessionsAndSnapshots(t *testing.T) {
	defer commands.SetWorkSnapshotEvery(4)()
	ctx := context.Background()
	s := openStack(t, filepath.Join(t.TempDir(), "events.db"))
	for _, c := range []session.Create{
		{SessionID: "ses_root", Title: "root", Agent: "build", Directory: "/ws"},
		{SessionID: "ses_child", Title: "child", Agent: "explore", ParentSessionID: "ses_root", Directory: "/ws"},
		{SessionID: "ses_grandchild", Title: "grandchild", Agent: "explore", ParentSessionID: "ses_child", Directory: "/ws"},
	} {
		send(t, s, &commands.CreateSession{Meta: commands.Meta{CommandID: "create-" + c.SessionID}, Create: c})
	}
	for _, id := range []string{"ses_root", "ses_child", "ses_grandchild", "ses_unknown"} {
		want := "ses_root"
		if id == "ses_unknown" {
			want = id
		}
		if got, err := commands.RootSession(ctx, s.store, registry, id); err != nil || got != want {
			t.Fatalf("root of %s = %q %v, want %s", id, got, err, want)
		}
	}

	// Eleven todo updates from the three sessions: one work stream, the root's.
	who := []string{"ses_grandchild", "ses_child", "ses_root"}
	for i := range 11 {
		title := fmt.Sprintf("item %d", i)
		res := send(t, s, &commands.UpdateTodos{Meta: commands.Meta{CommandID: fmt.Sprintf("todo-%d", i)}, SessionID: who[i%3],
			Update: work.TodoUpdate{Items: []work.TodoInput{{Title: &title}}}})
		if res.Err() != nil || res.Stream != commands.WorkStream("ses_root") {
			t.Fatalf("todo %d from %s: stream %s, %v", i, who[i%3], res.Stream, res.Err())
		}
	}
	for _, id := range []string{"ses_child", "ses_grandchild"} {
		if recs, _ := s.store.ReadStream(ctx, commands.WorkStream(id), 0, 10); len(recs) != 0 {
			t.Fatalf("%s has a work stream of its own (%d events)", id, len(recs))
		}
	}
	// Snapshots after revisions 3 and 7 (every 4 events).
	snaps, err := s.store.ReadStream(ctx, commands.WorkSnapshotStream("ses_root"), 0, 10)
	if err != nil || len(snaps) != 2 {
		t.Fatalf("%d snapshots, %v; want 2", len(snaps), err)
	}
	for i, rec := range snaps {
		p, err := registry.Decode(rec)
		if err != nil || p.(events.WorkSnapshot).WorkRevision != uint64(4*i+3) {
			t.Fatalf("snapshot %d: %+v %v", i, p, err)
		}
	}

	// From the snapshot: the work stream is read from revision 8 only, and the state is the
	// whole fold's.
	var whole work.State
	if _, err := commands.Load(ctx, s.store, registry, commands.WorkStream("ses_root"), 0,
		func(_ events.Recorded, p events.Payload) error { return whole.Evolve(p) }); err != nil {
		t.Fatal(err)
	}
	reads := &fromRecorder{EventStore: s.store}
	st, rev, err := commands.LoadWork(ctx, reads, registry, "ses_root")
	if err != nil || rev != 10 {
		t.Fatalf("LoadWork: revision %d, %v", rev, err)
	}
	if reads.workFrom != 8 {
		t.Fatalf("the work stream was read from revision %d, want 8 (after the snapshot at 7)", reads.workFrom)
	}
	if fmt.Sprint(st.Snapshot(10)) != fmt.Sprint(whole.Snapshot(10)) {
		t.Fatalf("from the snapshot:\n%+v\nwhole fold:\n%+v", st.Snapshot(10), whole.Snapshot(10))
	}
	got, err := s.handlers.Work(ctx, "ses_grandchild")
	if err != nil || fmt.Sprint(got.Snapshot(10)) != fmt.Sprint(whole.Snapshot(10)) {
		t.Fatalf("Work of the grandchild: %v", err)
	}

	// A re-delivered command whose events lie before the latest snapshot is still recognised:
	// commands fold the whole stream.
	title := "item 0"
	res := send(t, s, &commands.UpdateTodos{Meta: commands.Meta{CommandID: "todo-0"}, SessionID: "ses_grandchild",
		Update: work.TodoUpdate{Items: []work.TodoInput{{Title: &title}}}})
	if !res.Duplicate || res.Revision != 0 {
		t.Fatalf("re-delivered todo-0: duplicate %v revision %d", res.Duplicate, res.Revision)
	}
}

// fromRecorder records the revision the work stream is first read from.
type fromRecorder struct {
	commands.EventStore
	workFrom int64
	read     bool
}

func (f *fromRecorder) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if stream == commands.WorkStream("ses_root") && !f.read {
		f.read, f.workFrom = true, int64(from)
	}
	return f.EventStore.ReadStream(ctx, stream, from, limit)
}

func (f *fromRecorder) ReadStreamBackward(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	return f.EventStore.(interface {
		ReadStreamBackward(context.Context, string, uint64, int) ([]events.Recorded, error)
	}).ReadStreamBackward(ctx, stream, from, limit)
}
