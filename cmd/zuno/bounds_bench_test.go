package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zuno-run/zuno/adapters/pgtest"
)

// BenchmarkBoundsMaxRSS measures what a real `zuno` process (built from this package) holds in
// memory and leaves on disk against the size of what it meets, within the bounds of
// docs/config.md ("Bounds"; issue 30): a shell command's output, a model's response (text, or
// one tool call's arguments) streamed by an OpenAI-compatible server on loopback, and a
// `zuno db` result on SQLite and Postgres. Each group has its baseline in the same run (0B:
// nothing big met), and the shell runs under three configurations: none; "lifted", a trusted
// global file asking for every limit far past its ceiling (clamped); and "project-lift", the
// project layer asking the same, which is refused before anything runs. Metrics: MB-maxrss
// (the child's peak RSS), MB-disk (what the data directory holds after the run: artifacts and
// background logs), KB-maxevent (the largest event the log holds), MB-out (zuno db's stdout).
// It is a benchmark, not a timed test: nothing asserts on a figure.
//
// The 1GB and endless cases cost time and disk (up to 4 GB), so they run only when the -bench
// pattern names them: go test ./cmd/zuno -run '^$' -bench 'BoundsMaxRSS/.*(1GB|endless)' -benchtime 1x.
func BenchmarkBoundsMaxRSS(b *testing.B) {
	bin := buildZuno(b)
	b.Run("shell", func(b *testing.B) {
		for _, cfg := range []string{"none", "lifted", "project-lift"} {
			for _, sz := range boundSizes {
				if cfg == "project-lift" && sz.name != "1GB" {
					continue // refused at load whatever the command: one size says it
				}
				b.Run(cfg+"/"+sz.name, func(b *testing.B) {
					skipHeavy(b, sz.name)
					for range b.N {
						shellMeasured(b, bin, cfg, sz.n)
					}
				})
			}
		}
	})
	b.Run("response", func(b *testing.B) {
		for _, kind := range []string{"text", "argument"} {
			for _, sz := range boundSizes[:4] {
				b.Run(kind+"/"+sz.name, func(b *testing.B) {
					skipHeavy(b, sz.name)
					for range b.N {
						responseMeasured(b, bin, kind == "argument", sz.n)
					}
				})
			}
		}
	})
	b.Run("db", func(b *testing.B) {
		for _, dialect := range []string{"sqlite", "postgres"} {
			for _, q := range dbResults {
				b.Run(dialect+"/"+q.name, func(b *testing.B) {
					skipHeavy(b, q.name)
					for range b.N {
						dbMeasured(b, bin, dialect, q)
					}
				})
			}
		}
	})
}

// boundSizes are the sizes met; -1 is endless (`yes`).
var boundSizes = []struct {
	name string
	n    int64
}{{"0B", 0}, {"1MB", 1 << 20}, {"100MB", 100 << 20}, {"1GB", 1 << 30}, {"endless", -1}}

func skipHeavy(b *testing.B, name string) {
	if (name == "1GB" || name == "endless") && !strings.Contains(benchPattern(), name) {
		b.Skipf("%s cases run only when -bench names them", name)
	}
}

// boundsWorld is a repository workspace with its own configuration, data directory and
// database: dir/ws (a repository root), dir/cfg (XDG_CONFIG_HOME), dir/data (XDG_DATA_HOME).
type boundsWorld struct{ dir, ws string }

func newBoundsWorld(b *testing.B) boundsWorld {
	dir := b.TempDir()
	w := boundsWorld{dir: dir, ws: filepath.Join(dir, "ws")}
	for _, d := range []string{filepath.Join(w.ws, ".git"), filepath.Join(dir, "cfg", "zuno"), filepath.Join(dir, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return w
}

func (w boundsWorld) write(b *testing.B, rel string, v any) {
	data, err := json.Marshal(v)
	if err == nil {
		err = os.WriteFile(filepath.Join(w.dir, rel), data, 0o600)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// liftAll asks for every tool_output limit far past its ceiling.
var liftAll = map[string]any{"max_bytes": 2_000_000_000, "max_lines": 1_000_000_000,
	"max_artifact_bytes": 1_000_000_000_000, "max_session_artifact_bytes": 1_000_000_000_000}

// run runs the binary in the workspace and returns its combined output, whether it exited 0,
// and its peak RSS in KiB.
func (w boundsWorld) run(b *testing.B, bin string, env []string, args ...string) (string, bool, int64) {
	cmd, rss := w.command(b, bin, env, args...)
	b.StartTimer()
	out, err := cmd.CombinedOutput()
	b.StopTimer()
	return string(out), err == nil, rss()
}

// command is the binary run in the workspace under GNU time, and a reader of its peak RSS in
// KiB once it ended. The child's own rusage would not do: Go starts a child with vfork, so its
// ru_maxrss counts the benchmark process's own peak too.
func (w boundsWorld) command(b *testing.B, bin string, env []string, args ...string) (*exec.Cmd, func() int64) {
	const gnuTime = "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err != nil {
		b.Skip("needs GNU time (/usr/bin/time) to read the child's own peak RSS")
	}
	rssFile := filepath.Join(w.dir, "maxrss")
	cmd := exec.Command(gnuTime, append([]string{"-f", "%M", "-o", rssFile, bin}, args...)...)
	cmd.Dir = w.ws
	cmd.Env = append(os.Environ(), "ZUNO_DB="+filepath.Join(w.dir, "zuno.db"), "ZUNO_CONFIG=",
		"XDG_CONFIG_HOME="+filepath.Join(w.dir, "cfg"), "XDG_DATA_HOME="+filepath.Join(w.dir, "data"))
	cmd.Env = append(cmd.Env, env...)
	return cmd, func() int64 {
		data, err := os.ReadFile(rssFile)
		if err != nil {
			b.Fatalf("GNU time wrote no figure: %v", err)
		}
		fields := strings.Fields(string(data))
		var kib int64
		if len(fields) == 0 {
			b.Fatalf("GNU time wrote %q", data)
		}
		fmt.Sscan(fields[len(fields)-1], &kib)
		return kib
	}
}

// report adds the run's figures: peak RSS, the data directory's size, the largest event.
func (w boundsWorld) report(b *testing.B, bin string, env []string, rssKiB int64) {
	b.ReportMetric(float64(rssKiB)/1024, "MB-maxrss")
	b.ReportMetric(float64(treeBytes(filepath.Join(w.dir, "data")))/(1<<20), "MB-disk")
	out, ok, _ := w.run(b, bin, env, "db", "--format", "json", "SELECT max(length(data)) AS n FROM event")
	var rows []struct{ N json.Number }
	if i := strings.Index(out, "["); ok && i >= 0 && json.Unmarshal([]byte(out[i:]), &rows) == nil && len(rows) == 1 {
		n, _ := rows[0].N.Float64()
		b.ReportMetric(n/1024, "KB-maxevent")
	}
}

// shellMeasured runs one scripted session whose shell call prints n bytes (endless for -1).
func shellMeasured(b *testing.B, bin, cfg string, n int64) {
	b.StopTimer()
	w := newBoundsWorld(b)
	command := "true"
	switch {
	case n < 0:
		command = "yes"
	case n > 0:
		command = fmt.Sprintf("yes %099d | head -c %d", 0, n)
	}
	w.write(b, "session.json", map[string]any{"turns": []any{
		map[string]any{"toolCalls": []any{toolCall("c1", "shell", "command", command, "timeoutMs", 600000)}},
		map[string]any{"text": "done"}}})
	switch cfg {
	case "lifted":
		w.write(b, "cfg/zuno/zuno.json", map[string]any{"tool_output": liftAll})
	case "project-lift":
		w.write(b, "ws/zuno.json", map[string]any{"tool_output": liftAll})
	}
	out, ok, rss := w.run(b, bin, nil, "run", "--model", "scripted:"+filepath.Join(w.dir, "session.json"), "go")
	switch {
	case cfg == "project-lift" && (ok || !strings.Contains(out, "config_untrusted") && !strings.Contains(out, "refused in the project layer")):
		b.Fatalf("a project layer lifting the limits ran:\n%s", out)
	case cfg != "project-lift" && !strings.Contains(out, "shell c1 → "):
		b.Fatalf("zuno run:\n%s", out)
	}
	w.report(b, bin, nil, rss)
	os.RemoveAll(w.dir)
	b.StartTimer()
}

// responseMeasured runs a session against a loopback server whose first answer is n bytes of
// text, or one write call whose arguments are n bytes.
func responseMeasured(b *testing.B, bin string, argument bool, n int64) {
	b.StopTimer()
	w := newBoundsWorld(b)
	srv := streamingServer(n, argument)
	defer srv.Close()
	w.write(b, "cfg/zuno/zuno.json", map[string]any{"provider": map[string]any{"local": map[string]any{"family": "llamacpp",
		"options": map[string]any{"baseURL": srv.URL + "/v1", "apiKey": "{env:ZUNO_BENCH_KEY}"}}}})
	out, _, rss := w.run(b, bin, []string{"ZUNO_BENCH_KEY=k"}, "run", "--model", "local/m", "go")
	if !strings.Contains(out, "session ses_") {
		b.Fatalf("zuno run:\n%s", out)
	}
	w.report(b, bin, []string{"ZUNO_BENCH_KEY=k"}, rss)
	os.RemoveAll(w.dir)
	b.StartTimer()
}

// streamingServer answers Chat Completions: the first request with n bytes (text, or one
// write call's arguments) in 64 KiB deltas until the client stops reading, every later one
// with a short text.
func streamingServer(n int64, argument bool) *httptest.Server {
	var requests atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(rw, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"bench"}]}`)
			return
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		send := func(delta map[string]any, finish any) bool {
			chunk, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			_, err := fmt.Fprintf(rw, "data: %s\n\n", chunk)
			return err == nil
		}
		call := func(args string) map[string]any {
			return map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_w", "type": "function",
				"function": map[string]any{"name": "write", "arguments": args}}}}
		}
		first := requests.Add(1) == 1
		finish := "stop"
		switch {
		case !first:
			send(map[string]any{"role": "assistant", "content": "done"}, nil)
		case argument:
			finish = "tool_calls"
			send(call(`{"path": "big.txt", "content": "`), nil)
			fallthrough
		default:
			piece := strings.Repeat("x", 64<<10)
			for sent := int64(0); sent < n; sent += int64(len(piece)) {
				p := piece[:min(int64(len(piece)), n-sent)]
				d := map[string]any{"content": p}
				if argument {
					d = call(p)
				}
				if !send(d, nil) {
					return // the client stopped reading
				}
			}
			if argument {
				send(call(`"}`), nil)
			}
		}
		send(map[string]any{}, finish)
		fmt.Fprint(rw, "data: [DONE]\n\n")
	}))
}

// dbResult is a query whose result has a given size, generated by the database itself.
type dbResult struct {
	name           string
	sqlite, postgr string
	// defaults: zuno db's own --limit and --max-bytes, not their ceilings.
	defaults bool
}

var dbResults = []dbResult{
	{"0B", "SELECT 1 AS n", "SELECT 1 AS n", false},
	{"1MB", kiloRows("sqlite", 1000), kiloRows("postgres", 1000), false},
	{"100MB", kiloRows("sqlite", 100_000), kiloRows("postgres", 100_000), false},
	{"1GB", kiloRows("sqlite", 1_000_000), kiloRows("postgres", 1_000_000), false},
	// The cases: 12 rows of 60 MB on SQLite, 20 rows of 100 MB on Postgres.
	{"wide", wideSQLite, widePostgres, false},
	{"wide-defaults", wideSQLite, widePostgres, true},
}

const (
	wideSQLite   = `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 12) SELECT n, substr(hex(zeroblob(30000000)), 1, 60000000) AS v FROM c`
	widePostgres = `SELECT generate_series(1, 20) AS n, repeat('x', 100000000) AS v`
)

// kiloRows is a query of rows rows of 1000 bytes each.
func kiloRows(dialect string, rows int) string {
	if dialect == "postgres" {
		return fmt.Sprintf(`SELECT generate_series(1, %d) AS n, repeat('x', 1000) AS v`, rows)
	}
	return fmt.Sprintf(`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < %d) SELECT n, substr(hex(zeroblob(500)), 1, 1000) AS v FROM c`, rows)
}

// dbMeasured runs `zuno db --format json` with --limit and --max-bytes at their ceilings (the
// most a user can ask for; zuno db's defaults for a defaults case) over a result of the
// case's size.
func dbMeasured(b *testing.B, bin, dialect string, q dbResult) {
	b.StopTimer()
	w := newBoundsWorld(b)
	var env []string
	query := q.sqlite
	if dialect == "postgres" {
		env, query = []string{"ZUNO_EVENTSTORE_URL=" + pgtest.NewDatabase(b)}, q.postgr
	}
	if out, ok, _ := w.run(b, bin, env, "session", "create", "--title", "bench"); !ok {
		b.Fatalf("session create:\n%s", out)
	}
	outFile := filepath.Join(w.dir, "out.json")
	out, err := os.Create(outFile)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	args := []string{"db", "--format", "json", "--timeout", "10m", query}
	if !q.defaults {
		args = append(args, "--limit", "1000000", "--max-bytes", "268435456")
	}
	cmd, rss := w.command(b, bin, env, args...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	b.StartTimer()
	err = cmd.Run()
	b.StopTimer()
	if err != nil && !strings.Contains(stderr.String(), "result_too_large") {
		b.Fatalf("zuno db: %v\n%s", err, stderr.String())
	}
	b.ReportMetric(float64(rss())/1024, "MB-maxrss")
	b.ReportMetric(float64(treeBytes(outFile))/(1<<20), "MB-out")
	os.RemoveAll(w.dir)
	b.StartTimer()
}

// treeBytes is the size of the regular files at or under p.
func treeBytes(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
