package commands_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/lease"
	"github.com/zuno-run/zuno/events"
)

// A Held lease spares the read before each decision while it is current, and a stale one
// (something else landed in the lease stream) never decides wrongly: the append conflicts and
// the command decides again on what the stream holds.
func TestLeasesHeld(t *testing.T) {
	ctx := context.Background()
	s := openStack(t, filepath.Join(t.TempDir(), "events.db"))
	leases := func(holder string) *commands.Leases {
		return &commands.Leases{Store: s.store, Registry: registry, Clock: fixedClock{}, Holder: holder, TTL: time.Minute}
	}
	a, b := leases("a"), leases("b")
	types := func(turn string) []string {
		recs, err := s.store.ReadStream(ctx, commands.LeaseStream(turn), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.Type)
		}
		return out
	}
	code := func(err error) string {
		var de *domain.Error
		if errors.As(err, &de) {
			return de.Code()
		}
		return ""
	}

	t.Run("current", func(t *testing.T) {
		counted := &countingStore{EventStore: s.store}
		a := &commands.Leases{Store: counted, Registry: registry, Clock: fixedClock{}, Holder: "a", TTL: time.Minute}
		held := commands.NewLease()
		if err := a.Take(ctx, "ses_1", "turn_1", "cmd_1", false, held); err != nil {
			t.Fatal(err)
		}
		if err := a.Renew(ctx, "ses_1", "turn_1", "cmd_1", 1, held); err != nil {
			t.Fatal(err)
		}
		if err := a.Release(ctx, "ses_1", "turn_1", "cmd_1", held); err != nil {
			t.Fatal(err)
		}
		if counted.reads != 0 {
			t.Fatalf("%d reads of the lease stream, want none while the Held is current", counted.reads)
		}
		want := []string{events.TypeTurnLeased, events.TypeTurnLeased, events.TypeTurnLeaseReleased}
		if got := types("turn_1"); !slices.Equal(got, want) {
			t.Fatalf("lease stream %v, want %v", got, want)
		}
	})

	t.Run("a new turn whose stream exists after all reads it", func(t *testing.T) {
		if err := a.Take(ctx, "ses_1", "turn_2", "cmd_2", false, commands.NewLease()); err != nil {
			t.Fatal(err)
		}
		// b believes the turn is new: the append conflicts, and on the stream as it is, a's
		// live lease refuses b.
		if err := b.Take(ctx, "ses_1", "turn_2", "cmd_3", false, commands.NewLease()); code(err) != lease.CodeLeaseHeld {
			t.Fatalf("take over a live lease with a stale Held = %v, want %s", err, lease.CodeLeaseHeld)
		}
	})

	t.Run("stale after an interrupt", func(t *testing.T) {
		held := commands.NewLease()
		if err := a.Take(ctx, "ses_1", "turn_3", "cmd_4", false, held); err != nil {
			t.Fatal(err)
		}
		if res, err := s.handlers.InterruptTurn(ctx, &commands.InterruptTurn{Meta: commands.Meta{CommandID: "int_1"},
			SessionID: "ses_1", TurnID: "turn_3"}); err != nil || res.Err() != nil {
			t.Fatal(err, res.Err())
		}
		if err := a.Release(ctx, "ses_1", "turn_3", "cmd_4", held); err != nil {
			t.Fatal(err)
		}
		want := []string{events.TypeTurnLeased, events.TypeTurnInterruptRequested, events.TypeTurnLeaseReleased}
		if got := types("turn_3"); !slices.Equal(got, want) {
			t.Fatalf("lease stream %v, want %v", got, want)
		}
	})

	t.Run("stale after a takeover", func(t *testing.T) {
		held := commands.NewLease()
		if err := a.Take(ctx, "ses_1", "turn_4", "cmd_5", false, held); err != nil {
			t.Fatal(err)
		}
		if err := b.Take(ctx, "ses_1", "turn_4", "cmd_6", true, nil); err != nil { // --recover
			t.Fatal(err)
		}
		if err := a.Renew(ctx, "ses_1", "turn_4", "cmd_5", 1, held); code(err) != lease.CodeLeaseLost {
			t.Fatalf("renew of a lease taken over, with a stale Held = %v, want %s", err, lease.CodeLeaseLost)
		}
		// a's release after losing the lease gives back nothing of b's.
		if err := a.Release(ctx, "ses_1", "turn_4", "cmd_5", held); err != nil {
			t.Fatal(err)
		}
		want := []string{events.TypeTurnLeased, events.TypeTurnLeased}
		if got := types("turn_4"); !slices.Equal(got, want) {
			t.Fatalf("lease stream %v, want %v", got, want)
		}
	})
}

// countingStore counts the reads of streams.
type countingStore struct {
	commands.EventStore
	reads int
}

func (c *countingStore) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	c.reads++
	return c.EventStore.ReadStream(ctx, stream, from, limit)
}
