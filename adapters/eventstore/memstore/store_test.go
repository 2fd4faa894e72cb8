package memstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/adapters/eventstore/storetest"
	"github.com/zuno-run/zuno/events"
)

var _ storetest.Store = (*Store)(nil)

// perTest returns an opener that opens a Store over the same Log every time it is called
// within one test, and over a new Log for each test: the suite's reopen.
func perTest() storetest.Opener {
	var mu sync.Mutex
	logs := map[*testing.T]*Log{}
	return func(t *testing.T) storetest.Store {
		mu.Lock()
		log, ok := logs[t]
		if !ok {
			log = NewLog()
			logs[t] = log
		}
		mu.Unlock()
		s := Open(log)
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, perTest())
}

func event(cmd string, i int, data string) events.Event {
	return events.Event{ID: events.DeriveID(cmd, i), Type: "test.happened.1", Data: []byte(data),
		Metadata: events.Metadata{CommandID: cmd, Actor: "host", Time: time.Now()}}
}

// TestReturnedEventsAreCopies changes every byte slice that crosses the store's boundary, in
// both directions, and checks that the stored events did not change.
func TestReturnedEventsAreCopies(t *testing.T) {
	ctx := context.Background()
	s := New()
	defer s.Close()
	in := event("c", 0, `{"v":1}`)
	if _, err := s.Append(ctx, "s", events.NoStream, in); err != nil {
		t.Fatal(err)
	}
	in.Data[2] = 'X'

	scribble := func(what string, recs []events.Recorded, err error) {
		t.Helper()
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %d events, err %v", what, len(recs), err)
		}
		recs[0].Data[2] = 'Y'
	}
	recs, err := s.ReadStream(ctx, "s", 0, 10)
	scribble("ReadStream", recs, err)
	recs, err = s.ReadStreamBackward(ctx, "s", math.MaxUint64, 10)
	scribble("ReadStreamBackward", recs, err)
	recs, err = s.ReadAll(ctx, 0, 10)
	scribble("ReadAll", recs, err)
	stop := errors.New("stop")
	err = s.Subscribe(ctx, 0, func(r events.Recorded) error {
		r.Data[2] = 'Z'
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Subscribe: %v", err)
	}

	recs, err = s.ReadAll(ctx, 0, 10)
	if err != nil || string(recs[0].Data) != `{"v":1}` {
		t.Fatalf("stored data is now %s (err %v), want {\"v\":1}", recs[0].Data, err)
	}
}

// TestCloseEndsOnlyThisHandle: a closed Store refuses calls and ends its subscriptions, while
// another Store over the same Log keeps working.
func TestCloseEndsOnlyThisHandle(t *testing.T) {
	ctx := context.Background()
	log := NewLog()
	s, other := Open(log), Open(log)
	defer other.Close()
	done := make(chan error, 1)
	go func() { done <- s.Subscribe(ctx, 0, func(events.Recorded) error { return nil }) }()
	if _, err := s.Append(ctx, "s", events.NoStream, event("c", 0, `{}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Subscribe returned %v after Close, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Subscribe did not return after Close")
	}
	if _, err := s.Append(ctx, "s", events.Any, event("c", 1, `{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := s.ReadAll(ctx, 0, 10); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadAll after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := other.Append(ctx, "s", events.Exact(0), event("c", 1, `{}`)); err != nil {
		t.Fatalf("the other store: %v", err)
	}
}

// TestSubscribeCatchUpOverSeveralBatches delivers a backlog larger than one read batch,
// exactly once and in order.
func TestSubscribeCatchUpOverSeveralBatches(t *testing.T) {
	ctx := context.Background()
	s := New()
	defer s.Close()
	const n = 2*subscribeBatch + 7
	for i := range n {
		if _, err := s.Append(ctx, "s", events.Any, event("c", i, fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	var want uint64 = 1
	stop := errors.New("stop")
	err := s.Subscribe(ctx, 0, func(r events.Recorded) error {
		if r.Position != want || r.StreamRevision != want-1 {
			return fmt.Errorf("got position %d revision %d, want position %d", r.Position, r.StreamRevision, want)
		}
		if want == n {
			return stop
		}
		want++
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatal(err)
	}
}

func TestNonPositiveLimitReadsNothing(t *testing.T) {
	ctx := context.Background()
	s := New()
	defer s.Close()
	if _, err := s.Append(ctx, "s", events.NoStream, event("c", 0, `{}`)); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, -1} {
		fwd, _ := s.ReadStream(ctx, "s", 0, limit)
		back, _ := s.ReadStreamBackward(ctx, "s", math.MaxUint64, limit)
		all, _ := s.ReadAll(ctx, 0, limit)
		if len(fwd)+len(back)+len(all) != 0 {
			t.Fatalf("limit %d read %d, %d, %d events", limit, len(fwd), len(back), len(all))
		}
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := storemetrics.New(reg)
	s := New(WithMetrics(m))
	defer s.Close()
	ctx := context.Background()
	s.Append(ctx, "s", events.NoStream, event("m", 0, `{}`), event("m", 1, `{}`))
	s.Append(ctx, "s", events.NoStream, event("m", 0, `{}`), event("m", 1, `{}`)) // duplicate
	s.Append(ctx, "s", events.NoStream, event("m", 2, `{}`))                      // conflict
	s.Append(ctx, "s", events.Any)                                                // rejected: no events

	want := `
# HELP zuno_eventstore_appends_total Append calls by adapter and outcome (ok, conflict, duplicate, rejected, error).
# TYPE zuno_eventstore_appends_total counter
zuno_eventstore_appends_total{adapter="memory",outcome="conflict"} 1
zuno_eventstore_appends_total{adapter="memory",outcome="duplicate"} 1
zuno_eventstore_appends_total{adapter="memory",outcome="ok"} 1
zuno_eventstore_appends_total{adapter="memory",outcome="rejected"} 1
# HELP zuno_eventstore_appended_events_total Events written to the log by adapter (idempotent re-appends excluded).
# TYPE zuno_eventstore_appended_events_total counter
zuno_eventstore_appended_events_total{adapter="memory"} 2
# HELP zuno_eventstore_conflicts_total Appends refused because the expected revision did not hold, or an event id was re-used with other content.
# TYPE zuno_eventstore_conflicts_total counter
zuno_eventstore_conflicts_total{adapter="memory",code="wrong_expected_revision"} 1
# HELP zuno_eventstore_idempotent_duplicates_total Re-appends of already stored events answered with the original result.
# TYPE zuno_eventstore_idempotent_duplicates_total counter
zuno_eventstore_idempotent_duplicates_total{adapter="memory"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"zuno_eventstore_appends_total", "zuno_eventstore_appended_events_total",
		"zuno_eventstore_conflicts_total", "zuno_eventstore_idempotent_duplicates_total"); err != nil {
		t.Fatal(err)
	}
}
