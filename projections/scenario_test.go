package projections_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// appender is the part of an event store the scenario writes through.
type appender interface {
	Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.Event) (events.AppendResult, error)
}

// scenario writes realistic sessions: each created, titled, given messages, a plan that is
// created, patched, appended to, pushed and popped, and todo items with dependencies. Events
// are decided by the real aggregates, so every event is one the runtime could produce.
func scenario(t testing.TB, store appender, sessions int) int {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	written := 0
	for s := range sessions {
		id := fmt.Sprintf("ses_%04d", s)
		var sst session.State
		var wst work.State
		sessionRev, workRev := int64(-1), int64(-1)
		step := 0
		emit := func(stream string, rev *int64, payloads []events.Payload, err error, evolve func(events.Payload) error) {
			t.Helper()
			if err != nil {
				t.Fatalf("scenario %s: %v", id, err)
			}
			cmd := fmt.Sprintf("%s/cmd-%d", id, step)
			step++
			md := events.Metadata{CommandID: cmd, Actor: "user", CorrelationID: id, Time: base.Add(time.Duration(written) * time.Millisecond)}
			evs := make([]events.Event, len(payloads))
			for i, p := range payloads {
				ev, err := events.Encode(events.DeriveID(cmd, i), p, md)
				if err != nil {
					t.Fatal(err)
				}
				evs[i] = ev
				if err := evolve(p); err != nil {
					t.Fatal(err)
				}
			}
			exp := events.NoStream
			if *rev >= 0 {
				exp = events.Exact(uint64(*rev))
			}
			if _, err := store.Append(ctx, stream, exp, evs...); err != nil {
				t.Fatalf("scenario append: %v", err)
			}
			*rev += int64(len(evs))
			written += len(evs)
		}
		sess := func(c session.Command) {
			p, err := session.Decide(&sst, c)
			emit("session-"+id, &sessionRev, p, err, sst.Evolve)
		}
		wk := func(c work.Command) {
			p, err := work.Decide(&wst, c)
			emit("work-"+id, &workRev, p, err, wst.Evolve)
		}
		r := func() *uint64 { v := wst.PlanRevision(); return &v }
		str := func(s string) *string { return &s }

		sess(session.Create{SessionID: id, Title: "Session " + id, Agent: "build"})
		sess(session.AppendUserMessage{SessionID: id, MessageID: "msg_1", Text: "fix the parser"})
		sess(session.SetTitle{SessionID: id, Title: "Fix the parser " + id})
		wk(work.PlanUpdate{SessionID: id, Action: work.ActionCreate, Title: "Fix",
			Steps: []work.StepInput{{Title: "Reproduce"}, {Title: "Patch"}}})
		plan := wst.PlanView()
		wk(work.PlanUpdate{SessionID: id, Action: work.ActionPatch, ExpectedRevision: r(),
			Patches: []work.StepPatch{{ID: plan.Steps[0].ID, Status: str(work.StatusCompleted)}}})
		wk(work.PlanUpdate{SessionID: id, Action: work.ActionAppend, ExpectedRevision: r(),
			Steps: []work.StepInput{{Title: "Verify"}}})
		wk(work.TodoUpdate{SessionID: id, Items: []work.TodoInput{
			{ID: "t1", Title: str("write failing test")},
			{ID: "t2", Title: str("fix"), Dependencies: &[]string{"t1"}, Owner: str("build")},
		}})
		wk(work.TodoUpdate{SessionID: id, Items: []work.TodoInput{{ID: "t1", Status: str("completed")}}})
		if s%2 == 0 {
			wk(work.PlanUpdate{SessionID: id, Action: work.ActionPush, ExpectedRevision: r(), Title: "Dig",
				Steps: []work.StepInput{{Title: "Bisect"}}})
			wk(work.PlanUpdate{SessionID: id, Action: work.ActionPop, ExpectedRevision: r()})
		}
		if s%3 == 0 {
			wk(work.PlanUpdate{SessionID: id, Action: work.ActionCreate, ExpectedRevision: r(), Title: "New goal",
				Steps: []work.StepInput{{Title: "Start over"}}})
		}
		sess(session.AppendUserMessage{SessionID: id, MessageID: "msg_2", Text: "thanks"})
	}
	return written
}
