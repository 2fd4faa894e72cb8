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

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// BenchmarkBytesPerStep measures what a session keeps on disk per agent step (issue 13, "Bytes
// per step"): a real `zuno run` of 10 and of 100 steps, each one shell call of `echo`, on the
// embedded SQLite, the database checkpointed (WAL folded in, truncated) before its size is
// read. bytes/step is the difference over the 90 extra steps, so fixed costs (schema, the
// session's first events) cancel out; the KB/step metrics per table (SQLite's dbstat) say
// where the bytes went. The budget is 8 KB a step; nothing asserts on it.
func BenchmarkBytesPerStep(b *testing.B) {
	bin := buildZuno(b)
	for range b.N {
		small := sessionBytes(b, bin, 10)
		large := sessionBytes(b, bin, 100)
		b.ReportMetric(float64(large.total-small.total)/90, "bytes/step")
		names := make([]string, 0, len(large.tables))
		for name := range large.tables {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if per := float64(large.tables[name]-small.tables[name]) / 90 / 1024; per >= 0.05 {
				b.ReportMetric(per, "KB/step:"+name)
			}
		}
	}
}

type dbSize struct {
	total  int64
	tables map[string]int64 // bytes of pages per table or index
}

// sessionBytes runs a scripted session of steps shell calls and returns the checkpointed
// database's size.
func sessionBytes(b *testing.B, bin string, steps int) dbSize {
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
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("shell c%d → completed", steps)) {
		b.Fatalf("zuno run: %v\n%s", err, out)
	}
	return checkpointedSize(b, dbPath)
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
	size := dbSize{tables: map[string]int64{}}
	rows, err := db.QueryContext(ctx, `SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`)
	if err == nil {
		for rows.Next() {
			var name string
			var n int64
			if err := rows.Scan(&name, &n); err != nil {
				b.Fatal(err)
			}
			size.tables[name] = n
		}
		rows.Close()
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size.total = st.Size()
	return size
}
