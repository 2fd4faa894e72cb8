package commands_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/memory"
)

// memoryStores are the real event stores the memory's revision races run on.
var memoryStores = map[string]func(t *testing.T) *sqlstore.Store{
	"sqlite": func(t *testing.T) *sqlstore.Store {
		s, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "zuno.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	},
	"postgres": func(t *testing.T) *sqlstore.Store {
		s, err := sqlstore.OpenPostgres(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	},
}

// Racing memory updates (docs/memory.md): every round, racers update the memory against the
// same revision, from two handler sets on one store as two processes would; exactly one is
// applied and every other is stale_revision naming the current revision, never a lost update.
// Under review, racing approvals of proposals against one revision apply one.
func TestMemoryRevisionRaces(t *testing.T) {
	for name, open := range memoryStores {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			defer store.Close()
			a := commands.NewHandlers(store, registry, fixedClock{}, nil)
			b := commands.NewHandlers(store, registry, fixedClock{}, nil)
			ctx := context.Background()
			const racers, rounds = 8, 4
			for round := range rounds {
				var wins, stale atomic.Int32
				var wg sync.WaitGroup
				for r := range racers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						h := a
						if r%2 == 1 {
							h = b
						}
						res, err := h.UpdateMemory(ctx, &commands.UpdateMemory{Meta: meta(fmt.Sprintf("u%d-%d", round, r)),
							Update: memory.Update{Scope: "p", ExpectedRevision: uint64(round), Content: fmt.Sprintf("round %d by %d", round, r),
								SessionID: "ses_1", CallID: fmt.Sprintf("c%d-%d", round, r)}})
						var de *domain.Error
						switch {
						case err != nil:
							t.Errorf("racer %d: %v", r, err)
						case res.Err() == nil:
							wins.Add(1)
						case errors.As(res.Err(), &de) && de.Code() == domain.CodeStaleRevision && de.Current == uint64(round+1):
							stale.Add(1)
						default:
							t.Errorf("racer %d: %v", r, res.Err())
						}
					}()
				}
				wg.Wait()
				if wins.Load() != 1 || stale.Load() != racers-1 {
					t.Fatalf("round %d: %d applied, %d stale; want 1 and %d", round, wins.Load(), stale.Load(), racers-1)
				}
			}
			st, err := a.Memory(ctx, "p")
			if err != nil || st.Revision != rounds {
				t.Fatalf("memory at revision %d (%v), want %d", st.Revision, err, rounds)
			}

			// Review: proposals against one revision; racing approvals apply exactly one.
			var ids []string
			for r := range racers {
				res, err := a.UpdateMemory(ctx, &commands.UpdateMemory{Meta: meta(fmt.Sprintf("p%d", r)), Update: memory.Update{Scope: "p",
					ExpectedRevision: rounds, Content: fmt.Sprintf("proposal %d", r), Review: memory.ReviewApprove, SessionID: "ses_1", CallID: fmt.Sprintf("p%d", r)}})
				if err != nil || res.Err() != nil {
					t.Fatalf("propose %d: %v %v", r, err, res.Err())
				}
				ids = append(ids, memory.ProposalID("p", "ses_1", fmt.Sprintf("p%d", r)))
			}
			var applied atomic.Int32
			var wg sync.WaitGroup
			for r, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := a
					if r%2 == 1 {
						h = b
					}
					res, err := h.ReviewMemory(ctx, &commands.ReviewMemory{Meta: meta("approve-" + id), Review: memory.Review{Scope: "p", ProposalID: id, Approve: true}})
					switch {
					case err != nil:
						t.Errorf("approve %s: %v", id, err)
					case res.Err() == nil:
						applied.Add(1)
					case domain.CodeOf(res.Err()) != domain.CodeStaleRevision:
						t.Errorf("approve %s: %v", id, res.Err())
					}
				}()
			}
			wg.Wait()
			st, err = a.Memory(ctx, "p")
			if applied.Load() != 1 || err != nil || st.Revision != rounds+1 || len(st.Pending()) != racers-1 {
				t.Fatalf("%d approvals applied, revision %d, %d pending (%v); want 1, %d, %d", applied.Load(), st.Revision, len(st.Pending()), err, rounds+1, racers-1)
			}
		})
	}
}
