package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
)

// syncBuffer is a log written by the verify loop and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// zuno serve --verify-every: the loop verifies the whole log and the read models on its own,
// each run counted on the process's registry, so a read-model row changed outside zuno shows
// as a failed run in /metrics (and fires ZunoVerifyFailed) without anyone running zuno verify.
// (The period is short here; the flag refuses less than a minute, which serve_metrics.txtar
// checks.)
func TestVerifyEveryCountsRuns(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgFile, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZUNO_CONFIG", cfgFile)
	t.Setenv("ZUNO_DB", filepath.Join(dir, "zuno.db"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	ctx := context.Background()
	a, err := openApp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Commands.CreateSession(ctx, commands.Meta{CommandID: "c1", Actor: "user"}, zapp.NewSession{SessionID: "ses_e", Title: "kept", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	stop := a.verifyEvery(ctx, 20*time.Millisecond, log)
	defer stop()
	waitFor(t, log, "verified")
	if _, err := a.rm.Writer.ExecContext(ctx, `UPDATE session SET title = 'evil' WHERE id = 'ses_e'`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, log, "verify_failed")
	stop()
	verified, failed := runsOf(t, a, "verified"), runsOf(t, a, "failed")
	if verified < 1 || failed < 1 {
		t.Fatalf("runs counted: %v verified, %v failed; log:\n%s", verified, failed, log)
	}
}

func waitFor(t *testing.T, log *syncBuffer, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the verify loop never said %q; it said:\n%s", text, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runsOf is zuno_verify_runs_total{scope="all",result=result} on the app's registry.
func runsOf(t *testing.T, a *app, result string) float64 {
	t.Helper()
	mfs, err := a.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "zuno_verify_runs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["scope"] == "all" && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
