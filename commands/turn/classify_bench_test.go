package turn_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// BenchmarkClassifiedTurn is one answered turn of a new session on a real SQLite store, with
// the work tools offered: "atomic" (a one-line request: the classifier writes nothing) is the
// baseline of "seeded" (a multi-line request: the opening is committed first and the agent's
// light plan written before the request, which then carries it). The difference is the
// classifier's cost per planned turn (docs/plan-classifier.md).
func BenchmarkClassifiedTurn(b *testing.B) {
	for _, c := range []struct{ name, text string }{{"atomic", "Reply with exactly: done"}, {"seeded", multiStage}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			store, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "events.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			reg := events.NewRegistry(events.AllPayloads()...)
			handlers := commands.NewHandlers(store, reg, commands.SystemClock{}, nil)
			d := &turn.Driver{Store: store, Registry: reg, Clock: commands.SystemClock{}}
			a := buildAgent(tools.NamePlanGet, tools.NamePlanUpdate, tools.NameTodoGet, tools.NameTodoUpdate)
			work := worktools.New(handlers)
			b.ResetTimer()
			for i := range b.N {
				sid := fmt.Sprintf("ses_%s_%d", c.name, i)
				if _, err := handlers.CreateSession(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: sid, Actor: "user"},
					Create: sessionCreate(sid)}); err != nil {
					b.Fatal(err)
				}
				p, err := scripted.Parse("bench", []byte(`{"turns":[{"text":"done"}]}`))
				if err != nil {
					b.Fatal(err)
				}
				out, err := d.Run(ctx, turn.Request{Meta: turnMeta(), SessionID: sid, Text: c.text, Agent: a, Provider: p,
					ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: work})
				if err != nil || out.Reason != events.FinishCompleted {
					b.Fatalf("%+v %v", out, err)
				}
			}
		})
	}
}
