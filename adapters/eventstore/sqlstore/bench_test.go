package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/events"
)

// The append benchmarks measure events/s for 1, 16 and 64 concurrent writers, each append one
// event to the writer's own stream with an exact expected revision, durable on return
// (SQLite: WAL, synchronous=FULL; Postgres: fsync on, synchronous_commit on). The baseline,
// in the same run and on the same database, is a raw INSERT-and-commit of the same row shape
// per event, by the same number of writers, into a table with the event log's keys.

var writerCounts = []int{1, 16, 64}

type target struct {
	name string
	// open returns a fresh database for one benchmark: its event store and a raw handle.
	open func(b *testing.B) (*Store, *sqlx.DB)
}

func benchTargets(b *testing.B) []target {
	return []target{
		{"sqlite", func(b *testing.B) (*Store, *sqlx.DB) {
			path := filepath.Join(b.TempDir(), "bench.db")
			s, err := OpenSQLite(context.Background(), path)
			if err != nil {
				b.Fatal(err)
			}
			raw, err := sqldb.OpenSQLite(context.Background(), path, sqldb.ReadWrite)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { raw.Close(); s.Close() })
			return s, raw
		}},
		{"postgres", func(b *testing.B) (*Store, *sqlx.DB) {
			url := pgtest.NewDatabase(b)
			s, err := OpenPostgres(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			raw, err := sqldb.OpenPostgres(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			raw.SetMaxOpenConns(70)
			b.Cleanup(func() { raw.Close(); s.Close() })
			return s, raw
		}},
	}
}

// runWriters runs b.N operations spread over n goroutines and reports events/s.
func runWriters(b *testing.B, n int, op func(writer, i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if next.Add(1) > int64(b.N) {
					return
				}
				if err := op(w, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

var payload = []byte(`{"sessionId":"ses_bench","messageId":"msg","text":"` + strings.Repeat("x", 120) + `"}`)
var metadata = []byte(`{"commandId":"c","actor":"user","time":"2026-11-30T09:00:00Z"}`)

func BenchmarkAppend(b *testing.B) {
	for _, tg := range benchTargets(b) {
		for _, n := range writerCounts {
			b.Run(fmt.Sprintf("%s/writers=%d", tg.name, n), func(b *testing.B) {
				s, _ := tg.open(b)
				run := fmt.Sprintf("%d", time.Now().UnixNano())
				ctx := context.Background()
				defer reportBatches(b, s)
				runWriters(b, n, func(w, i int) error {
					stream := benchStream(run, w)
					exp := events.NoStream
					if i > 0 {
						exp = events.Exact(uint64(i - 1))
					}
					id := fmt.Sprintf("%s/%d/%d", run, w, i)
					_, err := s.Append(ctx, stream, exp, events.Event{ID: events.DeriveID(id, 0), Type: "bench.appended.1",
						Data: payload, Metadata: events.Metadata{CommandID: id, Actor: "user"}})
					return err
				})
			})
		}
	}
}

func BenchmarkRawInsertBaseline(b *testing.B) {
	for _, tg := range benchTargets(b) {
		for _, n := range writerCounts {
			b.Run(fmt.Sprintf("%s/writers=%d", tg.name, n), func(b *testing.B) {
				_, raw := tg.open(b)
				ctx := context.Background()
				// The same row into a table with the event log's keys (position, unique event
				// id, unique stream revision): the store's overhead is what the ratio shows.
				if _, err := raw.Exec(`CREATE TABLE raw_event (position BIGINT PRIMARY KEY, event_id TEXT NOT NULL UNIQUE,
					stream TEXT NOT NULL, stream_revision BIGINT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL,
					metadata TEXT NOT NULL, UNIQUE (stream, stream_revision))`); err != nil {
					b.Fatal(err)
				}
				insert := raw.Rebind(`INSERT INTO raw_event VALUES (?, ?, ?, ?, ?, ?, ?)`)
				var pos atomic.Int64
				runWriters(b, n, func(w, i int) error {
					// Autocommit: one transaction, one durable commit per event.
					_, err := raw.ExecContext(ctx, insert, pos.Add(1), events.DeriveID(fmt.Sprint(w, "/", i), 0),
						fmt.Sprint("bench-", w), i, "bench.appended.1", string(payload), string(metadata))
					return err
				})
			})
		}
	}
}

// BenchmarkRawTxnBaseline is the group-commit baseline: one writer inserting the same rows in
// transactions of as many rows as the append benchmark has writers (an upper bound on the
// appends one of its commits can carry, each writer having one in flight), one durable
// commit per transaction, statement prepared once.
func BenchmarkRawTxnBaseline(b *testing.B) {
	for _, tg := range benchTargets(b) {
		for _, n := range writerCounts[1:] {
			b.Run(fmt.Sprintf("%s/writers=%d", tg.name, n), func(b *testing.B) {
				_, raw := tg.open(b)
				rawTxns(b, raw, n)
			})
		}
	}
}

// benchStream is the stream of writer w in BenchmarkAppend, whose rows the raw transactions
// write too: stream names longer than "bench-<w>" make the (stream, revision) index larger and
// each commit dirty more of its pages (with 64 writers, 10.5 KB written per event against
// 8.6 KB with the short names, the store's own columns the same), which is not the store's doing.
func benchStream(run string, w int) string { return fmt.Sprintf("bench-%s-%d", run, w) }

func rawTxns(b *testing.B, raw *sqlx.DB, size int) {
	ctx := context.Background()
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	if _, err := raw.Exec(`CREATE TABLE raw_event (position BIGINT PRIMARY KEY, event_id TEXT NOT NULL UNIQUE,
		stream TEXT NOT NULL, stream_revision BIGINT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL,
		metadata TEXT NOT NULL, UNIQUE (stream, stream_revision))`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for done := 0; done < b.N; done += size {
		tx, err := raw.BeginTxx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PreparexContext(ctx, tx.Rebind(`INSERT INTO raw_event VALUES (?, ?, ?, ?, ?, ?, ?)`))
		if err != nil {
			b.Fatal(err)
		}
		for i := done; i < min(done+size, b.N); i++ {
			if _, err := stmt.ExecContext(ctx, i+1, events.DeriveID(fmt.Sprint(i), 0), benchStream(run, i%size), i/size,
				"bench.appended.1", string(payload), string(metadata)); err != nil {
				b.Fatal(err)
			}
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// reportBatches reports the mean events per group commit: how much one fsync carried.
func reportBatches(b *testing.B, s *Store) {
	m := &dto.Metric{}
	if err := s.metrics.BatchEvents.WithLabelValues(s.name).(prometheus.Histogram).Write(m); err != nil {
		b.Fatal(err)
	}
	if h := m.GetHistogram(); h.GetSampleCount() > 0 {
		b.ReportMetric(h.GetSampleSum()/float64(h.GetSampleCount()), "events/commit")
	}
}
