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
	"github.com/zuno-run/zuno/migrations"
)

// stallQuery is the worst a reader can do to appends: take the keys appends and projections
// once took, try the append table lock, and sleep as long as its timeout allows.
var stallQuery = fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d), pg_advisory_xact_lock(%d), pg_sleep(3600)`,
	migrations.AppendLock, migrations.ReadModelLock)

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
	if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(3600)%'
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
		_, err := rm.UserQuery(ctx, stallQuery, readmodel.UserOptions{Timeout: time.Hour})
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
				go rm.UserQuery(ctx, stallQuery, readmodel.UserOptions{Timeout: time.Hour})
				time.Sleep(200 * time.Millisecond)
			}
			b.ResetTimer()
			lat := appendAll(b, store, fmt.Sprint("b", b.N), max(1, b.N/8))
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
