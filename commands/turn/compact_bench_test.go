package turn_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// BenchmarkCompactingSession runs a 1,000-step session on a real SQLite store twice in the
// same run: with no known context window (the baseline: the conversation grows with every
// step) and with a window of 4,000 tokens, which the transcript outgrows many times, so the
// turn compacts (docs/compaction.md). It reports the wall time per step over the whole
// session and over its last 100 steps, and the compactions: a compaction's extra request is
// paid every few dozen steps, and in exchange each later step assembles a short
// conversation.
func BenchmarkCompactingSession(b *testing.B) {
	for _, c := range []struct {
		name   string
		window int64
	}{{"unbounded", 0}, {"window-4000", 4000}} {
		b.Run(c.name, func(b *testing.B) {
			var total, late time.Duration
			var compactions, runs int
			for b.Loop() {
				all, last, k := compactingSession(b, c.window)
				total, late, compactions, runs = total+all, late+last, compactions+k, runs+1
			}
			b.ReportMetric(float64(total.Microseconds())/float64(runs*benchSteps), "µs/step")
			b.ReportMetric(float64(late.Microseconds())/float64(runs*100), "µs/step@901-1000")
			b.ReportMetric(float64(compactions)/float64(runs), "compactions")
		})
	}
}

// compactingSession runs one session of benchSteps tool steps and returns its wall time, the
// wall time of its last 100 steps and how many compactions it recorded.
func compactingSession(b *testing.B, window int64) (time.Duration, time.Duration, int) {
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "events.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	reg := events.NewRegistry(events.AllPayloads()...)
	handlers := commands.NewHandlers(store, reg, commands.SystemClock{}, nil)
	if _, err := handlers.CreateSession(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: "c", Actor: "user"},
		Create: sessionCreate("ses_bench")}); err != nil {
		b.Fatal(err)
	}
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	p := &lateTimer{Provider: scriptedSteps(b, benchSteps), from: benchSteps - 99}
	begun := time.Now()
	d := &turn.Driver{Store: store, Registry: reg, Clock: commands.SystemClock{}}
	out, err := d.Run(ctx, turn.Request{Meta: turnMeta(), SessionID: "ses_bench", Text: "loop", Agent: buildAgent("look"), Provider: p,
		ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted", ContextWindow: window}, Tools: []turn.Tool{look}})
	if err != nil || out.Steps != benchSteps+1 {
		b.Fatalf("outcome %+v %v", out, err)
	}
	all := time.Since(begun)
	recs, err := store.ReadStream(ctx, commands.SessionStream("ses_bench"), 0, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	k := 0
	for _, r := range recs {
		if r.Type == events.TypeTranscriptCompacted {
			k++
		}
	}
	return all, time.Since(p.lateStart), k
}

// lateTimer notes when the request of the model's step `from` starts (compaction requests,
// answered without a turn of the script, are not counted).
type lateTimer struct {
	model.Provider
	from, seen int
	lateStart  time.Time
}

func (p *lateTimer) Stream(ctx context.Context, req model.Request) model.Stream {
	if last := req.Messages[len(req.Messages)-1]; last.Role != model.RoleDeveloper {
		p.seen++
		if p.seen == p.from {
			p.lateStart = time.Now()
		}
	}
	return p.Provider.Stream(ctx, req)
}
