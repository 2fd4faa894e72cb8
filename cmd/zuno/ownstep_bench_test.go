package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// BenchmarkOwnTimePerStep measures issue 32's headline figure the way the issue measured it
// against Codex CLI: a real `zuno run` against a local OpenAI-compatible server (here one on
// loopback that answers at once), one `echo` per step, and Zuno's own time per step, from the
// end of a response to the arrival of the next request, as the server sees it. A step is the
// tool call's whole path: the call recorded, both gates, the command under the guard (and
// bubblewrap), its result recorded, the next prompt assembled and receipted, the request sent.
//
// Each round runs a session of ownSteps steps per case, the cases in turn: this build with no
// sandbox (native) and under bubblewrap, and, when ZUNO_BENCH_BASELINE names another zuno
// binary (an older build, e.g. db24933's), that binary in the same two cases, so a
// comparison is in the same run. Reported per case: the median own time of steps 5 to 15
// ("step 10") over every round, in ms; the median time of the same steps' tool calls, from
// the log (a call's started event to its settled event: the command under its guard, and
// the guard's share of a step less bash's own start); and the zuno process's CPU per step (user and system,
// its waited-for children included), over the session less the same binary's session of no
// step. Nothing asserts on them. Under bubblewrap the case is skipped where bwrap is absent.
func BenchmarkOwnTimePerStep(b *testing.B) {
	bins := map[string]string{"this": buildZunoWithGuard(b)}
	if base := os.Getenv("ZUNO_BENCH_BASELINE"); base != "" {
		bins["base"] = base
	}
	sandboxes := []string{"native"}
	if _, err := exec.LookPath("bwrap"); err == nil {
		sandboxes = append(sandboxes, "bubblewrap")
	}
	own, tool := map[string][]time.Duration{}, map[string][]time.Duration{}
	cpu := map[string]time.Duration{}
	for b.Loop() {
		for _, name := range slices.Sorted(mapKeys(bins)) {
			for _, sb := range sandboxes {
				key := name + "/" + sb
				gaps, calls, full := ownSession(b, bins[name], sb, ownSteps)
				_, _, empty := ownSession(b, bins[name], sb, 0)
				own[key] = append(own[key], gaps[5:16]...)
				tool[key] = append(tool[key], calls[5:16]...)
				cpu[key] += full - empty
			}
		}
	}
	for key, gaps := range own {
		b.ReportMetric(float64(median(gaps))/1e6, "ms-own@10:"+key)
		b.ReportMetric(float64(median(tool[key]))/1e6, "ms-tool@10:"+key)
		b.ReportMetric(float64(cpu[key])/float64(b.N)/ownSteps/1e6, "ms-cpu/step:"+key)
	}
}

const ownSteps = 30

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// buildZunoWithGuard builds zuno and zuno-guard beside it, as `make build` installs them.
func buildZunoWithGuard(b *testing.B) string {
	b.Helper()
	bin := buildZuno(b)
	out, err := exec.Command("go", "build", "-o", filepath.Join(filepath.Dir(bin), "zuno-guard"), "../zuno-guard").CombinedOutput()
	if err != nil {
		b.Fatalf("go build zuno-guard: %v\n%s", err, out)
	}
	return bin
}

// ownSession runs one session of steps echo calls against a loopback chat server and returns
// the own time of each step (the gap from the end of response k to the arrival of request
// k+1), each tool call's time as the log records it, and the zuno process's CPU time.
func ownSession(b *testing.B, bin, sandbox string, steps int) (gaps, calls []time.Duration, cpu time.Duration) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	srv := &echoServer{steps: steps}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	config := filepath.Join(dir, "zuno.json")
	if err := os.Mkdir(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	backend := map[string]string{"native": "native", "bubblewrap": "auto"}[sandbox] // auto is bubblewrap where it runs
	if err := os.WriteFile(config, []byte(`{"sandbox":{"backend":"`+backend+`"}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--model", "openai/bench", "--title", "own", "go")
	cmd.Dir = ws
	dbPath := filepath.Join(dir, "zuno.db")
	cmd.Env = append(os.Environ(), "ZUNO_DB="+dbPath, "ZUNO_CONFIG="+config,
		"OPENAI_BASE_URL="+ts.URL+"/v1", "OPENAI_API_KEY=bench")
	if out, err := cmd.CombinedOutput(); err != nil || srv.requests() != steps+1 {
		b.Fatalf("zuno run (%s, %d steps): %v, %d requests\n%s", sandbox, steps, err, srv.requests(), out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return srv.gaps(), callTimes(b, dbPath), time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// callTimes returns, in order, each tool call's time from its started to its settled event,
// by the times their metadata records (an event's time is its append's).
func callTimes(b *testing.B, path string) []time.Duration {
	b.Helper()
	db, err := sqldb.OpenSQLite(context.Background(), path, sqldb.ReadOnly)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type, json_extract(metadata, '$.time') FROM event_log
		WHERE type IN ('session.tool.started.1', 'session.tool.settled.1') ORDER BY position`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out []time.Duration
	var started time.Time
	for rows.Next() {
		var typ, at string
		if err := rows.Scan(&typ, &at); err != nil {
			b.Fatal(err)
		}
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			b.Fatal(err)
		}
		if typ == "session.tool.started.1" {
			started = t
		} else {
			out = append(out, t.Sub(started))
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// echoServer answers chat completions as a model that calls shell with `echo N` until it
// has made steps calls, then says "done"; it notes when each request arrives and when each
// response has been written.
type echoServer struct {
	steps    int
	mu       sync.Mutex
	arrived  []time.Time
	answered []time.Time
}

func (s *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.arrived = append(s.arrived, time.Now())
	n := len(s.arrived)
	s.mu.Unlock()
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choice string) {
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench\",\"choices\":[%s]}\n\n", choice)
	}
	if n <= s.steps {
		call := fmt.Sprintf(`{\"command\":\"echo step %d\"}`, n)
		chunk(fmt.Sprintf(`{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"shell","arguments":"%s"}}]},"finish_reason":null}`, n, call))
		chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`)
	} else {
		chunk(`{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":null}`)
		chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
	s.mu.Lock()
	s.answered = append(s.answered, time.Now())
	s.mu.Unlock()
}

func (s *echoServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.arrived)
}

// gaps returns, for each response but the last, the time from its end to the next arrival.
func (s *echoServer) gaps() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for k := 0; k+1 < len(s.arrived) && k < len(s.answered); k++ {
		out = append(out, s.arrived[k+1].Sub(s.answered[k]))
	}
	return out
}
