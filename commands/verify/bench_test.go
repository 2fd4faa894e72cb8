package verify_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// fill appends sessions of 10 events each (created, 9 user messages), 10 events per append,
// through the store's real append path (hash chain included).
func fill(b *testing.B, d *db, sessions int) int {
	b.Helper()
	ctx := context.Background()
	md := events.Metadata{Actor: "user", Time: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	for i := range sessions {
		id := fmt.Sprintf("ses_%06d", i)
		md.CommandID, md.CorrelationID = "fill/"+id, id
		payloads := []events.Payload{events.SessionCreated{SessionID: id, Title: "bench " + id, Agent: "build"}}
		for m := range 9 {
			payloads = append(payloads, events.UserMessageAppended{SessionID: id, MessageID: fmt.Sprintf("msg_%d", m), Text: fmt.Sprintf("message %d of %s", m, id)})
		}
		evs := make([]events.Event, len(payloads))
		for j, p := range payloads {
			ev, err := events.Encode(events.DeriveID(md.CommandID, j), p, md)
			if err != nil {
				b.Fatal(err)
			}
			evs[j] = ev
		}
		if _, err := d.store.Append(ctx, "session-"+id, events.NoStream, evs...); err != nil {
			b.Fatal(err)
		}
	}
	return sessions * 10
}

// BenchmarkVerify walks the hash chains of about 100,000 events (`zuno verify`'s chain walk)
// and, in the same run and database, rebuilds every read model from them: the goal is a
// verify rate at least the rebuild rate.
func BenchmarkVerify(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			d := be.open(b)
			n := fill(b, d, 10_000)
			ctx := context.Background()
			b.Run("verify-chain", func(b *testing.B) {
				start := time.Now()
				for range b.N {
					rep, err := verify.Chain(ctx, d.store, verify.Options{})
					if err != nil || len(rep.Faults) != 0 || rep.Events != uint64(n) {
						b.Fatalf("verified %d of %d events: %v %+v", rep.Events, n, err, rep.Faults)
					}
				}
				b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "events/s")
			})
			b.Run("rebuild", func(b *testing.B) {
				runner := projections.NewRunner(d.rm.Writer, d.store, registry, projections.All())
				start := time.Now()
				for range b.N {
					if got, err := runner.Rebuild(ctx); err != nil || got != n {
						b.Fatalf("rebuilt %d of %d events: %v", got, n, err)
					}
				}
				b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "events/s")
			})
		})
	}
}
