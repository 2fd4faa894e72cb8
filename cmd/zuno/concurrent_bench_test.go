package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/pgtest"
)

// BenchmarkConcurrentSessionsPostgres runs 16 sessions at once on one Postgres store, each in
// a runtime of its own (openApp: its own connection pools, projection runner and bus, as 16
// processes have), each running turns of benchSessionSteps tool steps through runTurn, the
// path of `zuno run`: the turn, then what the build does so that the read models hold it
// before the process ends. It reports steps per second over all 16 (issue 24: "16 concurrent
// sessions on Postgres complete more steps per second than today's build"). The file uses
// only what the build before read-your-writes by position also has, so the same file,
// copied into a checkout of that build, measures it (docs/storage.md gives the figures).
func BenchmarkConcurrentSessionsPostgres(b *testing.B) {
	url := pgtest.NewDatabase(b)
	dir := b.TempDir()
	b.Setenv("ZUNO_EVENTSTORE_URL", url)
	b.Setenv("ZUNO_DB", filepath.Join(dir, "unused.db"))
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".config"))
	b.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	b.Setenv("ZUNO_CONFIG", filepath.Join(dir, "none.json"))
	if err := os.WriteFile(filepath.Join(dir, "none.json"), []byte("{}"), 0o600); err != nil {
		b.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(dir, "session.json")
	turns := []any{}
	for i := range benchSessionSteps {
		turns = append(turns, map[string]any{"toolCalls": []any{toolCall(fmt.Sprintf("c%d", i), "read", "path", "a.txt")}})
	}
	data, _ := json.Marshal(map[string]any{"turns": append(turns, map[string]any{"text": "done"})})
	if err := os.WriteFile(script, data, 0o600); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	apps := make([]*app, benchSessions)
	for i := range apps {
		a, err := openApp(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		apps[i] = a
	}
	sessions := make([]string, benchSessions)
	steps := 0
	b.ResetTimer()
	started := time.Now()
	for range b.N {
		var wg sync.WaitGroup
		errs := make([]error, benchSessions)
		for i, a := range apps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range benchSessionTurns {
					sid, err := runTurn(ctx, io.Discard, a, runOptions{Prompt: "go", Model: "scripted:" + script, Dir: ws,
						Session: sessions[i], Quiet: true, Stderr: io.Discard})
					if err != nil {
						errs[i] = err
						return
					}
					sessions[i] = sid
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		steps += benchSessions * benchSessionTurns * benchSessionSteps
	}
	b.ReportMetric(float64(steps)/time.Since(started).Seconds(), "steps/s")
}

const (
	benchSessions     = 16
	benchSessionTurns = 3
	benchSessionSteps = 5
)
