package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/events"
)

// TestPostgresSlowCommitIsNotSkipped is the hazard of sequence-assigned positions made real:
// a trigger makes every append to "slow-" streams sleep inside its transaction, so a writer
// that took position N is still uncommitted while 15 other writers (each with its own store,
// as separate processes) commit N+1, N+2, .... A subscriber that read N+1 would never come
// back for N. Readers read below the oldest transaction in progress (docs/storage.md,
// "Concurrent appends"), so the subscriber must see every event exactly once, in position
// order.
func TestPostgresSlowCommitIsNotSkipped(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub := openPostgres(t, url)
	defer sub.Close()
	admin, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`
		CREATE FUNCTION slow_append() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_sleep(0.05); RETURN NEW; END $$;
		CREATE TRIGGER slow_append BEFORE INSERT ON event_log FOR EACH ROW
		WHEN (NEW.stream LIKE 'slow-%') EXECUTE FUNCTION slow_append();`); err != nil {
		t.Fatal(err)
	}

	const writers, perWriter = 16, 15
	var mu sync.Mutex
	var got []events.Recorded
	done := make(chan struct{})
	go sub.Subscribe(ctx, 0, func(r events.Recorded) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		if len(got) == writers*perWriter {
			close(done)
		}
		return nil
	})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := openPostgres(t, url)
			defer s.Close()
			prefix := "fast"
			if w%4 == 0 {
				prefix = "slow"
			}
			stream := fmt.Sprintf("%s-%d", prefix, w)
			for i := range perWriter {
				exp := events.NoStream
				if i > 0 {
					exp = events.Exact(uint64(i - 1))
				}
				ev := events.Event{ID: events.DeriveID(stream, i), Type: "test.happened.1", Data: []byte(`{}`)}
				if _, err := s.Append(ctx, stream, exp, ev); err != nil {
					t.Errorf("%s: %v", stream, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-done:
	case <-ctx.Done():
		mu.Lock()
		t.Fatalf("subscriber saw %d of %d events", len(got), writers*perWriter)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != writers*perWriter {
		t.Fatalf("subscriber saw %d events, want exactly %d", len(got), writers*perWriter)
	}
	seen := map[string]bool{}
	for i, r := range got {
		if i > 0 && r.Position <= got[i-1].Position {
			t.Fatalf("event %d delivered at position %d after %d: out of order", i, r.Position, got[i-1].Position)
		}
		if seen[r.ID] {
			t.Fatalf("event %s delivered twice", r.ID)
		}
		seen[r.ID] = true
	}
}
