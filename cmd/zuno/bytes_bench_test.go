package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/sqldb"
)

// BenchmarkBytesPerStep measures what a session keeps on disk per agent step (issue 13, "Bytes
// per step"): a real `zuno run` of 10 and of 100 steps, each one shell call of `echo`, on the
// embedded SQLite, the database checkpointed (WAL folded in, truncated) before its size is
// read. bytes/step is the difference over the 90 extra steps, so fixed costs (schema, the
// session's first events) cancel out; the KB/step metrics per table (SQLite's dbstat) say
// where the bytes went, and the B/step:type metrics what each event type's rows hold (id,
// stream, type, data and metadata, before SQLite's record and page overhead). The goal is
// 3.5 KB a step (issue 32); nothing asserts on it.
func BenchmarkBytesPerStep(b *testing.B) {
	bin := buildZuno(b)
	for range b.N {
		small := sessionBytes(b, bin, nil, 10)
		large := sessionBytes(b, bin, nil, 100)
		reportBytes(b, small, large)
	}
}

// BenchmarkBytesPerStepPostgres is BenchmarkBytesPerStep with the event log and the read
// models in a Postgres database: the sizes are pg_table_size of each table (heap, TOAST and
// the free space and visibility maps) and pg_relation_size of each index, after a VACUUM.
func BenchmarkBytesPerStepPostgres(b *testing.B) {
	if os.Getenv("ZUNO_TEST_POSTGRES_URL") == "" {
		b.Skip("ZUNO_TEST_POSTGRES_URL is not set")
	}
	bin := buildZuno(b)
	for range b.N {
		small := sessionBytes(b, bin, postgresSize, 10)
		large := sessionBytes(b, bin, postgresSize, 100)
		reportBytes(b, small, large)
	}
}

func reportBytes(b *testing.B, small, large dbSize) {
	b.ReportMetric(float64(large.total-small.total)/90, "bytes/step")
	for _, name := range sortedKeys(large.tables) {
		if per := float64(large.tables[name]-small.tables[name]) / 90 / 1024; per >= 0.05 {
			b.ReportMetric(per, "KB/step:"+name)
		}
	}
	for _, typ := range sortedKeys(large.types) {
		if per := float64(large.types[typ]-small.types[typ]) / 90; per >= 1 {
			b.ReportMetric(per, "B/step:type:"+typ)
		}
	}
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type dbSize struct {
	total  int64
	tables map[string]int64 // bytes of pages per table or index
	types  map[string]int64 // bytes of the log's rows' values per event type
}

// eventTypeBytes sums, per event type, the bytes of the values of the log's rows.
const eventTypeBytes = `SELECT type, SUM(length(CAST(event_id AS TEXT)) + length(stream) + length(type) +
	length(CAST(data AS TEXT)) + length(CAST(metadata AS TEXT))) FROM event_log GROUP BY type`

// sumRows adds the (name, bytes) rows of query to m.
func sumRows(b *testing.B, db *sqlx.DB, query string, m map[string]int64) {
	b.Helper()
	rows, err := db.Query(query)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			b.Fatal(err)
		}
		m[name] += n
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
}

// postgresSize creates the database a session runs in and returns its environment and the
// function that measures it.
func postgresSize(b *testing.B) ([]string, func() dbSize) {
	url := pgtest.NewDatabase(b)
	return []string{"ZUNO_EVENTSTORE_URL=" + url}, func() dbSize {
		db, err := sqlx.Open("postgres", url)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`VACUUM`); err != nil {
			b.Fatal(err)
		}
		size := dbSize{tables: map[string]int64{}, types: map[string]int64{}}
		sumRows(b, db, `SELECT relname, CASE relkind WHEN 'i' THEN pg_relation_size(oid) ELSE pg_table_size(oid) END
			FROM pg_class WHERE relkind IN ('r', 'i', 'm') AND relnamespace = current_schema()::regnamespace`, size.tables)
		for _, n := range size.tables {
			size.total += n
		}
		sumRows(b, db, eventTypeBytes, size.types)
		return size
	}
}

// sessionBytes runs a scripted session of steps shell calls and returns the checkpointed
// database's size: the embedded SQLite's, or (pg not nil) a new Postgres database's.
func sessionBytes(b *testing.B, bin string, pg func(*testing.B) ([]string, func() dbSize), steps int) dbSize {
	b.Helper()
	var env []string
	var measure func() dbSize
	if pg != nil {
		env, measure = pg(b)
	}
	dbPath := recordEchoSession(b, bin, env, steps)
	if measure == nil {
		return checkpointedSize(b, dbPath)
	}
	return measure()
}

// recordEchoSession runs `zuno run` on a scripted session of steps calls of `echo` with the
// environment env added, and returns the path of its embedded database (not used when env
// names another store).
func recordEchoSession(b *testing.B, bin string, env []string, steps int) string {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	var turns []any
	for i := range steps {
		call := toolCall(fmt.Sprintf("c%d", i+1), "shell", "command", fmt.Sprintf("echo step %d", i+1))
		turns = append(turns, map[string]any{"toolCalls": []any{call}})
	}
	turns = append(turns, map[string]any{"text": "done"})
	script := filepath.Join(dir, "session.json")
	data, _ := json.Marshal(map[string]any{"turns": turns})
	if err := os.WriteFile(script, data, 0o600); err != nil {
		b.Fatal(err)
	}
	dbPath := filepath.Join(dir, "zuno.db")
	cmd := exec.Command(bin, "run", "--model", "scripted:"+script, "--title", "bytes", "go")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "ZUNO_DB="+dbPath, "ZUNO_CONFIG="+filepath.Join(dir, "none.json"))
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("shell c%d → completed", steps)) {
		b.Fatalf("zuno run: %v\n%s", err, out)
	}
	return dbPath
}

func checkpointedSize(b *testing.B, path string) dbSize {
	b.Helper()
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, path, sqldb.Writer)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	size := dbSize{tables: map[string]int64{}, types: map[string]int64{}}
	sumRows(b, db, `SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`, size.tables)
	sumRows(b, db, eventTypeBytes, size.types)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size.total = st.Size()
	return size
}
