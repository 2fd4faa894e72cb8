package commands_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) }

var registry = events.NewRegistry(events.AllPayloads()...)

// stack is a real SQLite event store with handlers and an in-process bus on it.
type stack struct {
	store    *sqlstore.Store
	handlers *commands.Handlers
	bus      *commands.Bus
}

func openStack(t *testing.T, path string) *stack {
	t.Helper()
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	h := commands.NewHandlers(store, registry, fixedClock{}, nil)
	bus, err := commands.StartBus(ctx, h, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{store: store, handlers: h, bus: bus}
	t.Cleanup(s.close)
	return s
}

func (s *stack) close() {
	s.bus.Close()
	s.store.Close()
}

func send(t *testing.T, s *stack, cmd any) commands.Result {
	t.Helper()
	res, err := s.bus.Send(context.Background(), cmd)
	if err != nil {
		t.Fatalf("send %T: %v", cmd, err)
	}
	return res
}

func meta(id string) commands.Meta {
	return commands.Meta{CommandID: id, Actor: "user", CorrelationID: "ses_1"}
}

func rev(n uint64) *uint64 { return &n }

func streamLen(t *testing.T, s *stack, stream string) int {
	evs, err := s.store.ReadStream(context.Background(), stream, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

func TestBusRoundTrip(t *testing.T) {
	s := openStack(t, filepath.Join(t.TempDir(), "zuno.db"))
	res := send(t, s, &commands.CreateSession{Meta: meta("c1"), Create: session.Create{SessionID: "ses_1", Title: "Fix the parser", Agent: "build"}})
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	var view commands.SessionView
	json.Unmarshal(res.View, &view)
	if view.Title != "Fix the parser" || res.Revision != 0 || res.Events != 1 || res.LastPosition == 0 {
		t.Fatalf("create result %+v view %+v", res, view)
	}
	res = send(t, s, &commands.AppendUserMessage{Meta: meta("c2"), AppendUserMessage: session.AppendUserMessage{SessionID: "ses_1", MessageID: "msg_1", Text: "hello"}})
	if res.Err() != nil || res.Revision != 1 {
		t.Fatalf("append message: %+v %v", res, res.Err())
	}
	res = send(t, s, &commands.UpdatePlan{Meta: meta("c3"), SessionID: "ses_1", Update: work.PlanUpdate{
		Action: "create", Title: "Fix", Steps: []work.StepInput{{Title: "Reproduce"}, {Title: "Patch"}}}})
	if res.Err() != nil {
		t.Fatal(res.Err())
	}
	var plan work.PlanView
	json.Unmarshal(res.View, &plan)
	if plan.Revision != 1 || len(plan.Steps) != 2 || plan.Steps[0].ID == "" {
		t.Fatalf("plan view %+v", plan)
	}

	// A refusal crosses the bus as the same typed error, and writes nothing.
	res = send(t, s, &commands.UpdatePlan{Meta: meta("c4"), SessionID: "ses_1", Update: work.PlanUpdate{
		Action: "patch", ExpectedRevision: rev(0), Title: "x"}})
	var de *domain.Error
	if !errors.As(res.Err(), &de) || de.Code() != domain.CodeStaleRevision || de.Expected != 0 || de.Current != 1 {
		t.Fatalf("stale patch: %v", res.Err())
	}
	res = send(t, s, &commands.CreateSession{Meta: meta("c5"), Create: session.Create{SessionID: "ses_1", Title: "again", Agent: "build"}})
	if !errors.As(res.Err(), &de) || de.Code() != domain.CodeSessionExists {
		t.Fatalf("second create: %v", res.Err())
	}
	if n := streamLen(t, s, commands.WorkStream("ses_1")); n != 1 {
		t.Fatalf("work stream has %d events, want 1", n)
	}
}

func TestIdempotentAcrossRedeliveryAndRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	s := openStack(t, path)
	create := &commands.CreateSession{Meta: meta("cmd-create"), Create: session.Create{SessionID: "ses_1", Title: "t", Agent: "build"}}
	first := send(t, s, create)
	plan := &commands.UpdatePlan{Meta: meta("call_plan_1"), SessionID: "ses_1", Update: work.PlanUpdate{
		Action: "create", Title: "P", Steps: []work.StepInput{{Title: "a"}}}}
	firstPlan := send(t, s, plan)
	// More work happens after the plan command, so a re-delivery meets a newer stream.
	send(t, s, &commands.UpdatePlan{Meta: meta("call_plan_2"), SessionID: "ses_1", Update: work.PlanUpdate{
		Action: "append", ExpectedRevision: rev(1), Steps: []work.StepInput{{Title: "b"}}}})

	again := send(t, s, create)
	if !again.Duplicate || again.Revision != first.Revision || again.LastPosition != first.LastPosition || again.Err() != nil {
		t.Fatalf("re-delivered create: %+v, first %+v", again, first)
	}
	againPlan := send(t, s, plan)
	if !againPlan.Duplicate || againPlan.Err() != nil || string(againPlan.View) != string(firstPlan.View) {
		t.Fatalf("re-delivered plan create: %+v (view %s), want the first view %s", againPlan, againPlan.View, firstPlan.View)
	}

	s.close()
	s = openStack(t, path)
	afterRestart := send(t, s, plan)
	if !afterRestart.Duplicate || string(afterRestart.View) != string(firstPlan.View) {
		t.Fatalf("after restart: %+v", afterRestart)
	}
	if n := streamLen(t, s, commands.WorkStream("ses_1")); n != 2 {
		t.Fatalf("work stream has %d events, want 2", n)
	}
	if n := streamLen(t, s, commands.SessionStream("ses_1")); n != 1 {
		t.Fatalf("session stream has %d events, want 1", n)
	}

	// The same id with other content is refused.
	reused := *plan
	reused.Update.Title = "Another plan"
	res := send(t, s, &reused)
	var re *commands.CommandIDReusedError
	if !errors.As(res.Err(), &re) || re.CommandID != "call_plan_1" {
		t.Fatalf("re-used id: %v", res.Err())
	}
}

// TestRacingPlanUpdates: N senders race plan_update at the same expected revision; exactly one
// wins per revision, the others get stale_revision, and no update is lost.
func TestRacingPlanUpdates(t *testing.T) {
	s := openStack(t, filepath.Join(t.TempDir(), "zuno.db"))
	// A second worker on the same store, as another process would be.
	other, err := commands.StartBus(context.Background(), s.handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	send(t, s, &commands.UpdatePlan{Meta: meta("create"), SessionID: "ses_1", Update: work.PlanUpdate{
		Action: "create", Title: "P", Steps: []work.StepInput{{ID: "s1", Title: "first"}}}})

	const racers, rounds = 12, 6
	for round := range rounds {
		expected := uint64(round + 1)
		var wins, stale atomic.Int32
		var winner atomic.Value
		var wg sync.WaitGroup
		for r := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				title := fmt.Sprintf("round %d by %d", round, r)
				cmd := &commands.UpdatePlan{Meta: meta(fmt.Sprintf("r%d-%d", round, r)), SessionID: "ses_1",
					Update: work.PlanUpdate{Action: "patch", ExpectedRevision: rev(expected),
						Patches: []work.StepPatch{{ID: "s1", Title: &title}}}}
				var (
					res commands.Result
					err error
				)
				switch r % 3 {
				case 0: // straight into the handler, as a tool executor in process would
					res, _ = s.handlers.UpdatePlan(context.Background(), cmd)
				case 1:
					res, err = s.bus.Send(context.Background(), cmd)
				default:
					res, err = other.Send(context.Background(), cmd)
				}
				var de *domain.Error
				switch {
				case err != nil:
					t.Errorf("racer %d: delivery: %v", r, err)
				case res.Err() == nil:
					wins.Add(1)
					winner.Store(title)
				case errors.As(res.Err(), &de) && de.Code() == domain.CodeStaleRevision:
					stale.Add(1)
				default:
					t.Errorf("racer %d: %v", r, res.Err())
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 || stale.Load() != racers-1 {
			t.Fatalf("round %d: %d wins, %d stale; want 1 and %d", round, wins.Load(), stale.Load(), racers-1)
		}
		st, err := s.handlers.Work(context.Background(), "ses_1")
		if err != nil {
			t.Fatal(err)
		}
		v := st.PlanView()
		if v.Revision != expected+1 || v.Steps[0].Title != winner.Load().(string) {
			t.Fatalf("round %d: plan at revision %d titled %q, want %d and the winner's %q", round, v.Revision, v.Steps[0].Title, expected+1, winner.Load())
		}
	}
	if n := streamLen(t, s, commands.WorkStream("ses_1")); n != rounds+1 {
		t.Fatalf("work stream has %d events, want %d", n, rounds+1)
	}
}

func TestMissingCommandID(t *testing.T) {
	s := openStack(t, filepath.Join(t.TempDir(), "zuno.db"))
	res := send(t, s, &commands.CreateSession{Create: session.Create{SessionID: "ses_1", Title: "t", Agent: "build"}})
	if res.Err() == nil {
		t.Fatal("a command without id was accepted")
	}
}

// TestRedeliveryAcrossLoadPages: a command whose events straddle the boundary between two
// pages of the stream load is still recognised whole when it comes back.
func TestRedeliveryAcrossLoadPages(t *testing.T) {
	defer commands.SetLoadPage(8)()
	s := openStack(t, filepath.Join(t.TempDir(), "zuno.db"))
	ctx := context.Background()
	h := s.handlers
	res, _ := h.UpdatePlan(ctx, &commands.UpdatePlan{Meta: meta("p0"), SessionID: "ses_1",
		Update: work.PlanUpdate{Action: "create", Title: "first", Steps: []work.StepInput{{Title: "a"}}}})
	if res.Err() != nil {
		t.Fatal(res.Err())
	}
	for i := range 6 { // revisions 1..6
		title := fmt.Sprint("title ", i%2)
		res, _ := h.UpdateTodos(ctx, &commands.UpdateTodos{Meta: meta(fmt.Sprintf("todo-%d", i)), SessionID: "ses_1",
			Update: work.TodoUpdate{Items: []work.TodoInput{{ID: "x", Title: &title}}}})
		if res.Err() != nil || res.Events != 1 {
			t.Fatalf("todo %d: %+v %v", i, res, res.Err())
		}
	}
	replace := &commands.UpdatePlan{Meta: meta("replace"), SessionID: "ses_1",
		Update: work.PlanUpdate{Action: "create", ExpectedRevision: rev(1), Title: "second", Steps: []work.StepInput{{Title: "b"}}}}
	first, _ := h.UpdatePlan(ctx, replace) // superseded + created: revisions 7 and 8, pages 0 and 1
	if first.Err() != nil || first.Events != 2 || first.Revision != 8 {
		t.Fatalf("replacing create: %+v %v", first, first.Err())
	}
	again, _ := h.UpdatePlan(ctx, replace)
	if !again.Duplicate || again.Events != 2 || again.Revision != 8 || string(again.View) != string(first.View) {
		t.Fatalf("re-delivered across a page boundary: %+v, first %+v", again, first)
	}
}
