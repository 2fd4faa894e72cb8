package readmodel_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/events"
)

// stallQuery is the worst a reader can do to appends now that it may take no advisory key and
// call no pg_sleep (migrations/postgres/readmodel/0015): hold a snapshot of the read models
// and the log as long as its timeout allows, reading.
const stallQuery = `SELECT count(*) FROM generate_series(1, 1e12) /* stall */, (SELECT count(*) FROM event) e`

// appendAll runs 8 writers that append n events each to their own streams and returns every
// append's latency.
func appendAll(t testing.TB, store *sqlstore.Store, run string, n int) []time.Duration {
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				id := fmt.Sprintf("%s/%d/%d", run, w, i)
				start := time.Now()
				_, err := store.Append(context.Background(), fmt.Sprintf("%s-%d", run, w), events.Any,
					events.Event{ID: events.DeriveID(id, 0), Type: "bench.appended.1", Data: []byte(`{}`), Metadata: events.Metadata{CommandID: id}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	return lat
}

// readerActive reports whether the stall query is still running in the database.
func readerActive(t testing.TB, admin *sql.DB) bool {
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%/* stall */%'
		AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// A zuno db query held open as long as it can does not hold up appends: 8 writers finish all
// their appends while the reader is still inside its query. (The latencies are logged, not
// asserted: BenchmarkAppendWithReader measures them.)
func TestReaderCannotStallAppends(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	rm := seededPostgres(t, dbURL)
	store, err := sqlstore.OpenPostgres(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	admin, _ := sql.Open("postgres", dbURL)
	defer admin.Close()
	without := appendAll(t, store, "without", 25)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := userRows(rm, ctx, stallQuery, readmodel.UserOptions{Timeout: time.Hour})
		done <- err
	}()
	for !readerActive(t, admin) {
		select {
		case err := <-done:
			t.Fatalf("the stall query ended before the writers started: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	with := appendAll(t, store, "with", 25)
	if !readerActive(t, admin) {
		t.Fatal("the reader's query ended before the writers finished: the test proved nothing")
	}
	cancel()
	<-done
	q := func(l []time.Duration, p float64) time.Duration { return l[int(float64(len(l)-1)*p)] }
	t.Logf("8 writers x 25 appends: without reader p50 %v p99 %v max %v; with reader holding its query p50 %v p99 %v max %v",
		q(without, .5), q(without, .99), without[len(without)-1], q(with, .5), q(with, .99), with[len(with)-1])
}

// BenchmarkAppendWithReader: 8 writers appending, with and without a zuno db query holding
// the old append key and sleeping, in the same run.
func BenchmarkAppendWithReader(b *testing.B) {
	for _, reader := range []bool{false, true} {
		b.Run(fmt.Sprintf("reader=%v", reader), func(b *testing.B) {
			dbURL := pgtest.NewDatabase(b)
			store, err := sqlstore.OpenPostgres(context.Background(), dbURL)
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			rm, err := readmodel.OpenPostgres(context.Background(), dbURL)
			if err != nil {
				b.Fatal(err)
			}
			defer rm.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if reader {
				go userRows(rm, ctx, stallQuery, readmodel.UserOptions{Timeout: time.Hour})
				time.Sleep(200 * time.Millisecond)
			}
			b.ResetTimer()
			lat := appendAll(b, store, fmt.Sprint("b", b.N), max(1, b.N/8))
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// Nothing a process does at start waits for an advisory key: with the old migration key
// (7365120001) held by another session, as any role that may call pg_advisory_lock could,
// a fresh database migrates, an up-to-date one opens, and appends land, each well within the
// context's deadline (which only keeps a regression from hanging the suite).
func TestHeldMigrationKeyStallsNoStart(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		dbURL := pgtest.NewDatabase(t)
		if !fresh {
			seededPostgres(t, dbURL)
		}
		holder, err := sql.Open("postgres", dbURL)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := holder.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(context.Background(), "SELECT pg_advisory_lock(7365120001)"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		store, err := sqlstore.OpenPostgres(ctx, dbURL)
		if err != nil {
			t.Fatalf("fresh=%v: open the event store with the key held: %v", fresh, err)
		}
		ev := events.Event{ID: events.DeriveID("held", 0), Type: "bench.appended.1", Data: []byte(`{}`),
			Metadata: events.Metadata{CommandID: "held", Actor: "user"}}
		if _, err := store.Append(ctx, "held", events.Any, ev); err != nil {
			t.Errorf("fresh=%v: append with the key held: %v", fresh, err)
		}
		rm, err := readmodel.OpenPostgres(ctx, dbURL)
		if err != nil {
			t.Errorf("fresh=%v: open the read models with the key held: %v", fresh, err)
		} else {
			rm.Close()
		}
		cancel()
		store.Close()
		conn.Close()
		holder.Close()
	}
}
