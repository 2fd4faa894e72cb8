package bus_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/adapters/bus"
	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/events"
)

// BenchmarkCommandRoundTrip: a command sent to a worker in another transport and its reply,
// on the real Postgres, without the bus metrics (the baseline) and with them (each delivery
// recorded in zuno_bus_deliveries, and the queue depth read once per 100 commands, as a
// scrape would).
func BenchmarkCommandRoundTrip(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "baseline"
		if withMetrics {
			name = "metrics"
		}
		b.Run(name, func(b *testing.B) {
			url := pgtest.NewDatabase(b)
			ctx := context.Background()
			cfg := bus.Config{}
			if withMetrics {
				cfg.Metrics = bus.NewMetrics(nil)
			}
			worker := benchTransport(b, url, cfg)
			store, err := sqlstore.OpenPostgres(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			handlers := commands.NewHandlers(store, events.NewRegistry(events.AllPayloads()...), commands.SystemClock{}, nil)
			wt := worker.Transport()
			wt.NoWorkerAfter = 0
			wbus, err := commands.StartBus(ctx, handlers, wt, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer wbus.Close()
			sender := benchTransport(b, url, cfg)
			st := sender.Transport()
			st.NoWorkerAfter = 0
			sbus, err := commands.StartBus(ctx, nil, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				id := fmt.Sprintf("ses_%d", i)
				res, err := sbus.Send(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: "c-" + id, Actor: "user"},
					Create: session.Create{SessionID: id, Title: "t", Agent: "build"}})
				if err != nil || res.Err() != nil {
					b.Fatal(err, res.Err())
				}
				if withMetrics && i%100 == 0 {
					if _, err := sender.QueueDepth(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func benchTransport(b *testing.B, url string, cfg bus.Config) *bus.Postgres {
	db, err := sql.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxIdleConns(16) // as the application's bus database keeps (cmd/zuno, busIdleConns)
	p, err := bus.NewPostgres(context.Background(), db, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(); db.Close() })
	return p
}
