package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/events"
)

// Concurrent appends on Postgres (docs/storage.md, "Concurrent appends"): a reader of the
// whole log reads only below the oldest transaction in progress, so an append that commits
// after a later one was read can never be passed.

func testEvent(stream string, i int) events.Event {
	return events.Event{ID: events.DeriveID(stream, i), Type: "test.happened.1", Data: []byte(`{}`),
		Metadata: events.Metadata{CommandID: fmt.Sprint(stream, i), Actor: "user"}}
}

// openHeld starts an append of one event to stream in a transaction of its own that stays
// open until the test commits or rolls it back: positions reserved, rows written, not
// committed, as an append whose commit is slow.
func openHeld(t *testing.T, url, stream string) *sqlx.Tx {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	ev := testEvent(stream, 0)
	digest, err := events.BodyDigest(stream, ev)
	if err != nil {
		t.Fatal(err)
	}
	var outcome string
	if err := tx.Get(&outcome, `SELECT outcome FROM zuno_append($1, '{any}', '{0}', '{1}', $2, $3, '{"{}"}', '{"{\"commandId\":\"held\"}"}', $4, false)`,
		pq.Array([]string{stream}), pq.Array([]string{ev.ID}), pq.Array([]string{ev.Type}), pq.Array([]string{digest})); err != nil {
		t.Fatal(err)
	}
	if outcome != "ok" {
		t.Fatalf("held append: %s", outcome)
	}
	return tx
}

// readIDs reads the whole log after position 0 and returns the streams in position order.
func readStreams(t *testing.T, s *Store) []string {
	t.Helper()
	recs, err := s.ReadAll(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, r := range recs {
		if i > 0 && r.Position <= recs[i-1].Position {
			t.Fatalf("positions %d then %d", recs[i-1].Position, r.Position)
		}
		out = append(out, r.Stream)
	}
	return out
}

func TestPostgresHorizonWaitsForLongTransactions(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	defer s.Close()
	ctx := context.Background()
	held := openHeld(t, url, "held")
	later := appendLater(t, s)
	if got := readStreams(t, s); len(got) != 0 {
		t.Fatalf("read %v while an older append is open: a reader resuming after them would skip what it commits", got)
	}
	if last, err := s.LastPosition(ctx); err != nil || last != 0 {
		t.Fatalf("LastPosition %d (%v) while an older append is open, want 0", last, err)
	}
	if err := held.Commit(); err != nil {
		t.Fatal(err)
	}
	want := append([]string{"held"}, later...)
	if got := readStreams(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the commit: %v, want %v", got, want)
	}
}

// Only appends hold readers back: a long transaction that appends nothing, in this database
// or another of the cluster, does not.
func TestPostgresHorizonIgnoresOtherTransactions(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	defer s.Close()
	for _, other := range []string{url, pgtest.NewDatabase(t)} {
		db := sqlx.MustOpen("postgres", other)
		defer db.Close()
		tx := db.MustBegin()
		defer tx.Rollback()
		tx.MustExec(`CREATE TABLE unrelated (x int); INSERT INTO unrelated VALUES (1)`)
	}
	later := appendLater(t, s)
	if got := readStreams(t, s); fmt.Sprint(got) != fmt.Sprint(later) {
		t.Fatalf("read %v beside two open transactions that append nothing, want %v", got, later)
	}
}

// appendLater appends one event to each of three new streams and returns the streams.
func appendLater(t *testing.T, s *Store) []string {
	t.Helper()
	var later []string
	for i := range 3 {
		stream := fmt.Sprint("later-", i)
		if _, err := s.Append(context.Background(), stream, events.NoStream, testEvent(stream, 0)); err != nil {
			t.Fatal(err)
		}
		later = append(later, stream)
	}
	return later
}

// A subscriber that is reading while the held append is open gets every event once, in order,
// after the commit: it waited, it did not skip.
func TestPostgresSubscriberWaitsForHeldAppend(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held := openHeld(t, url, "held")
	got := make(chan events.Recorded, 16)
	go s.Subscribe(ctx, 0, func(r events.Recorded) error { got <- r; return nil })
	appendLater(t, s)
	select {
	case r := <-got:
		t.Fatalf("delivered %s at %d before the older append committed", r.Stream, r.Position)
	case <-time.After(500 * time.Millisecond):
	}
	if err := held.Commit(); err != nil {
		t.Fatal(err)
	}
	var order []string
	for len(order) < 4 {
		select {
		case r := <-got:
			order = append(order, r.Stream)
		case <-ctx.Done():
			t.Fatalf("after the commit the subscriber got only %v", order)
		}
	}
	if want := "[held later-0 later-1 later-2]"; fmt.Sprint(order) != want {
		t.Fatalf("delivered %v, want %s", order, want)
	}
}

// Two appends that decide the same revision of a stream at once collide on the unique
// (stream, revision) key: the later waits for the earlier, fails, and its batch is run again
// with new positions, after the earlier's: within a stream, positions follow revisions.
func TestPostgresConcurrentRevisionIsRetried(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Append(ctx, "x", events.NoStream, testEvent("x", 0)); err != nil {
		t.Fatal(err)
	}
	// The other append has written revision 1, not committed yet.
	other := sqlx.MustOpen("postgres", url)
	defer other.Close()
	tx := other.MustBegin()
	defer tx.Rollback()
	var otherID string
	if err := tx.Get(&otherID, `INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata, xid)
		VALUES (nextval('event_position'), gen_random_uuid(), 'x', 1, 'test.happened.1', '{}', '{"commandId":"other"}', pg_current_xact_id())
		RETURNING event_id`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		res events.AppendResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.Append(ctx, "x", events.Any, testEvent("x", 1))
		done <- result{res, err}
	}()
	waitForLockWait(t, other)
	// The other append stands after the waiting one's reservation, as one that reserved later.
	var ahead int64
	if err := tx.Get(&ahead, `SELECT setval('event_position', nextval('event_position') + 10)`); err != nil {
		t.Fatal(err)
	}
	tx.MustExec(`UPDATE event_log SET position = $1 WHERE event_id = $2`, ahead, otherID)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.FirstPosition <= uint64(ahead) || r.res.NextRevision != 2 {
		t.Fatalf("append beside another of the same revision: %+v %v, want revision 2 after position %d", r.res, r.err, ahead)
	}
	recs, err := s.ReadStream(ctx, "x", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Position <= recs[i-1].Position {
			t.Fatalf("revision %d at position %d after revision %d at %d", recs[i].StreamRevision, recs[i].Position,
				recs[i-1].StreamRevision, recs[i-1].Position)
		}
	}
}

// An append that finds its stream's head at or past the positions it reserved (an append that
// reserved later committed first) refuses to write behind it, with or without the idempotency
// probe (migration postgres/eventlog/0006).
func TestPostgresHeadPastReservationIsRefused(t *testing.T) {
	for _, probe := range []bool{false, true} {
		t.Run(fmt.Sprintf("probe=%v", probe), func(t *testing.T) {
			url := pgtest.NewDatabase(t)
			s := openPostgres(t, url)
			defer s.Close()
			db := sqlx.MustOpen("postgres", url)
			defer db.Close()
			db.MustExec(`INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata, xid)
				VALUES (1000, gen_random_uuid(), 'x', 0, 'test.happened.1', '{}', '{"commandId":"later"}', pg_current_xact_id())`)
			err := appendOneSQL(db, "x", probe)
			var pqErr *pq.Error
			if !errors.As(err, &pqErr) || pqErr.Code != "40001" {
				t.Fatalf("append reserving before the stream's head: %v, want serialization_failure", err)
			}
			if err := appendOneSQL(db, "y", probe); err != nil {
				t.Fatalf("append to another stream: %v", err)
			}
		})
	}
}

// appendOneSQL calls zuno_append directly for one event appended to stream with any revision.
func appendOneSQL(db sqlx.Execer, stream string, probe bool) error {
	_, err := db.Exec(`SELECT * FROM zuno_append($1, '{any}', '{0}', '{1}', $2, '{t}', '{"{}"}', '{"{\"c\":1}"}', '{d}', $3)`,
		pq.Array([]string{stream}), pq.Array([]string{events.DeriveID(stream, 0)}), probe)
	return err
}

// waitForLockWait waits until some session of the database waits on a lock (a row, or another
// transaction's uncommitted key).
func waitForLockWait(t *testing.T, db *sqlx.DB) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("no session waits on a lock")
}

func TestPostgresAppendMustBeFirstWrite(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	defer s.Close()
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	tx := db.MustBegin()
	defer tx.Rollback()
	tx.MustExec(`CREATE TABLE before_append (x int); INSERT INTO before_append VALUES (1)`)
	err := appendOneSQL(tx, "a", false)
	var pqErr *pq.Error
	if !errors.As(err, &pqErr) || pqErr.Code != "25000" {
		t.Fatalf("zuno_append after another write in its transaction: %v, want invalid_transaction_state", err)
	}
}
