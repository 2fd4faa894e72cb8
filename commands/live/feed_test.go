package live

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/events"
)

type appender interface {
	Log
	Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.Event) (events.AppendResult, error)
}

func appendTo(t testing.TB, log appender, stream string, n int) uint64 {
	t.Helper()
	ev, err := events.Encode(events.DeriveID(stream, n), events.SessionTitled{SessionID: stream, Title: fmt.Sprint(n)},
		events.Metadata{CommandID: fmt.Sprintf("%s/%d", stream, n)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := log.Append(context.Background(), stream, events.Any, ev)
	if err != nil {
		t.Fatal(err)
	}
	return res.LastPosition
}

func onStream(s string) func(events.Recorded) bool {
	return func(r events.Recorded) bool { return r.Stream == s }
}

// start runs a feed over log until the test ends.
func start(t *testing.T, log Log) *Feed {
	f := New(log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

func within(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestWaitSeesWhatArrivesAndWhatIsThere(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) appender{
		"memstore": func(*testing.T) appender { return memstore.New() },
		"sqlite": func(t *testing.T) appender {
			s, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "zuno.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			log := open(t)
			before := appendTo(t, log, "a", 0) // there before the feed started
			f := start(t, log)
			ctx := within(t)

			got, err := f.Wait(ctx, 0, onStream("a"))
			if err != nil || got.Position != before {
				t.Fatalf("an event already in the log: %v at %d, want %d", err, got.Position, before)
			}
			// After it, nothing yet: the next one to arrive.
			res := make(chan events.Recorded, 1)
			go func() {
				rec, err := f.Wait(ctx, before, onStream("a"))
				if err != nil {
					t.Error(err)
				}
				res <- rec
			}()
			appendTo(t, log, "b", 0)
			later := appendTo(t, log, "a", 1)
			if rec := <-res; rec.Position != later {
				t.Fatalf("the next matching event: %d, want %d", rec.Position, later)
			}
		})
	}
}

// Many waiters on one feed, each for its own stream, with appends racing their registration
// (-race): every waiter gets its own event, none hangs, and none is left registered.
func TestManyWaitersOneFeed(t *testing.T) {
	log := memstore.New()
	f := start(t, log)
	ctx := within(t)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		stream := fmt.Sprintf("s%d", i)
		wg.Go(func() {
			rec, err := f.Wait(ctx, 0, onStream(stream))
			if err == nil && rec.Stream != stream {
				err = fmt.Errorf("waiter of %s got %s", stream, rec.Stream)
			}
			errs <- err
		})
		wg.Go(func() { appendTo(t, log, stream, 0) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if left := len(f.waiters); left != 0 {
		t.Fatalf("%d waiters left registered", left)
	}
}

func TestWaitEnds(t *testing.T) {
	log := memstore.New()
	f := New(log)
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- f.Run(runCtx) }()

	// A waiter that gives up leaves nothing behind.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := f.Wait(ctx, 0, onStream("never")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a waiter whose context ends: %v", err)
	}
	if len(f.waiters) != 0 {
		t.Fatal("the waiter that gave up is still registered")
	}
	// A feed that stops tells its waiters, and later ones, why.
	waited := make(chan error, 1)
	go func() { _, err := f.Wait(context.Background(), 0, onStream("never")); waited <- err }()
	time.Sleep(10 * time.Millisecond)
	stop()
	<-ran
	if err := <-waited; !errors.Is(err, ErrStopped) {
		t.Fatalf("a waiter of a stopped feed: %v", err)
	}
	if _, err := f.Wait(context.Background(), 0, onStream("never")); !errors.Is(err, ErrStopped) {
		t.Fatalf("a wait after the feed stopped: %v", err)
	}
}

// BenchmarkWaiters: what one append costs the feed with many waiters that do not match it,
// against the same append with none waiting (the baseline in the same run).
func BenchmarkWaiters(b *testing.B) {
	for _, waiting := range []int{0, 100} {
		b.Run(fmt.Sprintf("waiting=%d", waiting), func(b *testing.B) {
			log := memstore.New()
			f := New(log)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go f.Run(ctx)
			for i := range waiting {
				go f.Wait(ctx, 0, onStream(fmt.Sprintf("idle%d", i)))
			}
			b.ResetTimer()
			for i := range b.N {
				pos := appendTo(b, log, "hot", i)
				if _, err := f.Wait(ctx, pos-1, onStream("hot")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
