package projections_test

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkRebuild replays a log of about 100,000 events (sessions with messages, plans,
// sub-plans and todos) into every read model, in one transaction. The baseline, in the same
// run and database, copies the same events into a bare table with the event projection's
// columns: reading the log and inserting one row per event, no decoding, no projectors.
func BenchmarkRebuild(b *testing.B) {
	for _, tc := range []struct {
		name string
		env  func(testing.TB) *env
	}{{"sqlite", sqliteEnv}, {"postgres", postgresEnv}} {
		b.Run(tc.name, func(b *testing.B) {
			e := tc.env(b)
			n := scenario(b, e.store, 8000)
			ctx := context.Background()
			b.Run("rebuild", func(b *testing.B) {
				start := time.Now()
				for range b.N {
					if got, err := e.runner.Rebuild(ctx); err != nil || got != n {
						b.Fatalf("rebuilt %d of %d events: %v", got, n, err)
					}
				}
				b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "events/s")
			})
			b.Run("raw-copy-baseline", func(b *testing.B) {
				if _, err := e.rm.Writer.Exec(`CREATE TABLE IF NOT EXISTS raw_copy (id TEXT, position BIGINT, aggregate_id TEXT,
					stream TEXT, revision BIGINT, type TEXT, data TEXT, metadata TEXT, time TEXT)`); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for range b.N {
					rawCopy(b, e)
				}
				b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "events/s")
			})
		})
	}
}

func rawCopy(b *testing.B, e *env) {
	ctx := context.Background()
	tx, err := e.rm.Writer.BeginTxx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM raw_copy`); err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Preparex(tx.Rebind(`INSERT INTO raw_copy VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	var pos uint64
	for {
		batch, err := e.store.ReadAll(ctx, pos, 1000)
		if err != nil {
			b.Fatal(err)
		}
		if len(batch) == 0 {
			break
		}
		for _, ev := range batch {
			if _, err := stmt.Exec(ev.ID, int64(ev.Position), ev.Stream, ev.Stream, int64(ev.StreamRevision), ev.Type,
				string(ev.Data), fmt.Sprint(ev.Metadata.CommandID), ev.Metadata.Time.String()); err != nil {
				b.Fatal(err)
			}
		}
		pos = batch[len(batch)-1].Position
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
