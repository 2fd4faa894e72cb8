package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// BenchmarkVerifyWireCommand measures the one-pass audit as the issue measured debug prompt,
// as commands (process start, opening the log, the walk), in one run (docs/storage.md,
// "`zuno verify`"): `zuno debug prompt --session S --step 10` on a 10-step session, the
// baseline, against `zuno verify --session S --wire` on a 1,000-step session (its chains and
// every receipt), and `debug prompt --step 10` against `--step 1000` of the long session. The
// sessions are real `zuno run`s of the scripted provider, one read call a step, on the
// embedded SQLite; scripted requests are not sent over HTTP, so they record no wire exchange
// (commands/queries' BenchmarkAuditSession covers wire records).
func BenchmarkVerifyWireCommand(b *testing.B) {
	bin := buildZuno(b)
	short, sid10 := scriptedReads(b, bin, 10)
	long, sid1000 := scriptedReads(b, bin, 1000)
	var one, all, p10, p1000 time.Duration
	for b.Loop() {
		one += timedZuno(b, bin, short, "debug", "prompt", "--session", sid10, "--step", "10")
		all += timedZuno(b, bin, long, "verify", "--session", sid1000, "--wire")
		p10 += timedZuno(b, bin, long, "debug", "prompt", "--session", sid1000, "--step", "10")
		p1000 += timedZuno(b, bin, long, "debug", "prompt", "--session", sid1000, "--step", "1000")
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / n }
	b.ReportMetric(ms(one), "ms/one@10")
	b.ReportMetric(ms(all), "ms/all@1000")
	b.ReportMetric(float64(all)/float64(one), "ratio-all@1000/one@10")
	b.ReportMetric(ms(p10), "ms/prompt@10")
	b.ReportMetric(ms(p1000), "ms/prompt@1000")
	b.ReportMetric(float64(p1000)/float64(p10), "ratio-prompt@1000/10")
}

// scriptedReads records a session of steps read calls and a last answer; it returns the
// database and the session id.
func scriptedReads(b *testing.B, bin string, steps int) (db, sid string) {
	b.Helper()
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("one line\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	var turns []any
	for i := range steps {
		turns = append(turns, map[string]any{"toolCalls": []any{toolCall(fmt.Sprintf("c%d", i+1), "read", "path", "f.txt")}})
	}
	turns = append(turns, map[string]any{"text": "done"})
	script := filepath.Join(dir, "session.json")
	data, _ := json.Marshal(map[string]any{"turns": turns})
	if err := os.WriteFile(script, data, 0o600); err != nil {
		b.Fatal(err)
	}
	db = filepath.Join(dir, "zuno.db")
	cmd := exec.Command(bin, "run", "--model", "scripted:"+script, "--title", "audit", "go")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "ZUNO_DB="+db, "ZUNO_CONFIG="+filepath.Join(dir, "none.json"))
	out, err := cmd.CombinedOutput()
	m := regexp.MustCompile(`session (ses_[0-9a-f]+) · completed`).FindSubmatch(out)
	if err != nil || m == nil {
		b.Fatalf("zuno run: %v\n%s", err, out)
	}
	return db, string(m[1])
}

// timedZuno runs one command on db and returns its wall time; it must succeed.
func timedZuno(b *testing.B, bin, db string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ZUNO_DB="+db, "ZUNO_CONFIG="+filepath.Join(filepath.Dir(db), "none.json"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil || !strings.Contains(string(out), "verified") {
		b.Fatalf("zuno %v: %v\n%s", args, err, out)
	}
	return d
}
