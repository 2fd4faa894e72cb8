package projections_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRebuild replays a log of about 100,000 events (sessions with messages, plans,
// sub-plans and todos) into every read model, in one transaction. The baseline, in the same
// run and database, copies the same events into a bare table with the event projection's
// columns: reading the log and inserting one row per event, no decoding, no projectors.
func BenchmarkRebuild(b *testing.B) {
	for _, tc := range dialects {
		b.Run(tc.name, func(b *testing.B) {
			e := tc.env(b)
			rebuildBesideRawCopy(b, e, scenario(b, e.store, 8000))
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

// BenchmarkRebuildMillion is BenchmarkRebuild over a log of about 1,000,000 events on the
// embedded SQLite, beside the same raw-copy baseline. Appending a million events through the
// store would take most of an hour, so the log is the scenario's ~85,000 events copied
// eleven more times by SQL, each copy's ids, streams and session ids renamed so that every
// copy is new sessions (the hash chain, which a rebuild does not read, is not re-linked). It
// runs only when -bench names it: go test ./projections -run '^$' -bench RebuildMillion.
func BenchmarkRebuildMillion(b *testing.B) {
	// "ses_" becomes "sNN_" everywhere it occurs (session ids, streams); ids get "-NN".
	rebuildMillion(b, sqliteEnv, `INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
		SELECT position + ?, event_id || printf('-%02d', ?), replace(stream, 'ses_', printf('s%02d_', ?)),
			stream_revision, type, replace(data, 'ses_', printf('s%02d_', ?)), metadata
		FROM event_log WHERE position <= ?`)
}

// BenchmarkRebuildMillionPostgres is BenchmarkRebuildMillion on Postgres (event ids are
// UUIDs there: each copy's are derived from the original's and the copy's number).
func BenchmarkRebuildMillionPostgres(b *testing.B) {
	rebuildMillion(b, postgresEnv, `INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
		SELECT position + $1, md5(event_id::text || $2::text)::uuid, replace(stream, 'ses_', format('s%s_', lpad($3::text, 2, '0'))),
			stream_revision, type, replace(data::text, 'ses_', format('s%s_', lpad($4::text, 2, '0')))::json, metadata
		FROM event_log WHERE position <= $5`)
}

// rebuildMillion writes the scenario's log in a new env, copies it eleven times with copyLog (arguments:
// the position offset, the copy's number three times, the original log's head) and measures
// a rebuild of the whole beside the raw copy.
func rebuildMillion(b *testing.B, newEnv func(testing.TB) *env, copyLog string) {
	if !strings.Contains(benchPattern(), "Million") {
		b.Skip("runs only when -bench names it (-bench RebuildMillion)")
	}
	e := newEnv(b)
	scenario(b, e.store, 8000)
	var n int
	if err := e.rm.Writer.Get(&n, `SELECT MAX(position) FROM event_log`); err != nil {
		b.Fatal(err)
	}
	for k := 1; k <= 11; k++ {
		if _, err := e.rm.Writer.Exec(copyLog, k*n, k, k, k, n); err != nil {
			b.Fatal(err)
		}
	}
	rebuildBesideRawCopy(b, e, n*12)
}

// rebuildBesideRawCopy measures a rebuild of all n events of e's log and, in the same run, the
// raw copy of that log into one bare table (the baseline). Each also reports the CPU time
// this process spent per event (cpu-µs/event, getrusage: every thread, the database server's
// work not included): where the machine is shared, events/s follows its load, and the
// rebuild's stages, which overlap only on free cores, show their whole cost here.
func rebuildBesideRawCopy(b *testing.B, e *env, n int) {
	ctx := context.Background()
	b.Run("rebuild", func(b *testing.B) {
		start, cpu := time.Now(), processCPU()
		for range b.N {
			if got, err := e.runner.Rebuild(ctx); err != nil || got != n {
				b.Fatalf("rebuilt %d of %d events: %v", got, n, err)
			}
		}
		b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "events/s")
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(n*b.N), "cpu-µs/event")
	})
	b.Run("raw-copy-baseline", func(b *testing.B) {
		if _, err := e.rm.Writer.Exec(`CREATE TABLE IF NOT EXISTS raw_copy (id TEXT, position BIGINT, aggregate_id TEXT,
			stream TEXT, revision BIGINT, type TEXT, data TEXT, metadata TEXT, time TEXT)`); err != nil {
			b.Fatal(err)
		}
		start, cpu := time.Now(), processCPU()
		for range b.N {
			rawCopy(b, e)
		}
		b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "events/s")
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(n*b.N), "cpu-µs/event")
	})
}

// processCPU is the CPU time this process has used, user and system, on every thread.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPattern is the -bench flag's value.
func benchPattern() string {
	if f := flag.Lookup("test.bench"); f != nil {
		return f.Value.String()
	}
	return ""
}
