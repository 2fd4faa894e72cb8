package replay

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/events"
)

// The replay's store shows another stream as it stood at the replay's point in the recorded
// run, moves that point forward as calls of a group run in parallel (-race), and never writes
// to the real log.
func TestStoreCutoff(t *testing.T) {
	ctx := context.Background()
	log := memstore.New()
	var positions []uint64
	for i := range 4 {
		ev, err := events.Encode(events.DeriveID("plan", i), events.SessionTitled{SessionID: "s", Title: fmt.Sprint(i)}, events.Metadata{CommandID: "plan"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := log.Append(ctx, "work-s", events.Any, ev)
		if err != nil {
			t.Fatal(err)
		}
		positions = append(positions, res.LastPosition)
	}
	st := &store{log: log, stream: "session-s", cutoff: positions[1],
		check: func(ev events.Event) (events.Recorded, error) {
			return events.Recorded{Event: ev, Position: positions[2]}, nil
		}}
	if recs, _ := st.ReadStream(ctx, "work-s", 0, 100); len(recs) != 1 {
		t.Fatalf("before the second work event: %d events visible, want 1", len(recs))
	}
	var wg sync.WaitGroup
	for _, p := range positions {
		wg.Go(func() { st.reached(p) })
		wg.Go(func() { _, _ = st.ReadStream(ctx, "work-s", 0, 100) })
	}
	wg.Wait()
	if recs, _ := st.ReadStream(ctx, "work-s", 0, 100); len(recs) != 3 {
		t.Fatalf("after the last call ran: %d events visible, want 3 (the last event's own position is not yet reached)", len(recs))
	}
	ev, _ := events.Encode("e1", events.SessionTitled{SessionID: "s", Title: "x"}, events.Metadata{})
	if _, err := st.Append(ctx, "session-s", events.Any, ev); err != nil {
		t.Fatal(err)
	}
	if recs, _ := st.ReadStream(ctx, "session-s", 0, 100); len(recs) != 1 || recs[0].StreamRevision != 0 {
		t.Fatalf("session copy = %+v, want the one appended event", recs)
	}
	if recs, _ := log.ReadStream(ctx, "session-s", 0, 100); len(recs) != 0 {
		t.Fatalf("the real log gained %d events", len(recs))
	}
	if _, err := st.Append(ctx, "work-s", events.Any, ev); err == nil {
		t.Fatal("an append to another stream was accepted")
	}
}
