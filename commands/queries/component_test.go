package queries_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Component tests of the queries: real command handlers write to the in-memory event store, a
// projection runner keeps a SQLite read model in a temporary directory, and every answer is
// read through queries.Queries, as the Application's faces read it.

type rig struct {
	t        *testing.T
	log      *memstore.Log
	store    *memstore.Store
	registry *events.Registry
	handlers *commands.Handlers
	rm       *readmodel.DB
	q        *queries.Queries
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{t: t, log: memstore.NewLog(), registry: events.NewRegistry(events.AllPayloads()...)}
	r.store = memstore.Open(r.log)
	t.Cleanup(func() { r.store.Close() })
	rm, err := readmodel.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rm.db"))
	if err != nil {
		t.Fatal(err)
	}
	r.rm = rm
	runner := projections.NewRunner(rm.Writer, r.store, r.registry, projections.All())
	t.Cleanup(func() { runner.Close(); rm.Close() })
	r.handlers = commands.NewHandlers(r.store, r.registry, commands.SystemClock{}, nil)
	r.q = queries.New(r.store, r.registry, readModels{rm}, runner)
	return r
}

// readModels is the read-model database as the queries' port.
type readModels struct{ db *readmodel.DB }

func (r readModels) Query(ctx context.Context, sql string, limit int, args ...any) (queries.Table, error) {
	rows, err := r.db.Query(ctx, sql, limit, args...)
	if err != nil {
		return queries.Table{}, err
	}
	return queries.Table{Columns: rows.Columns, Rows: rows.Rows}, nil
}

func (r readModels) UserQuery(ctx context.Context, sql string, b queries.UserBounds, sink queries.RowSink) (queries.UserSummary, error) {
	s, err := r.db.UserQuery(ctx, sql, readmodel.UserOptions{Limit: b.Limit, MaxBytes: b.MaxBytes, Timeout: b.Timeout}, sink)
	return queries.UserSummary(s), err
}

// create creates a session working in dir through h.
func (r *rig) create(h *commands.Handlers, id, title, dir string) commands.Result {
	r.t.Helper()
	res, err := h.CreateSession(context.Background(), &commands.CreateSession{Meta: commands.Meta{CommandID: "create-" + id + uuid.NewString()},
		Create: session.Create{SessionID: id, Title: title, Agent: "build", Directory: dir}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

func code(t *testing.T, err error, want string) {
	t.Helper()
	if got := domain.CodeOf(err); got != want {
		t.Fatalf("code %q, want %q (%v)", got, want, err)
	}
}

// Lists read the read models, which a query brings up to the log's head as it was when the
// query began: a write by any handle on the log (another process) is seen without waiting
// for anything by hand.
func TestComponentReadYourWrites(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(r.handlers, "ses_1", "one", "/ws/a")
	// Another process: its own store handle and handlers over the same log.
	other := memstore.Open(r.log)
	defer other.Close()
	r.create(commands.NewHandlers(other, r.registry, commands.SystemClock{}, nil), "ses_2", "two", "/ws/b")

	list, err := r.q.Sessions(ctx, 10)
	if err != nil || len(list.Rows) != 2 {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	dirs, err := r.q.Workspaces(ctx)
	if err != nil || strings.Join(dirs, ",") != "/ws/a,/ws/b" {
		t.Fatalf("workspaces: %v %v", dirs, err)
	}
	for dir, want := range map[string]string{"/ws/a": "ses_1", "/ws/b": "ses_2"} {
		if got, err := r.q.LatestSession(ctx, dir); err != nil || got != want {
			t.Fatalf("latest in %s: %q %v", dir, got, err)
		}
	}
	_, err = r.q.LatestSession(ctx, "/ws/none")
	code(t, err, queries.CodeNotFound)

	t.Run("WaitFor returns once the read models hold a command's position", func(t *testing.T) {
		res := r.create(r.handlers, "ses_3", "three", "/ws/c")
		if err := r.q.WaitFor(ctx, res.LastPosition); err != nil {
			t.Fatal(err)
		}
		got, err := r.rm.Query(ctx, "SELECT title FROM session WHERE id = ?", 1, "ses_3")
		if err != nil || len(got.Rows) != 1 || got.Rows[0][0] != "three" {
			t.Fatalf("read model row: %+v %v", got, err)
		}
	})
	t.Run("a value is a parameter, never SQL", func(t *testing.T) {
		// Spliced into the query, this directory would match every session.
		_, err := r.q.LatestSession(ctx, "/ws/none' OR '1'='1")
		code(t, err, queries.CodeNotFound)
	})
	t.Run("the user's SQL reads, and cannot write", func(t *testing.T) {
		b := queries.UserBounds{Timeout: time.Second}
		var tab queries.Table
		_, err := r.q.UserSQL(ctx, "SELECT id FROM session ORDER BY id", b, &tab)
		if err != nil || len(tab.Rows) != 3 {
			t.Fatalf("user query: %+v %v", tab, err)
		}
		_, err = r.q.UserSQL(ctx, "UPDATE session SET title = 'x'", b, &queries.Table{})
		code(t, err, readmodel.CodeReadOnly)
		tab = queries.Table{}
		_, _ = r.q.UserSQL(ctx, "SELECT title FROM session WHERE id = 'ses_1'", b, &tab)
		if len(tab.Rows) != 1 || tab.Rows[0][0] != "one" {
			t.Fatalf("the refused write changed a row: %+v", tab)
		}
	})
	t.Run("projection status after the queries: no lag", func(t *testing.T) {
		head, _ := r.store.LastPosition(ctx)
		st, err := r.q.ProjectionStatus(ctx)
		if err != nil || len(st) == 0 {
			t.Fatalf("status: %+v %v", st, err)
		}
		for _, s := range st {
			if s.Head != head || s.Lag != 0 {
				t.Fatalf("projector %+v, head %d", s, head)
			}
		}
	})
}

// Answers that decisions depend on are folded from the log: they never wait for, nor depend
// on, the read models.
func TestComponentFolds(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(r.handlers, "ses_f", "folded", "/ws/f")
	if res, _ := r.handlers.AppendUserMessage(ctx, &commands.AppendUserMessage{Meta: commands.Meta{CommandID: "m1"},
		AppendUserMessage: session.AppendUserMessage{SessionID: "ses_f", MessageID: "msg_1", Text: "hi"}}); res.Err() != nil {
		t.Fatal(res.Err())
	}
	if res, _ := r.handlers.UpdatePlan(ctx, &commands.UpdatePlan{Meta: commands.Meta{CommandID: "p1"}, SessionID: "ses_f",
		Update: work.PlanUpdate{Action: "create", Title: "Folded plan", Steps: []work.StepInput{{Title: "a"}}}}); res.Err() != nil {
		t.Fatal(res.Err())
	}
	// The read models are broken on purpose: the folds must not read them.
	if err := r.rm.Close(); err != nil {
		t.Fatal(err)
	}

	info, err := r.q.Session(ctx, "ses_f")
	if err != nil || info.Title != "folded" || info.Directory != "/ws/f" || info.Messages != 1 || len(info.Turns) != 0 {
		t.Fatalf("session: %+v %v", info, err)
	}
	plan, err := r.q.Plan(ctx, "ses_f")
	if b, _ := json.Marshal(plan); err != nil || !strings.Contains(string(b), `"title":"Folded plan"`) {
		t.Fatalf("plan: %s %v", b, err)
	}
	todos, err := r.q.Todos(ctx, "ses_f")
	if b, _ := json.Marshal(todos); err != nil || !strings.Contains(string(b), `"items":[]`) {
		t.Fatalf("todos: %s %v", b, err)
	}
	if err := r.q.RequireSession(ctx, "ses_f"); err != nil {
		t.Fatal(err)
	}
	if res, _ := r.handlers.ForkSession(ctx, &commands.ForkSession{Meta: commands.Meta{CommandID: "f1"}, SessionID: "ses_g",
		SourceStream: commands.SessionStream("ses_f"), SourceRevision: 1}); res.Err() != nil {
		t.Fatal(res.Err())
	}
	for id, want := range map[string]queries.SessionPlace{"ses_f": {Agent: "build", Directory: "/ws/f"}, "ses_g": {Agent: "build", Directory: "/ws/f"}} {
		if got, err := r.q.Place(ctx, id); err != nil || got != want {
			t.Fatalf("place of %s: %+v %v, want %+v", id, got, err, want)
		}
	}
	for name, read := range map[string]func() error{
		"place":   func() error { _, err := r.q.Place(ctx, "ses_nope"); return err },
		"session": func() error { _, err := r.q.Session(ctx, "ses_nope"); return err },
		"plan":    func() error { _, err := r.q.Plan(ctx, "ses_nope"); return err },
		"todos":   func() error { _, err := r.q.Todos(ctx, "ses_nope"); return err },
		"require": func() error { return r.q.RequireSession(ctx, "ses_nope") },
	} {
		t.Run(name+" of an unknown session", func(t *testing.T) { code(t, read(), domain.CodeSessionNotFound) })
	}
}

// Events reads the log as it is: one stream from a revision, the whole log after a position,
// and never skips an event this build cannot decode.
func TestComponentEvents(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(r.handlers, "ses_e", "events", "/ws/e")
	for i := range 3 {
		res, _ := r.handlers.AppendUserMessage(ctx, &commands.AppendUserMessage{Meta: commands.Meta{CommandID: fmt.Sprint("m", i)},
			AppendUserMessage: session.AppendUserMessage{SessionID: "ses_e", MessageID: fmt.Sprint("msg_", i), Text: "hi"}})
		if res.Err() != nil {
			t.Fatal(res.Err())
		}
	}
	stream := commands.SessionStream("ses_e")
	for _, tc := range []struct {
		name          string
		stream        string
		from          uint64
		limit, want   int
		firstRevision uint64
	}{
		{"a whole stream", stream, 0, 0, 4, 0},
		{"a stream from a revision", stream, 2, 0, 2, 2},
		{"a stream, limited", stream, 0, 3, 3, 0},
		{"the log after a position", "", 1, 0, 3, 1},
		{"the log, limited", "", 0, 2, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := r.q.Events(ctx, tc.stream, tc.from, tc.limit)
			if err != nil || len(recs) != tc.want || recs[0].StreamRevision != tc.firstRevision {
				t.Fatalf("%d events (%v), want %d from revision %d", len(recs), err, tc.want, tc.firstRevision)
			}
		})
	}
	t.Run("an unknown stream names how streams are spelled", func(t *testing.T) {
		_, err := r.q.Events(ctx, "ses_e", 0, 0)
		code(t, err, queries.CodeNotFound)
		if !strings.Contains(err.Error(), "did you mean session-ses_e?") {
			t.Fatalf("no hint: %v", err)
		}
	})
	t.Run("an event this build cannot decode is an error, never skipped", func(t *testing.T) {
		if _, err := r.store.Append(ctx, "session-ses_e", events.Any, events.Event{ID: uuid.NewString(), Type: "session.from.the.future.9",
			Data: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		_, err := r.q.Events(ctx, stream, 0, 0)
		code(t, err, events.CodeUnknownEventType)
		_, err = r.q.Events(ctx, "", 0, 0)
		code(t, err, events.CodeUnknownEventType)
	})
}
