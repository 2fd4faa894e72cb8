package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/events"
)

// A replayed turn may append to another stream only what the recorded run wrote there after
// the replay's point (the plan classifier's seed): it is not written, the point moves past
// it, and anything else is refused.
func TestHostWriteMatchesTheRecordedRun(t *testing.T) {
	ctx := context.Background()
	log := memstore.New()
	seed := events.WorkPlanCreated{SessionID: "s", Revision: 1, WorkPlan: events.WorkPlan{PlanID: "plan-1", Title: "T", Status: "in_progress",
		Steps: []events.WorkPlanStep{{ID: "step-1", Title: "a", Status: "pending"}}, Origin: "host"}}
	ev, err := events.Encode(events.DeriveID("plan-classifier/turn_1", 0), seed, events.Metadata{CommandID: "plan-classifier/turn_1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := log.Append(ctx, "work-s", events.NoStream, ev)
	if err != nil {
		t.Fatal(err)
	}
	st := &store{log: log, stream: "session-s", cutoff: res.LastPosition}
	if recs, _ := st.ReadStream(ctx, "work-s", 0, 100); len(recs) != 0 {
		t.Fatalf("the seed is visible before the replay reached it: %d", len(recs))
	}
	// The same decision, encoded again (new metadata, same id, type and data): accepted.
	again, _ := events.Encode(ev.ID, seed, events.Metadata{CommandID: "plan-classifier/turn_1", Actor: "host"})
	if _, err := st.Append(ctx, "work-s", events.NoStream, again); err != nil {
		t.Fatal(err)
	}
	if recs, _ := st.ReadStream(ctx, "work-s", 0, 100); len(recs) != 1 {
		t.Fatalf("after the seed: %d work events visible, want 1", len(recs))
	}
	if recs, _ := log.ReadStream(ctx, "work-s", 0, 100); len(recs) != 1 {
		t.Fatalf("the real log has %d work events, want the recorded one", len(recs))
	}
	// A different seed (another title) is a difference, not a write.
	other := seed
	other.Title = "Other"
	diff, _ := events.Encode(ev.ID, other, events.Metadata{})
	if _, err := st.Append(ctx, "work-s", events.NoStream, diff); err == nil || !strings.Contains(err.Error(), "did not") {
		t.Fatalf("a different seed: %v", err)
	}
}
