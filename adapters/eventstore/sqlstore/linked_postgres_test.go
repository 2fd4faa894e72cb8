package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/events"
)

// Known heads on Postgres (docs/storage.md, "Known heads"): a batch of appends to streams
// whose heads the store knows is linked by the store and written without reading the heads.
// Each test is an attack on that knowledge: another process moved a head, an append is a
// retry of stored events, the caller expects something else, appenders race.

// openLinked opens a store on url with its own metrics.
func openLinked(t *testing.T, url string) (*Store, *storemetrics.Metrics) {
	t.Helper()
	m := storemetrics.New(nil)
	s, err := OpenPostgres(context.Background(), url, WithMetrics(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, m
}

func linkedCount(m *storemetrics.Metrics, result string) int {
	return int(testutil.ToFloat64(m.LinkedAppends.WithLabelValues("postgres", result)))
}

// verifyLog checks the whole log's hash chain and that within each stream positions follow
// revisions, reading it through a store that knows nothing.
func verifyLog(t *testing.T, url string) []events.Recorded {
	t.Helper()
	s, _ := openLinked(t, url)
	recs, err := s.ReadAll(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	checkChain(t, recs, 0)
	return recs
}

// checkChain fails t on the first fault of recs' hash chains, events at or below genesis
// allowed to have none.
func checkChain(t *testing.T, recs []events.Recorded, genesis uint64) {
	t.Helper()
	w := events.NewChainWalker(genesis, nil)
	for _, r := range recs {
		w.Add(r)
	}
	if f := w.Faults(); len(f) > 0 {
		t.Fatalf("hash chain: %+v", f)
	}
}

func mustAppend(t *testing.T, s *Store, stream string, exp events.ExpectedRevision, evs ...events.Event) events.AppendResult {
	t.Helper()
	res, err := s.Append(context.Background(), stream, exp, evs...)
	if err != nil {
		t.Fatalf("append to %s: %v", stream, err)
	}
	return res
}

func TestLinkedAppendsChainAsSealDoes(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, testEvent("x", 0), testEvent("x", 1))
	for i := 2; i < 6; i++ {
		res := mustAppend(t, s, "x", events.Exact(uint64(i-1)), testEvent("x", i))
		if res.NextRevision != uint64(i) || res.FirstPosition != res.LastPosition {
			t.Fatalf("append %d: %+v", i, res)
		}
	}
	if got := linkedCount(m, storemetrics.LinkedWritten); got != 5 {
		t.Fatalf("linked appends: %d, want 5 (every one, the first with its stream expected new)", got)
	}
	// As the function would have linked them: the chain from revision 0, in Go.
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	var stored string
	if err := db.Get(&stored, `SELECT metadata->>'hash' FROM event_log WHERE stream = 'x' AND stream_revision = 5`); err != nil {
		t.Fatal(err)
	}
	evs := []events.Event{}
	for i := range 6 {
		evs = append(evs, testEvent("x", i))
	}
	if want := hashChain(t, "x", evs...); stored != want {
		t.Fatalf("hash at revision 5: %s, want %s", stored, want)
	}
	verifyLog(t, url)
}

// hashChain is the hash of the last of evs, stored from revision 0 of a new stream.
func hashChain(t *testing.T, stream string, evs ...events.Event) string {
	sealed, err := events.Seal(stream, "", 0, evs)
	if err != nil {
		t.Fatal(err)
	}
	return sealed[len(sealed)-1].Metadata.Hash
}

// Another process appends to the stream: what this store knows is stale.
func TestLinkedAppendAfterAnotherProcess(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, m := openLinked(t, url)
	b, _ := openLinked(t, url)
	mustAppend(t, a, "x", events.NoStream, testEvent("x", 0))
	mustAppend(t, b, "x", events.Exact(0), testEvent("x", 1)) // a still knows head 0

	// a's caller is stale too: refused, with the stored head.
	_, err := a.Append(context.Background(), "x", events.Exact(0), testEvent("x", 2))
	var wrong *events.WrongExpectedRevisionError
	if !errors.As(err, &wrong) || wrong.Actual != 1 {
		t.Fatalf("stale exact append: %v, want wrong expected revision, actual 1", err)
	}
	// a's caller knows better than a: written after b's event.
	if res := mustAppend(t, a, "x", events.Exact(1), testEvent("x", 3)); res.NextRevision != 2 {
		t.Fatalf("append at the real head: %+v", res)
	}
	mustAppend(t, b, "x", events.Any, testEvent("x", 4)) // b's knowledge stale now
	if res := mustAppend(t, a, "x", events.Any, testEvent("x", 5)); res.NextRevision != 4 {
		t.Fatalf("any after another process: %+v, want revision 4", res)
	}
	if got := linkedCount(m, storemetrics.LinkedFellBack); got < 2 {
		t.Fatalf("fell back %d times, want at least 2 (a stale head, a stale caller)", got)
	}
	recs := verifyLog(t, url)
	if len(recs) != 5 {
		t.Fatalf("stored %d events, want 5", len(recs))
	}
}

// A retry of stored events is answered as the original append, whether the store knows the
// head (past them) or not (a new process), and whatever the retry expects.
func TestLinkedRetryOfStoredAppend(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, _ := openLinked(t, url)
	first := mustAppend(t, a, "x", events.NoStream, testEvent("x", 0), testEvent("x", 1))
	second := mustAppend(t, a, "x", events.Exact(1), testEvent("x", 2))
	fresh, _ := openLinked(t, url)
	for _, tc := range []struct {
		name string
		s    *Store
		exp  events.ExpectedRevision
		evs  []events.Event
		want events.AppendResult
	}{
		{"same store, first append", a, events.NoStream, []events.Event{testEvent("x", 0), testEvent("x", 1)}, first},
		{"same store, last append", a, events.Exact(1), []events.Event{testEvent("x", 2)}, second},
		{"same store, any", a, events.Any, []events.Event{testEvent("x", 2)}, second},
		{"new process, first append", fresh, events.NoStream, []events.Event{testEvent("x", 0), testEvent("x", 1)}, first},
		{"new process, last append", fresh, events.Exact(1), []events.Event{testEvent("x", 2)}, second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.s.Append(context.Background(), "x", tc.exp, tc.evs...)
			if err != nil || res != tc.want {
				t.Fatalf("retry: %+v %v, want %+v", res, err, tc.want)
			}
		})
	}
	if recs := verifyLog(t, url); len(recs) != 3 {
		t.Fatalf("stored %d events, want 3", len(recs))
	}
}

// A store that has never seen a stream assumes a stream expected new is new, and reads the
// head of any other.
func TestLinkedAppendToStreamUnknownHere(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, _ := openLinked(t, url)
	mustAppend(t, a, "x", events.NoStream, testEvent("x", 0), testEvent("x", 1))
	b, m := openLinked(t, url)
	_, err := b.Append(context.Background(), "x", events.NoStream, testEvent("x", 9))
	var wrong *events.WrongExpectedRevisionError
	if !errors.As(err, &wrong) || wrong.Actual != 1 {
		t.Fatalf("no_stream on an existing stream: %v, want wrong expected revision, actual 1", err)
	}
	if res := mustAppend(t, b, "x", events.Exact(1), testEvent("x", 2)); res.NextRevision != 2 {
		t.Fatalf("exact after a head read: %+v", res)
	}
	if res := mustAppend(t, b, "x", events.StreamExists, testEvent("x", 3)); res.NextRevision != 3 {
		t.Fatalf("exists: %+v", res)
	}
	if linked, read := linkedCount(m, storemetrics.LinkedWritten), linkedCount(m, storemetrics.LinkedAfterRead); linked != 1 || read != 1 {
		t.Fatalf("linked %d, after a head read %d; want 1 and 1 (the head is read once)", linked, read)
	}
	verifyLog(t, url)
}

// Appenders in two processes race on one stream, each append with any revision: every append
// is stored once, revisions are contiguous, positions follow them, the chain holds.
func TestLinkedAppendersRace(t *testing.T) {
	url := pgtest.NewDatabase(t)
	stores := []*Store{}
	for range 2 {
		s, _ := openLinked(t, url)
		stores = append(stores, s)
	}
	const perWriter = 40
	var wg sync.WaitGroup
	errs := make(chan error, 4*perWriter)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				ev := testEvent(fmt.Sprint("w", w), i)
				if _, err := stores[w%2].Append(context.Background(), "x", events.Any, ev); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	recs := verifyLog(t, url)
	if len(recs) != 4*perWriter {
		t.Fatalf("stored %d events, want %d", len(recs), 4*perWriter)
	}
	for i, r := range recs {
		if r.StreamRevision != uint64(i) {
			t.Fatalf("position order: revision %d at index %d", r.StreamRevision, i)
		}
	}
}

// A batch that zuno_append decides (here because one append's expectation fails) is linked
// in SQL; the store links the same events in Go where it knows the head they followed (or
// they began their stream), so the next append to such a stream is linked without reading
// its head. A stream whose append was refused is forgotten, and read again.
func TestBatchTeachesKnownHeads(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	other, _ := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, testEvent("x", 0))
	mustAppend(t, other, "z", events.NoStream, testEvent("z", 0))
	batch := []*appendRequest{request(t, "x", events.Exact(0), testEvent("x", 1)),
		request(t, "y", events.NoStream, testEvent("y", 0), testEvent("y", 1)),
		request(t, "x", events.Exact(1), testEvent("x", 2)),
		request(t, "z", events.Exact(5), testEvent("z", 1))}
	replies, err := s.commitPostgres(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range replies[:3] {
		if r.err != nil {
			t.Fatalf("batch append %d: %v", i, r.err)
		}
	}
	var wrong *events.WrongExpectedRevisionError
	if !errors.As(replies[3].err, &wrong) || wrong.Actual != 0 {
		t.Fatalf("z at revision 5: %v, want wrong expected revision, actual 0", replies[3].err)
	}
	fell := linkedCount(m, storemetrics.LinkedFellBack)
	mustAppend(t, s, "x", events.Exact(2), testEvent("x", 3))
	mustAppend(t, s, "y", events.Exact(1), testEvent("y", 2))
	mustAppend(t, s, "z", events.Exact(0), testEvent("z", 1))
	linked, read := linkedCount(m, storemetrics.LinkedWritten), linkedCount(m, storemetrics.LinkedAfterRead)
	if linked != 3 || read != 1 || fell != 4 {
		t.Fatalf("linked %d, after a head read %d, fell back %d; want 3 (x's first, x, y), 1 (z), 4 (the batch)", linked, read, fell)
	}
	verifyLog(t, url)
}

// A batch whose streams' heads the store knows is linked as one insert, an append after
// another to the same stream chained to it, each at its positions in batch order.
func TestLinkedBatch(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, testEvent("x", 0))
	batch := []*appendRequest{request(t, "x", events.Exact(0), testEvent("x", 1)),
		request(t, "y", events.NoStream, testEvent("y", 0), testEvent("y", 1)),
		request(t, "x", events.Exact(1), testEvent("x", 2))}
	replies, err := s.commitPostgres(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	wantNext := []uint64{1, 1, 2}
	for i, r := range replies {
		if r.err != nil || r.result.NextRevision != wantNext[i] ||
			(i > 0 && r.result.FirstPosition != replies[i-1].result.LastPosition+1) {
			t.Fatalf("append %d: %+v, want revision %d after the append before it", i, r, wantNext[i])
		}
	}
	if got := linkedCount(m, storemetrics.LinkedWritten); got != 4 {
		t.Fatalf("linked appends: %d, want 4 (the first, the batch's three)", got)
	}
	recs := verifyLog(t, url)
	if len(recs) != 5 {
		t.Fatalf("stored %d events, want 5", len(recs))
	}
}

// One stale head sends the whole batch to zuno_append: nothing of the linked attempt is
// stored, and each append is decided from the stored heads.
func TestLinkedBatchWithStaleHead(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	other, _ := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, testEvent("x", 0))
	mustAppend(t, other, "x", events.Any, testEvent("x", 1))
	batch := []*appendRequest{request(t, "y", events.NoStream, testEvent("y", 0)),
		request(t, "x", events.Any, testEvent("x", 2))}
	replies, err := s.commitPostgres(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if replies[0].err != nil || replies[1].err != nil || replies[0].result.NextRevision != 0 || replies[1].result.NextRevision != 2 {
		t.Fatalf("batch: %+v", replies)
	}
	if got := linkedCount(m, storemetrics.LinkedFellBack); got != 2 {
		t.Fatalf("fell back: %d, want 2 (the batch)", got)
	}
	// zuno_append wrote x after another process's event, whose hash the store never knew: it
	// reads x's head again; y it began, so it knows.
	mustAppend(t, s, "x", events.Exact(2), testEvent("x", 3))
	mustAppend(t, s, "y", events.Exact(0), testEvent("y", 1))
	if linked, read := linkedCount(m, storemetrics.LinkedWritten), linkedCount(m, storemetrics.LinkedAfterRead); linked != 2 || read != 1 {
		t.Fatalf("linked %d, after a head read %d; want 2 (x's first, y), 1 (x)", linked, read)
	}
	if recs := verifyLog(t, url); len(recs) != 6 {
		t.Fatalf("stored %d events, want 6", len(recs))
	}
}

// A batch that writes after another process's append follows a head the store did not know:
// it must not link the batch's events from the head it knew, or its next lone append would
// store a broken chain.
func TestBatchAfterAnotherProcess(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	other, _ := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, testEvent("x", 0))
	mustAppend(t, other, "x", events.Exact(0), testEvent("x", 1))
	batch := []*appendRequest{request(t, "x", events.Any, testEvent("x", 2)),
		request(t, "y", events.NoStream, testEvent("y", 0))}
	if _, err := s.commitPostgres(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "x", events.Exact(2), testEvent("x", 3))
	if got := linkedCount(m, storemetrics.LinkedAfterRead); got != 1 {
		t.Fatalf("linked after a head read: %d, want 1", got)
	}
	verifyLog(t, url)
}

// A linked append waiting on another append of the same revision that then rolls back is
// written after all, in the place it knew.
func TestLinkedAppendAfterRolledBackRival(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, testEvent("x", 0))
	other := sqlx.MustOpen("postgres", url)
	defer other.Close()
	tx := other.MustBegin()
	tx.MustExec(`INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata, xid)
		VALUES (nextval('event_position'), gen_random_uuid(), 'x', 1, 'test.happened.1', '{}', '{"commandId":"rival"}', pg_current_xact_id())`)
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(context.Background(), "x", events.Exact(0), testEvent("x", 1))
		done <- err
	}()
	waitForLockWait(t, other)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := linkedCount(m, storemetrics.LinkedWritten); got != 2 {
		t.Fatalf("linked appends: %d, want 2", got)
	}
	if recs := verifyLog(t, url); len(recs) != 2 || recs[1].Metadata.CommandID == "rival" {
		t.Fatalf("stored %+v", recs)
	}
}

// A stream whose head was written before the hash chain existed (no hash) continues from an
// empty link, as zuno_append continues it, and zuno verify accepts it.
func TestLinkedAppendAfterEventOlderThanTheChain(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	var genesis uint64
	if err := db.Get(&genesis, `INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
		VALUES (nextval('event_position'), gen_random_uuid(), 'x', 0, 'test.happened.1', '{}', '{"commandId":"old"}')
		RETURNING position`); err != nil {
		t.Fatal(err)
	}
	db.MustExec(`UPDATE event_chain_genesis SET position = $1`, genesis)
	mustAppend(t, s, "x", events.Exact(0), testEvent("x", 1))
	if got := linkedCount(m, storemetrics.LinkedAfterRead); got != 1 {
		t.Fatalf("linked appends after a head read: %d, want 1", got)
	}
	recs, err := s.ReadAll(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkChain(t, recs, genesis)
	if len(recs) != 2 {
		t.Fatalf("stored %d events, want 2", len(recs))
	}
	sealed, err := events.Seal("x", "", 1, []events.Event{testEvent("x", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if recs[1].Metadata.Hash != sealed[0].Metadata.Hash {
		t.Fatalf("hash %s, want the link from an empty predecessor %s", recs[1].Metadata.Hash, sealed[0].Metadata.Hash)
	}
}

// A linked append in progress holds readers of the whole log back, as zuno_append does: it
// takes the append lock before its transaction id.
func TestLinkedAppendHoldsTheHorizon(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, _ := openLinked(t, url)
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	tx := db.MustBegin()
	defer tx.Rollback()
	ev := testEvent("held", 0)
	tx.MustExec(`SELECT zuno_append_linked('{held}', '{0}', $1, '{test.happened.1}', '{"{}"}', '{"{\"commandId\":\"held\"}"}')`,
		pq.Array([]string{ev.ID}))
	later := appendLater(t, s)
	if got := readStreams(t, s); len(got) != 0 {
		t.Fatalf("read %v while an older linked append is open", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := readStreams(t, s), append([]string{"held"}, later...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the commit: %v, want %v", got, want)
	}
}

// zuno_append_linked refuses what would break the order proof or store a partial event.
func TestLinkedAppendRefusesBadCalls(t *testing.T) {
	url := pgtest.NewDatabase(t)
	openLinked(t, url) // migrates
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	id := pq.Array([]string{events.DeriveID("x", 0)})
	for _, tc := range []struct {
		name, code string
		call       func() error
	}{
		{"after another write in its transaction", "25000", func() error {
			tx := db.MustBegin()
			defer tx.Rollback()
			tx.MustExec(`CREATE TABLE before_append (x int); INSERT INTO before_append VALUES (1)`)
			_, err := tx.Exec(`SELECT zuno_append_linked('{x}', '{0}', $1, '{t}', '{"{}"}', '{"{}"}')`, id)
			return err
		}},
		{"fewer types than ids", "22023", func() error {
			_, err := db.Exec(`SELECT zuno_append_linked('{x}', '{0}', $1, '{}', '{"{}"}', '{"{}"}')`, id)
			return err
		}},
		{"fewer revisions than ids", "22023", func() error {
			_, err := db.Exec(`SELECT zuno_append_linked('{x}', '{}', $1, '{t}', '{"{}"}', '{"{}"}')`, id)
			return err
		}},
		{"no events", "22023", func() error {
			_, err := db.Exec(`SELECT zuno_append_linked('{}', '{}', '{}', '{}', '{}', '{}')`)
			return err
		}},
		{"data that is not JSON", "22P02", func() error {
			_, err := db.Exec(`SELECT zuno_append_linked('{x}', '{0}', $1, '{t}', '{"{"}', '{"{}"}')`, id)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pqErr *pq.Error
			if err := tc.call(); !errors.As(err, &pqErr) || string(pqErr.Code) != tc.code {
				t.Fatalf("got %v, want SQLSTATE %s", err, tc.code)
			}
		})
	}
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM event_log`); err != nil || n != 0 {
		t.Fatalf("%d events stored (%v), want none", n, err)
	}
}

// A process that did not begin its streams (restarted, or another process wrote them last)
// learns their heads from batches of several appends too: the first batch reads them in one
// query, the next ones are linked with what it learnt.
func TestBatchesLearnStreamsBegunElsewhere(t *testing.T) {
	url := pgtest.NewDatabase(t)
	first, _ := openLinked(t, url)
	mustAppend(t, first, "x", events.NoStream, testEvent("x", 0))
	mustAppend(t, first, "y", events.NoStream, testEvent("y", 0))
	s, m := openLinked(t, url) // a restarted process
	for i := range 5 {
		batch := []*appendRequest{request(t, "x", events.Any, testEvent(fmt.Sprint("bx", i), 0)),
			request(t, "y", events.Exact(uint64(i)), testEvent(fmt.Sprint("by", i), 0))}
		replies, err := s.commitPostgres(context.Background(), batch)
		if err != nil || replies[0].err != nil || replies[1].err != nil || replies[1].result.NextRevision != uint64(i+1) {
			t.Fatalf("batch %d: %v %+v", i, err, replies)
		}
	}
	read, linked := linkedCount(m, storemetrics.LinkedAfterRead), linkedCount(m, storemetrics.LinkedWritten)
	if fell := linkedCount(m, storemetrics.LinkedFellBack); read != 2 || linked != 8 || fell != 0 {
		t.Fatalf("after a head read %d, linked %d, fell back %d; want 2 (the first batch), 8, 0", read, linked, fell)
	}
	verifyLog(t, url)
}

// A linked batch and another transaction that wait on each other's revisions deadlock; the
// one Postgres aborts is rolled back whole, and the batch, whether it won or ran again through
// zuno_append, is stored once with its chain intact.
func TestLinkedBatchDeadlock(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	mustAppend(t, s, "a", events.NoStream, testEvent("a", 0))
	mustAppend(t, s, "b", events.NoStream, testEvent("b", 0))
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	tx := db.MustBegin()
	defer tx.Rollback()
	// The rival writes revision 1 of a stream, linked to its revision 0 as the store would.
	insert := func(stream string) error {
		head, err := events.Seal(stream, "", 0, []events.Event{testEvent(stream, 0)})
		if err != nil {
			return err
		}
		ev := testEvent("rival-"+stream, 0)
		sealed, err := events.Seal(stream, head[0].Metadata.Hash, 1, []events.Event{ev})
		if err != nil {
			return err
		}
		md, _ := json.Marshal(sealed[0].Metadata)
		_, err = tx.Exec(`INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata, xid)
			VALUES (nextval('event_position'), $1, $2, 1, $3, $4, $5, pg_current_xact_id())`, ev.ID, stream, ev.Type, string(ev.Data), string(md))
		return err
	}
	if err := insert("a"); err != nil { // the rival holds a's revision 1
		t.Fatal(err)
	}
	type result struct {
		replies []appendReply
		err     error
	}
	done := make(chan result, 1)
	go func() {
		batch := []*appendRequest{request(t, "b", events.Any, testEvent("b", 1)), request(t, "a", events.Any, testEvent("a", 1))}
		replies, err := s.commitPostgres(context.Background(), batch)
		done <- result{replies, err}
	}()
	waitForLockWait(t, db) // the batch holds b's revision 1 and waits for a's
	rivalErr := insert("b")
	var pqErr *pq.Error
	if rivalErr != nil {
		if !errors.As(rivalErr, &pqErr) || pqErr.Code != "40P01" {
			t.Fatalf("rival: %v, want deadlock_detected or success", rivalErr)
		}
		tx.Rollback()
	} else if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.replies[0].err != nil || r.replies[1].err != nil {
		t.Fatalf("batch: %v %+v", r.err, r.replies)
	}
	if rivalErr == nil && linkedCount(m, storemetrics.LinkedFellBack) != 2 {
		t.Fatalf("the rival won, yet the batch did not fall back to zuno_append")
	}
	recs := verifyLog(t, url)
	if want := 4 + map[bool]int{true: 0, false: 2}[rivalErr != nil]; len(recs) != want {
		t.Fatalf("stored %d events, want %d", len(recs), want)
	}
}
