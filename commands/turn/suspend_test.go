package turn_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// suspender runs turns of one session that suspend at their asks (docs/turns.md, "Suspended
// turns"), with a real gate that asks before every call of its probe tool.
type suspender struct {
	*harness
	probe    *probeTool
	handlers *commands.Handlers
}

func newSuspender(t *testing.T, concurrency tools.Concurrency) *suspender {
	h := newHarness(t)
	probe := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.SideEffecting, Concurrency: concurrency}}
	return &suspender{harness: h, probe: probe, handlers: commands.NewHandlers(h.store, h.registry, commands.SystemClock{}, nil)}
}

func (s *suspender) gate(t *testing.T) turn.Gate {
	t.Helper()
	policy, err := permission.Resolve([]settings.Raw{{Layer: settings.Global, Source: "test",
		JSON: json.RawMessage(`{"rules": {"look": "ask"}}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	policy = policy.WithContract(permission.NewContract("build", []string{"look"}))
	return gate.New(gate.Config{Policy: policy, Tools: []tools.Tool{s.probe}, Workspace: "/ws", Home: "/home/u", Interactive: true})
}

func (s *suspender) request(t *testing.T, meta commands.Meta, js string) turn.Request {
	return turn.Request{Meta: meta, SessionID: s.session, Text: "look", Agent: buildAgent("look"), Provider: script(t, js),
		ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{s.probe}, Gate: s.gate(t), Suspend: true,
		Inbox: commands.Inbox{Store: s.store, Registry: s.registry}}
}

func (s *suspender) answer(t *testing.T, callID, reply string) string {
	t.Helper()
	res, err := s.handlers.AnswerPermission(context.Background(), &commands.AnswerPermission{
		Meta:   commands.Meta{CommandID: "answer/" + callID, Actor: "user"},
		Answer: answers.Answer{SessionID: s.session, AskID: "ask_" + callID, CallID: callID, Reply: reply, Source: "user"}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.store.ReadStream(context.Background(), commands.InboxStream(s.session), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs[len(recs)-1].ID
}

func (s *suspender) resume(t *testing.T, turnID, trigger, js string) (turn.Outcome, error) {
	req := s.request(t, commands.Meta{CommandID: "resume-on-answer/" + trigger, Actor: "user"}, js)
	req.Text, req.Resume = "", &turn.Resume{TurnID: turnID, TriggerEventID: trigger}
	return s.driver.Run(context.Background(), req)
}

const oneLook = `{"turns":[{"toolCalls":[{"id":"c1","name":"look","arguments":{"n":1}}]}]}`
const done = `{"turns":[{"text":"done"}]}`

func TestSuspendedTurnResumesAndRunsTheAskedCallOnce(t *testing.T) {
	ctx := context.Background()
	s := newSuspender(t, tools.Exclusive)
	out, err := s.driver.Run(ctx, s.request(t, turnMeta(), oneLook))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != turn.ReasonSuspended || len(out.Awaiting) != 1 || out.Awaiting[0].AskID != "ask_c1" {
		t.Fatalf("outcome %+v (%v): want suspended, awaiting ask_c1", out, out.Err())
	}
	if got := typesOf(s.events(t)); !slices.Equal(got[len(got)-2:], []string{events.TypePermissionAsked, events.TypeTurnSuspended}) {
		t.Fatalf("the turn ends %v, want the ask then the suspension", got)
	}
	if s.probe.calls.Load() != 0 {
		t.Fatal("the asked call ran before its answer")
	}

	trigger := s.answer(t, "c1", "once")
	out, err = s.resume(t, out.TurnID, trigger, done)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != events.FinishCompleted || out.Text != "done" || out.Steps != 2 {
		t.Fatalf("resumed outcome %+v: want completed after 2 steps", out)
	}
	if n := s.probe.calls.Load(); n != 1 {
		t.Fatalf("the asked call ran %d times, want once", n)
	}
	got := typesOf(s.events(t))
	i := slices.Index(got, events.TypeTurnResumed)
	if i < 0 || got[i+1] != events.TypeToolStarted {
		t.Fatalf("events %v: want the resumption, then the call's start", got)
	}

	// The same resumption again (its id derives from the answer) answers with its first
	// outcome and runs nothing.
	again, err := s.resume(t, out.TurnID, trigger, done)
	if err != nil || !again.Duplicate || again.Reason != events.FinishCompleted {
		t.Fatalf("a re-sent resumption: %+v, %v", again, err)
	}
	if n := s.probe.calls.Load(); n != 1 {
		t.Fatalf("a re-sent resumption ran the call again (%d runs)", n)
	}
	// The turn is finished: nothing is left to resume.
	_, err = s.resume(t, out.TurnID, "other", done)
	if domain.CodeOf(err) != turn.CodeTurnNotSuspended {
		t.Fatalf("resuming a finished turn: %v, want %s", err, turn.CodeTurnNotSuspended)
	}
}

func TestResumedRejectionBlocksTheCall(t *testing.T) {
	s := newSuspender(t, tools.Exclusive)
	out, err := s.driver.Run(context.Background(), s.request(t, turnMeta(), oneLook))
	if err != nil || out.Reason != turn.ReasonSuspended {
		t.Fatal(out, err)
	}
	out, err = s.resume(t, out.TurnID, s.answer(t, "c1", "reject"), done)
	if err != nil || out.Reason != events.FinishCompleted {
		t.Fatal(out, err)
	}
	if s.probe.calls.Load() != 0 {
		t.Fatal("a rejected call ran")
	}
	if !slices.Contains(typesOf(s.events(t)), events.TypeToolBlocked) {
		t.Fatal("the rejected call was not recorded blocked")
	}
}

// A response's asks are put one at a time: each suspends the turn until it is answered; the
// calls of the group start together once all are.
func TestEachAskOfAGroupSuspendsInTurn(t *testing.T) {
	s := newSuspender(t, tools.ParallelSafe)
	two := `{"turns":[{"toolCalls":[{"id":"c1","name":"look","arguments":{"n":1}},{"id":"c2","name":"look","arguments":{"n":2}}]}]}`
	out, err := s.driver.Run(context.Background(), s.request(t, turnMeta(), two))
	if err != nil || out.Reason != turn.ReasonSuspended || out.Awaiting[0].AskID != "ask_c1" {
		t.Fatal(out, err)
	}
	out, err = s.resume(t, out.TurnID, s.answer(t, "c1", "once"), done)
	if err != nil || out.Reason != turn.ReasonSuspended || len(out.Awaiting) != 1 || out.Awaiting[0].AskID != "ask_c2" {
		t.Fatalf("after the first answer: %+v, %v; want suspended on ask_c2", out, err)
	}
	if s.probe.calls.Load() != 0 {
		t.Fatal("a call of the group started before every ask of the group was answered")
	}
	out, err = s.resume(t, out.TurnID, s.answer(t, "c2", "once"), done)
	if err != nil || out.Reason != events.FinishCompleted {
		t.Fatal(out, err)
	}
	if n := s.probe.calls.Load(); n != 2 {
		t.Fatalf("%d calls ran, want both once", n)
	}
	if got := typesOf(s.events(t)); countOf(got, events.TypeTurnSuspended) != 2 || countOf(got, events.TypeTurnResumed) != 2 {
		t.Fatalf("events %v: want two suspensions and two resumptions", got)
	}
}

func TestNewInputWhileSuspended(t *testing.T) {
	ctx := context.Background()
	s := newSuspender(t, tools.Exclusive)
	out, err := s.driver.Run(ctx, s.request(t, turnMeta(), oneLook))
	if err != nil || out.Reason != turn.ReasonSuspended {
		t.Fatal(out, err)
	}
	_, err = s.driver.Run(ctx, s.request(t, turnMeta(), done))
	if domain.CodeOf(err) != turn.CodeTurnSuspended {
		t.Fatalf("a new input while the turn is suspended: %v, want %s", err, turn.CodeTurnSuspended)
	}
	// --recover cancels the waiting call and starts the new turn.
	req := s.request(t, turnMeta(), done)
	req.ForceRecover = true
	out, err = s.driver.Run(ctx, req)
	if err != nil || out.Reason != events.FinishCompleted {
		t.Fatal(out, err)
	}
	var cancelled bool
	for _, p := range s.events(t) {
		if e, ok := p.(events.ToolSettled); ok && e.CallID == "c1" && e.Outcome == string(tools.OutcomeCancelled) {
			cancelled = true
		}
	}
	if !cancelled || s.probe.calls.Load() != 0 {
		t.Fatal("the waiting call was not cancelled, or it ran")
	}
}

// Settling (the reaction to an expired lease) leaves a suspended turn as it is.
func TestSettleLeavesASuspendedTurn(t *testing.T) {
	ctx := context.Background()
	s := newSuspender(t, tools.Exclusive)
	out, err := s.driver.Run(ctx, s.request(t, turnMeta(), oneLook))
	if err != nil || out.Reason != turn.ReasonSuspended {
		t.Fatal(out, err)
	}
	before := len(s.events(t))
	got, err := s.driver.Settle(ctx, commands.Meta{CommandID: "settle/1", Actor: "reaction"}, s.session, out.TurnID, commands.Inbox{Store: s.store, Registry: s.registry})
	if err != nil || got.Reason != turn.ReasonSuspended || len(s.events(t)) != before {
		t.Fatalf("settling a suspended turn: %+v, %v, %d new events", got, err, len(s.events(t))-before)
	}
	open, err := s.driver.Open(ctx, s.session)
	if err != nil || !open.Suspended || len(open.Awaiting) != 1 {
		t.Fatalf("open turn %+v, %v", open, err)
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}
