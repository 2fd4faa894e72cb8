package sqlstore

// Attacks on known heads (docs/storage.md, "Known heads") from a review of the linked append:
// batches that retry their own appends or stored ones in part, callers gone mid-batch, an
// older build writing through zuno_append between linked appends (some events unhashed), the
// store's knowledge wiped, two processes' batches in opposite stream order; each checks the
// stored log, the chains and the replies.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/events"
)

func atkEvent(seed string, i int) events.Event {
	return events.Event{ID: events.DeriveID(seed, i), Type: "test.happened.1", Data: []byte(fmt.Sprintf(`{"s":%q,"i":%d}`, seed, i)),
		Metadata: events.Metadata{CommandID: seed, Actor: "user"}}
}

// checkStreams: revisions contiguous from 0, positions increasing with revision, each hashed
// event links from its predecessor's stored hash ("" if unhashed) with its own body digest.
func checkStreams(t *testing.T, recs []events.Recorded) map[string][]events.Recorded {
	t.Helper()
	by := map[string][]events.Recorded{}
	ids := map[string]bool{}
	for i, r := range recs {
		if i > 0 && r.Position <= recs[i-1].Position {
			t.Fatalf("positions not increasing: %d then %d", recs[i-1].Position, r.Position)
		}
		if ids[r.ID] {
			t.Fatalf("event %s stored twice", r.ID)
		}
		ids[r.ID] = true
		by[r.Stream] = append(by[r.Stream], r)
	}
	for st, rs := range by {
		for i, r := range rs {
			if r.StreamRevision != uint64(i) {
				t.Fatalf("stream %s: revision %d at index %d (position %d)", st, r.StreamRevision, i, r.Position)
			}
			if r.Metadata.Hash == "" {
				continue
			}
			prev := ""
			if i > 0 {
				prev = rs[i-1].Metadata.Hash
			}
			digest, err := events.BodyDigest(st, r.Event)
			if err != nil {
				t.Fatal(err)
			}
			if want := events.Link(prev, r.StreamRevision, digest); want != r.Metadata.Hash {
				t.Fatalf("stream %s revision %d: hash %s, want %s", st, r.StreamRevision, r.Metadata.Hash, want)
			}
		}
	}
	return by
}

func readAllFresh(t *testing.T, url string) []events.Recorded {
	t.Helper()
	s, _ := openLinked(t, url)
	recs, err := s.ReadAll(context.Background(), 0, 1000000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// A linked batch where the second append is a retry of the first, and variants.
func TestAttackBatchSelfRetry(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, _ := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, atkEvent("x0", 0))
	for _, tc := range []struct {
		name       string
		e1, e2     events.ExpectedRevision
		sameStream bool
	}{
		{"any any", events.Any, events.Any, true},
		{"exact exact", events.Exact(0), events.Exact(0), true},
		{"exists any", events.StreamExists, events.Any, true},
		{"other stream", events.Any, events.NoStream, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := readHeadNow(t, s, "x")
			e1 := tc.e1
			if _, ok := e1.Revision(); ok {
				e1 = events.Exact(uint64(head))
			}
			e2 := tc.e2
			if _, ok := e2.Revision(); ok {
				e2 = events.Exact(uint64(head))
			}
			evs := []events.Event{atkEvent("r"+tc.name, 0), atkEvent("r"+tc.name, 1)}
			st2 := "x"
			if !tc.sameStream {
				st2 = "y-" + tc.name
			}
			batch := []*appendRequest{request(t, "x", e1, evs...), request(t, st2, e2, evs...)}
			replies, err := s.commitPostgres(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			if replies[0].err != nil {
				t.Fatalf("first: %v", replies[0].err)
			}
			if tc.sameStream {
				if replies[1].err != nil || replies[1].result != replies[0].result {
					t.Fatalf("second (retry): %+v %v, want %+v", replies[1].result, replies[1].err, replies[0].result)
				}
			} else {
				var conflict *events.EventIDConflictError
				if !errors.As(replies[1].err, &conflict) {
					t.Fatalf("second in other stream: %+v %v", replies[1].result, replies[1].err)
				}
			}
			// and the store's knowledge is still right
			mustAppend(t, s, "x", events.Any, atkEvent("after"+tc.name, 0))
			checkStreams(t, readAllFresh(t, url))
		})
	}
	verifyLog(t, url)
}

func readHeadNow(t *testing.T, s *Store, stream string) int64 {
	t.Helper()
	var rev int64 = -1
	if err := s.reader.Get(&rev, `SELECT COALESCE(MAX(stream_revision), -1) FROM event_log WHERE stream = $1`, stream); err != nil {
		t.Fatal(err)
	}
	return rev
}

// A batch mixing a partly stored append, a full retry, and new appends on known streams.
func TestAttackPartlyStoredInBatch(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, _ := openLinked(t, url)
	first := mustAppend(t, s, "x", events.NoStream, atkEvent("a", 0), atkEvent("a", 1))
	mustAppend(t, s, "y", events.NoStream, atkEvent("b", 0))
	batch := []*appendRequest{
		request(t, "y", events.Exact(0), atkEvent("c", 0)),
		request(t, "x", events.Any, atkEvent("a", 1), atkEvent("d", 0)),      // partly stored
		request(t, "x", events.Exact(1), atkEvent("a", 0), atkEvent("a", 1)), // retry
		request(t, "x", events.Exact(1), atkEvent("e", 0)),                   // new
	}
	replies, err := s.commitPostgres(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var conflict *events.EventIDConflictError
	if replies[0].err != nil || replies[0].result.NextRevision != 1 {
		t.Fatalf("y: %+v", replies[0])
	}
	if !errors.As(replies[1].err, &conflict) {
		t.Fatalf("partial: %+v", replies[1])
	}
	if replies[2].err != nil || replies[2].result != first {
		t.Fatalf("retry: %+v want %+v", replies[2], first)
	}
	if replies[3].err != nil || replies[3].result.NextRevision != 2 {
		t.Fatalf("new: %+v", replies[3])
	}
	mustAppend(t, s, "x", events.Exact(2), atkEvent("f", 0))
	mustAppend(t, s, "y", events.Exact(1), atkEvent("g", 0))
	recs := verifyLog(t, url)
	checkStreams(t, recs)
	if len(recs) != 7 {
		t.Fatalf("%d events", len(recs))
	}
}

// A caller's context cancelled before the batch: its append is refused, nothing stored, the
// others written, knowledge right afterwards.
func TestAttackCancelledInBatch(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, _ := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, atkEvent("a", 0))
	mustAppend(t, s, "y", events.NoStream, atkEvent("b", 0))
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	r := request(t, "x", events.Exact(0), atkEvent("c", 0))
	r.ctx = gone
	batch := []*appendRequest{request(t, "y", events.Exact(0), atkEvent("d", 0)), r,
		request(t, "x", events.Exact(0), atkEvent("e", 0))}
	replies, err := s.commitPostgres(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if replies[0].err != nil || !errors.Is(replies[1].err, context.Canceled) || replies[2].err != nil || replies[2].result.NextRevision != 1 {
		t.Fatalf("replies %+v", replies)
	}
	mustAppend(t, s, "x", events.Exact(1), atkEvent("f", 0))
	mustAppend(t, s, "y", events.Exact(1), atkEvent("g", 0))
	recs := verifyLog(t, url)
	checkStreams(t, recs)
	if len(recs) != 6 {
		t.Fatalf("%d events", len(recs))
	}
	// Cancelled while waiting on a rival: the append commits and is answered ok.
	held := openHeld(t, url, "x")
	_ = held
	ctx, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var res events.AppendResult
	go func() {
		var err error
		res, err = s.Append(ctx, "x", events.Any, atkEvent("h", 0))
		done <- err
	}()
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	waitForLockWait(t, db)
	cancel2()
	time.Sleep(50 * time.Millisecond)
	if err := held.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("append whose caller left while it waited: %v", err)
	}
	recs = verifyLog(t, url)
	checkStreams(t, recs)
	if last := recs[len(recs)-1]; last.ID != atkEvent("h", 0).ID || last.Position != res.FirstPosition || last.StreamRevision != res.NextRevision {
		t.Fatalf("stored %+v, reply %+v", last, res)
	}
}

// zuno_append called directly (an older build, with a digest; and one without a digest,
// so unhashed) between two linked appends.
func TestAttackOlderPathBetweenLinked(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	db := sqlx.MustOpen("postgres", url)
	defer db.Close()
	mustAppend(t, s, "x", events.NoStream, atkEvent("a", 0))
	old := func(stream string, ev events.Event, withDigest bool) {
		prep, err := events.PrepareSeal(stream, []events.Event{ev})
		if err != nil {
			t.Fatal(err)
		}
		dig := prep[0].Body
		if !withDigest {
			dig = ""
		}
		var outcome string
		if err := db.Get(&outcome, `SELECT outcome FROM zuno_append($1, '{any}', '{0}', '{1}', $2, $3, $4, $5, $6, true)`,
			pq.Array([]string{stream}), pq.Array([]string{ev.ID}), pq.Array([]string{ev.Type}), pq.Array([]string{string(ev.Data)}),
			pq.Array([]string{string(prep[0].Metadata)}), pq.Array([]string{dig})); err != nil || outcome != "ok" {
			t.Fatalf("old append: %s %v", outcome, err)
		}
	}
	old("x", atkEvent("b", 0), true)
	if res := mustAppend(t, s, "x", events.Any, atkEvent("c", 0)); res.NextRevision != 2 {
		t.Fatalf("%+v", res)
	}
	mustAppend(t, s, "x", events.Exact(2), atkEvent("c2", 0))
	old("x", atkEvent("d", 0), false) // unhashed
	if res := mustAppend(t, s, "x", events.Any, atkEvent("e", 0)); res.NextRevision != 5 {
		t.Fatalf("%+v", res)
	}
	// now the store forgot (learnHead from != known); next lone append reads head
	if res := mustAppend(t, s, "x", events.Exact(5), atkEvent("f", 0)); res.NextRevision != 6 {
		t.Fatalf("%+v", res)
	}
	// a batch after an unhashed head: through zuno_append then linked
	old("x", atkEvent("g", 0), false)
	batch := []*appendRequest{request(t, "x", events.Any, atkEvent("h", 0)), request(t, "x", events.Any, atkEvent("i", 0))}
	if _, err := s.commitPostgres(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "x", events.Exact(9), atkEvent("j", 0))
	recs := readAllFresh(t, url)
	checkStreams(t, recs)
	if len(recs) != 11 {
		t.Fatalf("%d", len(recs))
	}
	t.Logf("linked %d read %d fell %d", linkedCount(m, "linked"), linkedCount(m, "read_head"), linkedCount(m, "fell_back"))
}

// The known-heads map clears at 4096 entries, in the middle of a linked batch's update and of
// learnHead: knowledge must stay right.
func TestAttackCacheClear(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, _ := openLinked(t, url)
	other, _ := openLinked(t, url)
	for i := range 6 {
		mustAppend(t, s, fmt.Sprint("x", i), events.NoStream, atkEvent(fmt.Sprint("x", i), 0))
	}
	for round := range 3 {
		// fill to just below the limit with junk (heads of streams that do not exist)
		s.heads.mu.Lock()
		for i := 0; len(s.heads.heads) < maxKnownStreams-2; i++ {
			s.heads.heads[fmt.Sprint("junk", round, "-", i)] = streamHead{revision: 1 << 40, hash: "bogus"}
		}
		s.heads.mu.Unlock()
		// another process moves x1
		mustAppend(t, other, "x1", events.Any, atkEvent(fmt.Sprint("o", round), 0))
		batch := []*appendRequest{}
		for i := range 6 {
			batch = append(batch, request(t, fmt.Sprint("x", i), events.Any, atkEvent(fmt.Sprint("r", round, i), 0)))
		}
		replies, err := s.commitPostgres(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range replies {
			if r.err != nil {
				t.Fatalf("round %d append %d: %v", round, i, r.err)
			}
		}
		for i := range 6 {
			mustAppend(t, s, fmt.Sprint("x", i), events.Any, atkEvent(fmt.Sprint("q", round, i), 0))
		}
	}
	recs := verifyLog(t, url)
	checkStreams(t, recs)
}

// Two processes write linked batches to two streams in opposite orders, both knowing the
// same heads: they deadlock in the insert; neither may hang or store wrongly.
func TestAttackOppositeOrderBatches(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, _ := openLinked(t, url)
	b, _ := openLinked(t, url)
	for round := range 5 {
		if round == 0 {
			mustAppend(t, a, "p", events.NoStream, atkEvent("p", 0))
			mustAppend(t, a, "q", events.NoStream, atkEvent("q", 0))
		}
		// make both know the heads
		hp, hq := readHeadNow(t, a, "p"), readHeadNow(t, a, "q")
		for _, s := range []*Store{a, b} {
			h1, _ := storedHeadOf(s, "p")
			h2, _ := storedHeadOf(s, "q")
			s.heads.set("p", h1)
			s.heads.set("q", h2)
		}
		var wg sync.WaitGroup
		var ra, rb []appendReply
		var ea, eb error
		wg.Add(2)
		go func() {
			defer wg.Done()
			ra, ea = a.commitPostgres(context.Background(), []*appendRequest{
				request(t, "p", events.Exact(uint64(hp)), atkEvent(fmt.Sprint("ap", round), 0)),
				request(t, "q", events.Any, atkEvent(fmt.Sprint("aq", round), 0))})
		}()
		go func() {
			defer wg.Done()
			rb, eb = b.commitPostgres(context.Background(), []*appendRequest{
				request(t, "q", events.Exact(uint64(hq)), atkEvent(fmt.Sprint("bq", round), 0)),
				request(t, "p", events.Any, atkEvent(fmt.Sprint("bp", round), 0))})
		}()
		wg.Wait()
		if ea != nil || eb != nil {
			t.Fatalf("round %d: %v %v", round, ea, eb)
		}
		t.Logf("round %d: a %v %v, b %v %v", round, ra[0].err, ra[1].err, rb[0].err, rb[1].err)
		mustAppend(t, a, "p", events.Any, atkEvent(fmt.Sprint("ap2", round), 0))
		mustAppend(t, b, "q", events.Any, atkEvent(fmt.Sprint("bq2", round), 0))
	}
	checkStreams(t, verifyLog(t, url))
}

// Replies of a multi-append linked batch: positions and revisions, compared with the rows.
func TestAttackLinkedBatchReplies(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s, m := openLinked(t, url)
	mustAppend(t, s, "x", events.NoStream, atkEvent("a", 0))
	mustAppend(t, s, "y", events.NoStream, atkEvent("b", 0), atkEvent("b", 1))
	batch := []*appendRequest{
		request(t, "y", events.Exact(1), atkEvent("c", 0), atkEvent("c", 1), atkEvent("c", 2)),
		request(t, "x", events.StreamExists, atkEvent("d", 0)),
		request(t, "z", events.NoStream, atkEvent("e", 0), atkEvent("e", 1)),
		request(t, "y", events.Exact(4), atkEvent("f", 0)),
		request(t, "x", events.Any, atkEvent("g", 0), atkEvent("g", 1)),
		request(t, "z", events.StreamExists, atkEvent("h", 0)),
	}
	before := linkedCount(m, "linked")
	replies, err := s.commitPostgres(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if linkedCount(m, "linked")-before != len(batch) {
		t.Fatalf("batch not linked")
	}
	recs := verifyLog(t, url)
	checkStreams(t, recs)
	byID := map[string]events.Recorded{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	for i, r := range batch {
		rep := replies[i]
		if rep.err != nil {
			t.Fatal(rep.err)
		}
		for k, ev := range r.evs {
			st := byID[ev.ID]
			if st.Position != rep.result.FirstPosition+uint64(k) || st.StreamRevision != rep.result.NextRevision-uint64(len(r.evs)-1-k) {
				t.Fatalf("append %d event %d: stored pos %d rev %d, reply %+v", i, k, st.Position, st.StreamRevision, rep.result)
			}
		}
		// a retry answers the same
		res, err := s.Append(context.Background(), r.stream, events.Any, r.evs...)
		if err != nil || res != rep.result {
			t.Fatalf("retry of %d: %+v %v want %+v", i, res, err, rep.result)
		}
	}
}

// Many streams, two processes, lone appends with Exact from what each caller last saw: the
// most frequent fall-back route, checked for the chain and positions.
func TestAttackManyStreamsExact(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, _ := openLinked(t, url)
	b, _ := openLinked(t, url)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []*Store{a, b}[w%2]
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			for op := range 80 {
				st := fmt.Sprint("m", rng.IntN(3))
				h := readHeadNow(t, s, st)
				var exp events.ExpectedRevision
				if h < 0 {
					exp = events.NoStream
				} else {
					exp = events.Exact(uint64(h))
				}
				_, err := s.Append(context.Background(), st, exp, atkEvent(fmt.Sprint("m", w, "-", op), 0), atkEvent(fmt.Sprint("m", w, "-", op), 1))
				var wrong *events.WrongExpectedRevisionError
				if err != nil && !errors.As(err, &wrong) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
	recs := verifyLog(t, url)
	checkStreams(t, recs)
	sort.Slice(recs, func(i, j int) bool { return recs[i].Position < recs[j].Position })
}

// storedHeadOf reads stream's stored head as the store does for a stream it does not know.
func storedHeadOf(s *Store, stream string) (streamHead, error) {
	ctx := context.Background()
	s.heads.forget(stream)
	heads, _, err := s.headsOf(ctx, []*appendRequest{{ctx: ctx, stream: stream, expected: events.Any}})
	return heads[stream], err
}

// ackd is an acknowledged append: where it says its events are.
type ackd struct {
	stream string
	evs    []events.Event
	res    events.AppendResult
	mine   bool // appended through a store (not by the older build)
}

// chaos is what a chaos run saw: the appends acknowledged, the events refused (never to be
// stored), and what went wrong.
type chaos struct {
	mu       sync.Mutex
	acked    []ackd
	refused  [][]events.Event
	failures []string
}

func (c *chaos) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

// record classifies one append's answer.
func (c *chaos) record(a ackd, exp events.ExpectedRevision, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var wrong *events.WrongExpectedRevisionError
	switch {
	case err == nil:
		c.acked = append(c.acked, a)
	case errors.As(err, &wrong):
		if exp.Allows(wrong.Actual) {
			c.failures = append(c.failures, fmt.Sprintf("wrong revision whose actual %d allows %v", wrong.Actual, exp))
		}
		c.refused = append(c.refused, a.evs)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		c.refused = append(c.refused, a.evs)
	default:
		c.failures = append(c.failures, fmt.Sprintf("append: %v", err))
	}
}

// pastAppend is one of the stores' acknowledged appends, at random, if there is one.
func (c *chaos) pastAppend(rng *rand.Rand) (ackd, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range 3 {
		if len(c.acked) == 0 {
			return ackd{}, false
		}
		if a := c.acked[rng.IntN(len(c.acked))]; a.mine {
			return a, true
		}
	}
	return ackd{}, false
}

// olderBuild appends through zuno_append directly, as a process of an older build does, a
// third of its events without a hash, until stop closes.
func (c *chaos) olderBuild(db *sqlx.DB, streams []string, rng *rand.Rand, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(rng.IntN(3000)) * time.Microsecond):
		}
		st := streams[rng.IntN(len(streams))]
		ev := atkEvent(fmt.Sprint("old", i), 0)
		prep, _ := events.PrepareSeal(st, []events.Event{ev})
		digest := prep[0].Body
		if rng.IntN(3) == 0 {
			digest = ""
		}
		var outcome string
		var next, first, last sql.NullInt64
		err := db.QueryRow(`SELECT outcome, next_revision, first_position, last_position
			FROM zuno_append($1, '{any}', '{0}', '{1}', $2, $3, $4, $5, $6, true)`,
			pq.Array([]string{st}), pq.Array([]string{ev.ID}), pq.Array([]string{ev.Type}), pq.Array([]string{string(ev.Data)}),
			pq.Array([]string{string(prep[0].Metadata)}), pq.Array([]string{digest})).Scan(&outcome, &next, &first, &last)
		if err == nil && outcome != "ok" {
			err = fmt.Errorf("outcome %s", outcome)
		}
		if err != nil && !retriable(err) {
			c.fail("older build: %v", err)
		}
		c.mu.Lock()
		if err == nil {
			c.acked = append(c.acked, ackd{stream: st, evs: []events.Event{ev}, res: events.AppendResult{
				NextRevision: uint64(next.Int64), FirstPosition: uint64(first.Int64), LastPosition: uint64(last.Int64)}})
		} else {
			c.refused = append(c.refused, []events.Event{ev}) // a collision: rolled back
		}
		c.mu.Unlock()
	}
}

// wipeKnownHeads makes one store or the other forget every head, now and then, until stop.
func wipeKnownHeads(stores []*Store, rng *rand.Rand, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(rng.IntN(20)) * time.Millisecond):
		}
		s := stores[rng.IntN(len(stores))]
		s.heads.mu.Lock()
		s.heads.heads = nil
		s.heads.mu.Unlock()
	}
}

// writer appends ops times through s: one to three new events with a random expectation
// (exact at the stored head), a fifth of them by callers who give up within 2 ms; or, one in
// six, a retry of an acknowledged append, whole (answered as the original) or with one more
// event (an id conflict).
func (c *chaos) writer(db *sqlx.DB, s *Store, streams []string, rng *rand.Rand, name string, ops int) {
	for op := range ops {
		if past, ok := c.pastAppend(rng); ok && rng.IntN(6) == 0 {
			c.retry(s, past, rng, fmt.Sprint(name, "-", op))
			continue
		}
		stream := streams[rng.IntN(len(streams))]
		exp := []events.ExpectedRevision{events.Any, events.NoStream, events.StreamExists}[rng.IntN(3)]
		if rng.IntN(4) == 0 {
			var head int64
			if err := db.Get(&head, `SELECT COALESCE(MAX(stream_revision), 0) FROM event_log WHERE stream = $1`, stream); err != nil {
				c.fail("read head: %v", err)
				return
			}
			exp = events.Exact(uint64(head))
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if rng.IntN(5) == 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(2000))*time.Microsecond)
		}
		evs := make([]events.Event, 1+rng.IntN(3))
		for k := range evs {
			evs[k] = atkEvent(fmt.Sprint(name, "-", op), k)
		}
		res, err := s.Append(ctx, stream, exp, evs...)
		cancel()
		c.record(ackd{stream: stream, evs: evs, res: res, mine: true}, exp, err)
	}
}

func (c *chaos) retry(s *Store, past ackd, rng *rand.Rand, name string) {
	evs := past.evs
	partial := rng.IntN(4) == 0
	if partial {
		evs = append(append([]events.Event{}, past.evs...), atkEvent(name, 0))
	}
	res, err := s.Append(context.Background(), past.stream, events.Any, evs...)
	var conflict *events.EventIDConflictError
	switch {
	case partial && !errors.As(err, &conflict):
		c.fail("partial retry of %+v: %+v %v, want an id conflict", past.res, res, err)
	case !partial && (err != nil || res != past.res):
		c.fail("retry of %+v: %+v %v", past.res, res, err)
	}
}

// check compares the stored log with what the run saw: every acknowledged event where its
// reply says, no refused event, nothing else, each chain intact.
func (c *chaos) check(t *testing.T, recs []events.Recorded) {
	t.Helper()
	for _, f := range c.failures {
		t.Error(f)
	}
	checkStreams(t, recs)
	byID := map[string]events.Recorded{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	n := 0
	for _, a := range c.acked {
		n += len(a.evs)
		first := a.res.NextRevision + 1 - uint64(len(a.evs))
		for i, ev := range a.evs {
			r, ok := byID[ev.ID]
			if !ok || r.Stream != a.stream || r.StreamRevision != first+uint64(i) || r.Position != a.res.FirstPosition+uint64(i) {
				t.Fatalf("acknowledged %+v, event %d: stored %v %+v", a.res, i, ok, r)
			}
		}
	}
	for _, evs := range c.refused {
		for _, ev := range evs {
			if _, ok := byID[ev.ID]; ok {
				t.Fatalf("refused event %s is stored", ev.ID)
			}
		}
	}
	if n != len(recs) {
		t.Fatalf("stored %d events, acknowledged %d", len(recs), n)
	}
}

// subscribeAll subscribes through s from the start; the function it returns waits until n
// events came (or 10 s passed), ends the subscription and returns what came.
func subscribeAll(t *testing.T, s *Store) func(n int) []events.Recorded {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []events.Recorded
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(ctx, 0, func(r events.Recorded) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, r)
			return nil
		})
	}()
	return func(n int) []events.Recorded {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			got := len(seen)
			mu.Unlock()
			if got >= n {
				break
			}
		}
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// Two processes' stores race on five streams: 16 writers with mixed expectations, appends of
// one to three events, callers who give up, retries whole and in part; beside them an older
// build appending through zuno_append (some events unhashed), the stores' knowledge wiped at
// random, and a third store subscribed. The log must hold exactly the acknowledged appends,
// where their replies say, with every chain intact, and the subscriber must have seen exactly
// the log, in order.
func TestAttackChaos(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			url := pgtest.NewDatabase(t)
			a, _ := openLinked(t, url)
			b, _ := openLinked(t, url)
			reader, _ := openLinked(t, url)
			stores, streams := []*Store{a, b}, []string{"s0", "s1", "s2", "s3", "s4"}
			db := sqlx.MustOpen("postgres", url)
			defer db.Close()
			seen := subscribeAll(t, reader)
			c := &chaos{}
			stop := make(chan struct{})
			var background, writers sync.WaitGroup
			background.Go(func() { c.olderBuild(db, streams, rand.New(rand.NewPCG(seed, 1)), stop) })
			background.Go(func() { wipeKnownHeads(stores, rand.New(rand.NewPCG(seed, 2)), stop) })
			for w := range 16 {
				writers.Go(func() {
					c.writer(db, stores[w%2], streams, rand.New(rand.NewPCG(seed, uint64(w)+10)), fmt.Sprint("w", w), 50)
				})
			}
			writers.Wait()
			close(stop)
			background.Wait()
			recs := readAllFresh(t, url)
			c.check(t, recs)
			got := seen(len(recs))
			if len(got) != len(recs) {
				t.Fatalf("the subscriber saw %d events, the log has %d", len(got), len(recs))
			}
			for i := range recs {
				if got[i].ID != recs[i].ID || got[i].Position != recs[i].Position {
					t.Fatalf("subscriber's event %d: %s at %d; the log's: %s at %d", i, got[i].ID, got[i].Position, recs[i].ID, recs[i].Position)
				}
			}
		})
	}
}
