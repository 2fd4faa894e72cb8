package verify_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/verify"
)

// TestNoFalsePositives writes 1,000 sessions of mixed shape (0 to 6 messages, with and without
// a plan and todos) through the real command handlers, from 8 goroutines so appends interleave
// and group-commit, and verifies the whole log, each session alone, and the read models.
func TestNoFalsePositives(t *testing.T) {
	const sessions, writers = 1000, 8
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.open(t)
			h := commands.NewHandlers(d.store, registry, clock{}, nil)
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < sessions; i += writers {
						seedSession(t, h, fmt.Sprintf("ses_%04d", i), i%7, i%3 == 0)
					}
				}()
			}
			wg.Wait()
			ctx := context.Background()
			rep, err := verify.Chain(ctx, d.store, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Faults) != 0 || rep.Streams != sessions+sessions/3+1 {
				t.Fatalf("%d streams, faults %+v", rep.Streams, rep.Faults[:min(3, len(rep.Faults))])
			}
			again, err := verify.Chain(ctx, d.store, verify.Options{Anchored: rep.Heads})
			if err != nil || len(again.Faults) != 0 {
				t.Fatalf("against its own anchor: %v %+v", err, again.Faults)
			}
			for i := 0; i < sessions; i += 37 {
				id := fmt.Sprintf("ses_%04d", i)
				one, err := verify.Chain(ctx, d.store, verify.Options{Anchored: rep.Heads,
					Streams: []string{commands.SessionStream(id), commands.WorkStream(id), commands.InboxStream(id)}})
				if err != nil || len(one.Faults) != 0 {
					t.Fatalf("session %s: %v %+v", id, err, one.Faults)
				}
			}
			if got := drift(t, d); len(got) != 0 {
				t.Fatalf("untouched read models drift: %+v", got[:min(3, len(got))])
			}
		})
	}
}
