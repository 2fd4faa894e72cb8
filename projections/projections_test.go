package projections_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

var registry = events.NewRegistry(events.AllPayloads()...)

type env struct {
	store  *sqlstore.Store
	rm     *readmodel.DB
	runner *projections.Runner
}

// dialects are the two databases a test runs on: SQLite, and PostgreSQL (pgtest: skipped
// without a server, a failure under CI).
var dialects = []struct {
	name string
	env  func(testing.TB) *env
}{{"sqlite", sqliteEnv}, {"postgres", postgresEnv}}

func sqliteEnv(t testing.TB) *env { return sqliteEnvAt(t, filepath.Join(t.TempDir(), "zuno.db")) }

// sqliteEnvAt opens the event store and read models in the SQLite file at path.
func sqliteEnvAt(t testing.TB, path string) *env {
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := readmodel.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All())
	t.Cleanup(func() { runner.Close(); rm.Close(); store.Close() })
	return &env{store: store, rm: rm, runner: runner}
}

func postgresEnv(t testing.TB) *env { return postgresEnvAt(t, pgtest.NewDatabase(t)) }

// postgresEnvAt opens the event store and read models in the Postgres database at url.
func postgresEnvAt(t testing.TB, url string) *env {
	ctx := context.Background()
	store, err := sqlstore.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := readmodel.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All())
	t.Cleanup(func() { runner.Close(); rm.Close(); store.Close() })
	return &env{store: store, rm: rm, runner: runner}
}

var tables = map[string]string{
	"event":     "position",
	"session":   "id",
	"work_plan": "session_id, plan_id",
	"work_item": "session_id, id",

	"part":              "session_id, id",
	"prompt_receipt":    "id",
	"prompt_checkpoint": "session_id, receipt_id",
	"provider_request":  "id",

	"permission_decision": "session_id, call_id",

	"agent_job": "id",
	"inbox":     "session_id, input_id",

	"task_context": "session_id, task_id",
}

// dump returns every row of every read model as text, in key order.
func dump(t testing.TB, db *sqlx.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for table, key := range tables {
		rows, err := db.Queryx(fmt.Sprintf(`SELECT * FROM %s ORDER BY %s`, table, key))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v|", v)
			}
			out[table] = append(out[table], b.String())
		}
		rows.Close()
	}
	return out
}

func compareDumps(t *testing.T, live, rebuilt map[string][]string) {
	t.Helper()
	for table := range tables {
		a, b := live[table], rebuilt[table]
		if len(a) != len(b) {
			t.Fatalf("%s: %d rows live, %d rebuilt", table, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s row %d differs:\nlive    %s\nrebuilt %s", table, i, a[i], b[i])
			}
		}
	}
}

// testRebuildEqualsLive projects live (following the log while it is written), then rebuilds
// and compares every row.
func testRebuildEqualsLive(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- e.runner.Run(ctx) }()
	n := scenario(t, e.store, 30) + turnScenario(t, e.store, 5) + permissionScenario(t, e.store, 4) + jobScenario(t, e.store, 3)
	head, _ := e.store.LastPosition(ctx)
	if head != uint64(n) {
		t.Fatalf("log head %d after writing %d events", head, n)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if err := e.runner.WaitFor(waitCtx, head); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-runErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run ended with %v", err)
	}
	live := dump(t, e.rm.Writer)
	if len(live["event"]) != n || len(live["session"]) != 42 || len(live["work_item"]) != 60 {
		t.Fatalf("live read models: %d events, %d sessions, %d items", len(live["event"]), len(live["session"]), len(live["work_item"]))
	}
	// Two user messages for each of the scenario's sessions; 11 parts, 5 receipts and 5
	// requests for each of the turns'; 7 parts, 2 receipts, 2 requests and 6 decisions for each
	// of the permission sessions'; 5 jobs, 4 inputs and the message delivering one report for
	// each of the delegations'.
	if len(live["part"]) != 60+55+28+3 || len(live["prompt_receipt"]) != 25+8 || len(live["provider_request"]) != 25+8 ||
		len(live["agent_job"]) != 15 || len(live["inbox"]) != 12 || len(live["permission_decision"]) != 24 {
		t.Fatalf("live turn read models: %d parts, %d receipts, %d requests, %d jobs, %d inputs, %d decisions",
			len(live["part"]), len(live["prompt_receipt"]), len(live["provider_request"]), len(live["agent_job"]),
			len(live["inbox"]), len(live["permission_decision"]))
	}
	count, err := e.runner.Rebuild(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("rebuild replayed %d events, want %d", count, n)
	}
	compareDumps(t, live, dump(t, e.rm.Writer))

	// Some projectors rebuild alone, and the rest keep their rows.
	if _, err := e.runner.Rebuild(context.Background(), "work_plan", "part", "permission_decision", "inbox"); err != nil {
		t.Fatal(err)
	}
	compareDumps(t, live, dump(t, e.rm.Writer))
	var unknown *projections.UnknownProjectorError
	if _, err := e.runner.Rebuild(context.Background(), "nope"); !errors.As(err, &unknown) {
		t.Fatalf("rebuild of an unknown projector: %v", err)
	}
	st, err := e.runner.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Checkpoint != head || s.Lag != 0 {
			t.Fatalf("status %+v, want checkpoint %d and no lag", s, head)
		}
	}
}

func TestRebuildEqualsLiveSQLite(t *testing.T)   { testRebuildEqualsLive(t, sqliteEnv(t)) }
func TestRebuildEqualsLivePostgres(t *testing.T) { testRebuildEqualsLive(t, postgresEnv(t)) }

// Forensic SQL, written for SQLite, runs unchanged on Postgres.
func testSeedQueries(t *testing.T, e *env) {
	scenario(t, e.store, 3)
	if _, err := e.runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := e.rm.Query(ctx, `SELECT session_id, revision, title, steps FROM work_plan
		WHERE session_id = 'ses_0001'`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][2] != "Fix" {
		t.Fatalf("work_plan rows %v", res.Rows)
	}
	res, err = e.rm.Query(ctx, `SELECT id, status, owner, dependencies FROM work_item
		WHERE session_id = 'ses_0001' ORDER BY time_created, id`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0][1] != "completed" || res.Rows[1][2] != "build" {
		t.Fatalf("work_item rows %v", res.Rows)
	}
	res, err = e.rm.Query(ctx, `SELECT COUNT(*) AS n FROM event
		WHERE aggregate_id = 'ses_0001' AND type = 'session.user_message.appended.1'
		AND json_extract(data, '$.messageId') = 'msg_2'`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Rows[0][0]) != "1" {
		t.Fatalf("json_extract count %v", res.Rows)
	}
	res, err = e.rm.Query(ctx, `SELECT json_extract(data, '$.steps[1].title') FROM event
		WHERE aggregate_id = 'ses_0001' AND type = 'work.plan.created.1'`, 0)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "Patch" {
		t.Fatalf("array path: %v %v", res, err)
	}
	for _, write := range []string{
		`DELETE FROM event`,
		`UPDATE session SET title = 'x'`,
		`INSERT INTO session (id, title, agent, message_count, time_created, time_updated) VALUES ('a','b','c',0,'d','e')`,
		`DROP TABLE work_item`,
	} {
		_, err := e.rm.Query(ctx, write, 0)
		var ro *readmodel.ReadOnlyError
		if !errors.As(err, &ro) {
			t.Fatalf("%q: want *readmodel.ReadOnlyError, got %T: %v", write, err, err)
		}
	}
	res, err = e.rm.Query(ctx, `SELECT COUNT(*) FROM event`, 0)
	if err != nil || fmt.Sprint(res.Rows[0][0]) == "0" {
		t.Fatalf("a refused write changed the read model: %v %v", res, err)
	}
	_, err = e.rm.Query(ctx, `SELEC nonsense`, 0)
	var qe *readmodel.QueryError
	if !errors.As(err, &qe) {
		t.Fatalf("syntax error: %T %v", err, err)
	}
}

func TestSeedQueriesSQLite(t *testing.T)   { testSeedQueries(t, sqliteEnv(t)) }
func TestSeedQueriesPostgres(t *testing.T) { testSeedQueries(t, postgresEnv(t)) }

// An event this build cannot decode stops the projection at that event, typed, and nothing of
// its batch is applied.
func TestUnknownEventStopsProjection(t *testing.T) {
	e := sqliteEnv(t)
	scenario(t, e.store, 1)
	_, err := e.store.Append(context.Background(), "session-x", events.Any, events.Event{
		ID: events.DeriveID("future", 0), Type: "session.from_the_future.9", Data: []byte(`{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.runner.CatchUp(context.Background())
	var unknown *events.UnknownEventTypeError
	if !errors.As(err, &unknown) || unknown.Type != "session.from_the_future.9" || unknown.Position == 0 {
		t.Fatalf("want *events.UnknownEventTypeError naming the type and position, got %v", err)
	}
	// session, not event: event is a view over the log here, which holds every event.
	if n := len(dump(t, e.rm.Writer)["session"]); n != 0 {
		t.Fatalf("%d sessions projected from a batch that holds an unreadable event", n)
	}
}

func TestCancelledRebuildKeepsReadModelSQLite(t *testing.T) {
	testCancelledRebuildKeepsReadModel(t, sqliteEnv(t))
}
func TestCancelledRebuildKeepsReadModelPostgres(t *testing.T) {
	testCancelledRebuildKeepsReadModel(t, postgresEnv(t))
}

// cancellingFeed ends a context once a reader has asked for the events after position from.
type cancellingFeed struct {
	projections.Feed
	from   uint64
	cancel context.CancelFunc
}

func (f cancellingFeed) ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
	if after >= f.from {
		f.cancel()
	}
	return f.Feed.ReadAll(ctx, after, limit)
}

// A rebuild whose context ends part way fails and leaves the read model as it was, although its
// statements run without that context (statementContext).
func testCancelledRebuildKeepsReadModel(t *testing.T, e *env) {
	n := scenario(t, e.store, 20)
	if _, err := e.runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := dump(t, e.rm.Writer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feed := cancellingFeed{Feed: e.store, from: uint64(n / 2), cancel: cancel}
	runner := projections.NewRunner(e.rm.Writer, feed, registry, projections.All(), projections.WithBatchSize(10))
	got, err := runner.Rebuild(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("rebuild of %d events after its context ended: replayed %d, error %v, want context.Canceled", n, got, err)
	}
	compareDumps(t, before, dump(t, e.rm.Writer))
}

func TestCancelledBatchIsCancelledSQLite(t *testing.T) {
	testCancelledBatchIsCancelled(t, sqliteEnv(t))
}
func TestCancelledBatchIsCancelledPostgres(t *testing.T) {
	testCancelledBatchIsCancelled(t, postgresEnv(t))
}

// cancellingProjector ends a context when it is given the event at position at, and goes on
// once database/sql has rolled the transaction back for it (which it does on a goroutine of
// its own), so that its next statement meets a transaction that is done.
type cancellingProjector struct {
	projections.Projector
	at     uint64
	cancel context.CancelFunc
}

func (p cancellingProjector) Apply(ctx context.Context, tx *projections.Tx, ev events.Recorded, payload events.Payload) error {
	if ev.Position == p.at {
		p.cancel()
		for deadline := time.Now().Add(10 * time.Second); tx.Exec(ctx, `SELECT 1`) == nil; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				return errors.New("the transaction is still open 10 s after its context ended")
			}
		}
	}
	return p.Projector.Apply(ctx, tx, ev, payload)
}

// A batch whose context ends while its projectors write fails with the context's error, which
// zuno worker takes for an interrupt, and applies nothing, although the projectors' statements
// run without that context (statementContext).
func testCancelledBatchIsCancelled(t *testing.T, e *env) {
	n := scenario(t, e.store, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runner := projections.NewRunner(e.rm.Writer, e.store, registry,
		[]projections.Projector{cancellingProjector{projections.Sessions{}, uint64(n / 2), cancel}, projections.WorkPlans{}})
	if _, err := runner.CatchUp(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("catch-up whose context ended in a batch: %v, want context.Canceled", err)
	}
	var rows int
	if err := e.rm.Writer.Get(&rows, `SELECT COUNT(*) FROM session`); err != nil || rows != 0 {
		t.Fatalf("%d session rows after the cancelled batch (%v), want none", rows, err)
	}
}
