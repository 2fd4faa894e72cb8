package projections_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
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
// this process spent per event (cpu-µs/event, getrusage: every thread): where the machine is
// shared, events/s follows its load, and the rebuild's stages, which overlap only on free
// cores, show their whole cost here. On Postgres the server's work is in its backend
// processes: server-cpu-µs/event is theirs (serverCPU), and total-cpu-µs/event the sum.
// Each measured part runs under the pprof label bench=<the benchmark's name>, so that a
// -cpuprofile of the run can be cut to it (go tool pprof -tagfocus 'bench=.*sqlite/rebuild')
// without the log's writing, which takes most of the run.
func rebuildBesideRawCopy(b *testing.B, e *env, n int) {
	ctx := context.Background()
	b.Run("rebuild", func(b *testing.B) {
		measureCPU(b, e, n, func() {
			if got, err := e.runner.Rebuild(ctx); err != nil || got != n {
				b.Fatalf("rebuilt %d of %d events: %v", got, n, err)
			}
		})
	})
	createRawCopy(b, e)
	b.Run("raw-copy-baseline", func(b *testing.B) {
		measureCPU(b, e, n, func() { rawCopy(b, e) })
	})
	b.Run("interleaved", func(b *testing.B) {
		interleaved(b, e, n, func() {
			if got, err := e.runner.Rebuild(ctx); err != nil || got != n {
				b.Fatalf("rebuilt %d of %d events: %v", got, n, err)
			}
		}, func() { rawCopy(b, e) })
	})
}

func createRawCopy(b *testing.B, e *env) {
	if _, err := e.rm.Writer.Exec(`CREATE TABLE IF NOT EXISTS raw_copy (id TEXT, position BIGINT, aggregate_id TEXT,
		stream TEXT, revision BIGINT, type TEXT, data TEXT, metadata TEXT, time TEXT)`); err != nil {
		b.Fatal(err)
	}
}

// interleaved measures a rebuild and the raw copy alternately, b.N times each, the one and
// then the other first, and reports each one's CPU time per event and the raw copy's over the
// rebuild's (raw/rebuild, where the goal is 0.9 or more): on a shared machine the load
// changes between the two sub-benchmarks above, each of which runs all its rounds in a row,
// and the CPU time per event follows it; alternating the rounds gives both the same load.
// On Postgres the figures are of this process and the backends together (total-cpu).
func interleaved(b *testing.B, e *env, n int, rebuild, raw func()) {
	var spent [2]time.Duration
	names := [2]string{"rebuild", "raw-copy"}
	for i := range b.N {
		for k := range 2 {
			which := (i + k) % 2
			server, start := newServerCPU(b, e), processCPU()
			pprof.Do(context.Background(), pprof.Labels("bench", b.Name()+"/"+names[which]), func(context.Context) {
				[2]func(){rebuild, raw}[which]()
			})
			spent[which] += processCPU() - start
			if used, ok := server.used(b); ok {
				spent[which] += used
			}
		}
	}
	events := float64(n * b.N)
	b.ReportMetric(float64(spent[0].Microseconds())/events, "rebuild-cpu-µs/event")
	b.ReportMetric(float64(spent[1].Microseconds())/events, "raw-cpu-µs/event")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "raw/rebuild")
}

// measureCPU runs do b.N times, each over n events, and reports events/s and the CPU time
// per event of this process and, where the database is a Postgres server on this machine,
// of its backends.
func measureCPU(b *testing.B, e *env, n int, do func()) {
	server := newServerCPU(b, e)
	start, cpu := time.Now(), processCPU()
	pprof.Do(context.Background(), pprof.Labels("bench", b.Name()), func(context.Context) {
		for range b.N {
			do()
		}
	})
	client := processCPU() - cpu
	events := float64(n * b.N)
	b.ReportMetric(events/time.Since(start).Seconds(), "events/s")
	b.ReportMetric(float64(client.Microseconds())/events, "cpu-µs/event")
	if used, ok := server.used(b); ok {
		b.ReportMetric(float64(used.Microseconds())/events, "server-cpu-µs/event")
		b.ReportMetric(float64((client+used).Microseconds())/events, "total-cpu-µs/event")
	}
}

// processCPU is the CPU time this process has used, user and system, on every thread.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU measures the CPU time of the Postgres backends serving the benchmark's database:
// each connection is a server process of its own, whose user and system time /proc/PID/stat
// gives (in clock ticks, 1/100 s here) when the server runs on this machine. The backends
// are those pg_stat_activity lists for the database at the start and at the end; one that
// started and ended between the two is missed (the pools keep their connections open).
type serverCPU struct {
	db     *sqlx.DB
	before map[int]time.Duration
}

// newServerCPU starts measuring; nil where the database is not Postgres or its backends'
// /proc entries cannot be read (a server on another machine).
func newServerCPU(b *testing.B, e *env) *serverCPU {
	if e.rm.Writer.DriverName() != "postgres" {
		return nil
	}
	s := &serverCPU{db: e.rm.Writer}
	before, ok := s.backends(b)
	if !ok {
		return nil
	}
	s.before = before
	return s
}

// used is the CPU time the backends used since newServerCPU.
func (s *serverCPU) used(b *testing.B) (time.Duration, bool) {
	if s == nil {
		return 0, false
	}
	after, ok := s.backends(b)
	if !ok {
		return 0, false
	}
	var sum time.Duration
	for pid, t := range after {
		sum += t - s.before[pid] // a backend that started meanwhile started at 0
	}
	return sum, true
}

// backends returns the CPU time of each backend of the database, by process id.
func (s *serverCPU) backends(b *testing.B) (map[int]time.Duration, bool) {
	var pids []int
	if err := s.db.Select(&pids, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`); err != nil {
		b.Fatal(err)
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, false
		}
		// Fields after the command's closing parenthesis: state is the first, utime the 12th,
		// stime the 13th (proc(5)).
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		utime, err1 := strconv.ParseInt(fields[11], 10, 64)
		stime, err2 := strconv.ParseInt(fields[12], 10, 64)
		if err1 != nil || err2 != nil {
			b.Fatalf("/proc/%d/stat: %q", pid, stat)
		}
		out[pid] = time.Duration(utime+stime) * time.Second / clockTicks
	}
	return out, true
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times: 100 on Linux.
const clockTicks = 100

// benchPattern is the -bench flag's value.
func benchPattern() string {
	if f := flag.Lookup("test.bench"); f != nil {
		return f.Value.String()
	}
	return ""
}
