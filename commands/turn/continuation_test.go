package turn_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/goaltools"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// goalHarness is the driver harness with the real work and goal tools over real handlers.
type goalHarness struct {
	*harness
	handlers *commands.Handlers
	tools    []turn.Tool
}

func newGoalHarness(t *testing.T) *goalHarness {
	t.Helper()
	h := newHarness(t)
	g := &goalHarness{harness: h, handlers: commands.NewHandlers(h.store, h.registry, commands.SystemClock{}, nil)}
	for _, tl := range slices.Concat(worktools.New(g.handlers.WorkCommands()), goaltools.New(g.handlers.WorkCommands())) {
		g.tools = append(g.tools, tl)
	}
	return g
}

// createGoal creates the session's Goal owned by turnID ("" for none).
func (g *goalHarness) createGoal(t *testing.T, turnID string) {
	t.Helper()
	obj := "Ship the parser fix"
	res, err := g.handlers.UpdateGoal(context.Background(), &commands.UpdateGoal{Meta: commands.Meta{CommandID: "goal-create", Actor: "user"},
		SessionID: g.session, Update: goal.Update{TurnID: turnID, Objective: &obj}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// todos records items (id:status) in the session's todo list, as a user's zuno todo update.
func (g *goalHarness) todos(t *testing.T, id string, items ...string) {
	t.Helper()
	var in []work.TodoInput
	for _, it := range items {
		name, status, _ := strings.Cut(it, ":")
		in = append(in, work.TodoInput{ID: name, Title: &name, Status: &status})
	}
	res, err := g.handlers.UpdateTodos(context.Background(), &commands.UpdateTodos{Meta: commands.Meta{CommandID: id, Actor: "user"},
		SessionID: g.session, Update: work.TodoUpdate{Items: in}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (g *goalHarness) toolNames() []string {
	var out []string
	for _, tl := range g.tools {
		out = append(out, tl.Declaration().Name)
	}
	return out
}

func (g *goalHarness) run(t *testing.T, js string) turn.Outcome {
	t.Helper()
	out, err := g.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: g.session, Text: "work on it",
		Agent: buildAgent(g.toolNames()...), Provider: script(t, js), ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: g.tools})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (g *goalHarness) workEvents(t *testing.T) []events.Payload {
	t.Helper()
	recs, err := g.store.ReadStream(context.Background(), commands.WorkStream(g.session), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Payload
	for _, r := range recs {
		p, err := g.registry.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func (g *goalHarness) requests(t *testing.T) int {
	n := 0
	for _, p := range g.events(t) {
		if r, ok := p.(events.ProviderRequest); ok && r.Status == events.RequestStarted {
			n++
		}
	}
	return n
}

func observations(ps []events.Payload) []events.GoalProgressObserved {
	var out []events.GoalProgressObserved
	for _, p := range ps {
		if o, ok := p.(events.GoalProgressObserved); ok {
			out = append(out, o)
		}
	}
	return out
}

// An ordinary final answer ends the cycle: one request, no continuation, and the open Plan
// stays open (nothing is marked completed on the model's behalf).
func TestOrdinaryFinalEndsTheCycle(t *testing.T) {
	g := newGoalHarness(t)
	res, err := g.handlers.UpdatePlan(context.Background(), &commands.UpdatePlan{Meta: commands.Meta{CommandID: "plan", Actor: "user"},
		SessionID: g.session, Update: work.PlanUpdate{Action: work.ActionCreate, Title: "Fix", Steps: []work.StepInput{{Title: "a"}, {Title: "b"}}}})
	if err != nil || res.Error != nil {
		t.Fatal(err, res.Error)
	}
	out := g.run(t, `{"turns":[{"text":"I looked; here is my answer."},{"text":"never sent"}]}`)
	if out.Reason != events.FinishCompleted || out.Steps != 1 || g.requests(t) != 1 {
		t.Fatalf("outcome %+v, %d requests", out, g.requests(t))
	}
	st, err := g.handlers.Work(context.Background(), g.session)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.PlanView().Steps {
		if s.Status != work.StatusPending {
			t.Fatalf("step %s became %s", s.ID, s.Status)
		}
	}
	if len(observations(g.workEvents(t))) != 0 {
		t.Fatal("an ordinary final was observed as a Goal's progress")
	}
}

// An active Goal the turn owns continues after each final answer, each time after a durable
// observation; the third identical observation ends the turn with the typed no_progress.
func TestActiveGoalContinuesUntilNoProgress(t *testing.T) {
	g := newGoalHarness(t)
	g.createGoal(t, "")
	g.todos(t, "todos", "fix:pending")
	out := g.run(t, `{"turns":[{"text":"one"},{"text":"two"},{"text":"three"},{"text":"never sent"}]}`)
	if out.Reason != turn.FinishNoProgress || out.Error == nil || out.Error.Code != turn.CodeNoProgress || g.requests(t) != 3 {
		t.Fatalf("outcome %+v, %d requests", out, g.requests(t))
	}
	obs := observations(g.workEvents(t))
	if len(obs) != 3 || obs[0].Repeats != 1 || obs[2].Repeats != 3 || obs[2].Outcome != events.ProgressNoProgress ||
		obs[0].Fingerprint != obs[2].Fingerprint || obs[0].TurnID != out.TurnID {
		t.Fatalf("observations %+v", obs)
	}
	// The continuations are host messages of the turn, recorded before the requests they led to.
	recs, _ := g.store.ReadStream(context.Background(), commands.SessionStream(g.session), 0, 1000)
	hosts := 0
	for _, r := range recs {
		if r.Type == events.TypeUserMessageAppended && r.Metadata.Actor == "host" && strings.Contains(string(r.Data), "[zuno host] The Goal goal-1") {
			hosts++
		}
	}
	if hosts != 2 {
		t.Fatalf("%d host continuation messages, want 2", hosts)
	}
	// The Goal's cycle ended: its owner is cleared, and it stays active (not faked complete).
	st, _ := g.handlers.Work(context.Background(), g.session)
	if v := st.Goal().View(); v.Status != events.GoalActive || v.OwnerTurnID != "" {
		t.Fatalf("goal after no_progress %+v", v)
	}
}

// Real progress (a todo the model adds between finals) resets the count, and completing the
// Goal through goal_update ends the continuation with an ordinary completed turn.
func TestGoalContinuesWhileProgressingAndEndsWhenCompleted(t *testing.T) {
	g := newGoalHarness(t)
	g.createGoal(t, "")
	g.todos(t, "todos", "y:pending")
	out := g.run(t, `{"turns":[
		{"text":"first pass"},
		{"toolCalls":[{"id":"t1","name":"todo_update","arguments":{"items":[{"id":"y","status":"in_progress"}]}}]},
		{"text":"second pass"},
		{"toolCalls":[{"id":"t2","name":"todo_update","arguments":{"items":[{"id":"y","status":"completed"}]}},
			{"id":"g1","name":"goal_update","arguments":{"expected_revision":1,"status":"complete"}}]},
		{"text":"done"},
		{"text":"never sent"}]}`)
	if out.Reason != events.FinishCompleted || out.Text != "done" || g.requests(t) != 5 {
		t.Fatalf("outcome %+v, %d requests", out, g.requests(t))
	}
	obs := observations(g.workEvents(t))
	if len(obs) != 2 || obs[0].Repeats != 1 || obs[1].Repeats != 1 || obs[0].Fingerprint == obs[1].Fingerprint {
		t.Fatalf("observations %+v", obs)
	}
	st, _ := g.handlers.Work(context.Background(), g.session)
	if st.Goal().View().Status != events.GoalComplete {
		t.Fatalf("goal %+v", st.Goal().View())
	}
}

// An active Goal with nothing to do now (a blocked todo, a todo waiting on it) and nothing
// running does not continue: the final ends the turn without an observation.
func TestGoalWithNothingActionableEndsTheTurn(t *testing.T) {
	g := newGoalHarness(t)
	g.createGoal(t, "")
	g.todos(t, "todos", "a:blocked")
	res, err := g.handlers.UpdateTodos(context.Background(), &commands.UpdateTodos{Meta: commands.Meta{CommandID: "dep", Actor: "user"},
		SessionID: g.session, Update: work.TodoUpdate{Items: []work.TodoInput{{ID: "b", Title: ptr("b"), Dependencies: &[]string{"a"}}}}})
	if err != nil || res.Error != nil {
		t.Fatal(err, res.Error)
	}
	out := g.run(t, `{"turns":[{"text":"blocked on a"},{"text":"never sent"}]}`)
	if out.Reason != events.FinishCompleted || g.requests(t) != 1 || len(observations(g.workEvents(t))) != 0 {
		t.Fatalf("outcome %+v, %d requests", out, g.requests(t))
	}
}

func ptr[T any](v T) *T { return &v }

// A Goal owned by another turn does not continue this one.
func TestGoalOfAnotherCycleDoesNotContinue(t *testing.T) {
	g := newGoalHarness(t)
	g.createGoal(t, "turn_elsewhere")
	out := g.run(t, `{"turns":[{"text":"answer"},{"text":"never sent"}]}`)
	if out.Reason != events.FinishCompleted || g.requests(t) != 1 || len(observations(g.workEvents(t))) != 0 {
		t.Fatalf("outcome %+v, %d requests", out, g.requests(t))
	}
}

// When what remains is a job still running, the turn ends waiting_background: no polling, no
// further request.
func TestWaitingBackground(t *testing.T) {
	g := newGoalHarness(t)
	g.createGoal(t, "")
	w := commands.Writer{Store: g.store, Stream: commands.JobStream(g.session), Meta: commands.Meta{CommandID: "admit", Actor: "host"},
		Digest: "admit", Clock: commands.SystemClock{}, Revision: -1}
	if _, err := w.Append(context.Background(), events.JobAdmitted{JobState: events.JobState{JobID: "job_1", ParentSessionID: g.session,
		ChildSessionID: "ses_c", Agent: "explore", Status: events.JobRunning, ReportDelivery: events.DeliveryNextStep, LogicalKey: "lk"},
		ToolCallID: "c"}); err != nil {
		t.Fatal(err)
	}
	out := g.run(t, `{"turns":[{"text":"waiting for the job"},{"text":"never sent"}]}`)
	if out.Reason != turn.FinishWaitingBackground || out.Error != nil || g.requests(t) != 1 {
		t.Fatalf("outcome %+v, %d requests", out, g.requests(t))
	}
	if obs := observations(g.workEvents(t)); len(obs) != 1 || obs[0].Outcome != events.ProgressWaitingBackground {
		t.Fatalf("observations %+v", obs)
	}
}

// failingWork fails every read of a work stream once armed.
type failingWork struct {
	commands.EventStore
	armed atomic.Bool
}

func (f *failingWork) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if f.armed.Load() && strings.HasPrefix(stream, "work-") {
		return nil, errors.New("disk gone")
	}
	return f.EventStore.ReadStream(ctx, stream, from, limit)
}

// armTool arms the failing store when called: the work state changes (a plan_update would)
// and the next refresh cannot read it.
type armTool struct {
	probeTool
	store *failingWork
}

func (a *armTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a.store.armed.Store(true)
	return a.probeTool.Execute(ctx, inv)
}

// A refresh that fails after a work mutation stops the turn before the next request, with
// a typed error: no request goes out with a snapshot known to be stale.
func TestFailedRefreshStopsBeforeTheRequest(t *testing.T) {
	g := newGoalHarness(t)
	fs := &failingWork{EventStore: g.store}
	g.driver.Store = fs
	arm := &armTool{probeTool: probeTool{name: "arm"}, store: fs}
	out, err := g.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: g.session, Text: "go", Agent: buildAgent("arm"),
		Provider:     script(t, `{"turns":[{"toolCalls":[{"id":"a","name":"arm","arguments":{"n":1}}]},{"text":"never sent"}]}`),
		ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{arm}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != events.FinishFailed || out.Error == nil || out.Error.Code != turn.CodeWorkStateUnavailable || g.requests(t) != 1 {
		t.Fatalf("outcome %+v, %d requests", out, g.requests(t))
	}
}
