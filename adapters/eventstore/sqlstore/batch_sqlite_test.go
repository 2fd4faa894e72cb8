package sqlstore

import (
	"context"
	"errors"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// request is an append as Append queues it for the writer.
func request(t *testing.T, stream string, expected events.ExpectedRevision, evs ...events.Event) *appendRequest {
	prepared, err := events.PrepareSeal(stream, evs)
	if err != nil {
		t.Fatal(err)
	}
	return &appendRequest{ctx: context.Background(), stream: stream, expected: expected, evs: evs, prepared: prepared,
		reply: make(chan appendReply, 1)}
}

// An append whose second event's id is stored is refused after its first event was
// inserted: that event must be taken back though the batch commits another append, and the
// other append gets the position it left.
func TestSQLiteRefusedAppendTakesBackItsEvents(t *testing.T) {
	s := openSQLite(t, sqliteFile(t))
	defer s.Close()
	ctx := context.Background()
	stored := testEvent("a", 0)
	if _, err := s.Append(ctx, "test-a", events.NoStream, stored); err != nil {
		t.Fatal(err)
	}
	// The writer is idle (no append in flight), so the test may run a batch itself.
	replies, err := s.commitBatch(ctx, []*appendRequest{
		request(t, "test-b", events.Any, testEvent("b", 0), stored),
		request(t, "test-c", events.NoStream, testEvent("c", 0)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var conflict *events.EventIDConflictError
	if !errors.As(replies[0].err, &conflict) {
		t.Fatalf("append with a stored id: want *events.EventIDConflictError, got %v", replies[0].err)
	}
	if replies[1].err != nil || replies[1].result.FirstPosition != 2 {
		t.Fatalf("the other append: %+v, want position 2", replies[1])
	}
	all, err := s.ReadAll(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Stream != "test-a" || all[1].Stream != "test-c" {
		t.Fatalf("log holds %+v, want test-a's event then test-c's", all)
	}
}

// A store remembers where its own appends left each stream, but only while no other
// connection commits to the file: an append by another process (here another store) must be
// seen by the next decision, as a wrong expected revision, not as a clash in the log's keys,
// and the chain must go on from the other process's event.
func TestSQLiteSeesAnotherProcessAppend(t *testing.T) {
	path := sqliteFile(t)
	a, b := openSQLite(t, path), openSQLite(t, path)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	if _, err := a.Append(ctx, "test-s", events.NoStream, testEvent("s", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, "test-s", events.Exact(0), testEvent("s", 1)); err != nil {
		t.Fatal(err)
	}
	_, err := a.Append(ctx, "test-s", events.Exact(0), testEvent("s", 2))
	var wrong *events.WrongExpectedRevisionError
	if !errors.As(err, &wrong) || wrong.Actual != 1 {
		t.Fatalf("append after another process's: want a wrong expected revision at 1, got %v", err)
	}
	res, err := a.Append(ctx, "test-s", events.Exact(1), testEvent("s", 2))
	if err != nil || res.FirstPosition != 3 {
		t.Fatalf("append at the other process's head: %+v, %v; want position 3", res, err)
	}
	recs, err := a.ReadStream(ctx, "test-s", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkChain(t, recs, 0)
}
