package turn

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// callRun is one model response's tool calls on their way through the scheduler, the gate and
// execution.
type callRun struct {
	requestID string
	plan      tools.Plan
	verdicts  []Verdict // by entry index; zero when there is no gate
	recorded  []bool    // blocked entries already recorded
}

// stageReceipt records a shell call's verification receipt just before the call settles, in
// the same append, so a settled shell call and its receipt are never apart in the log.
func (r *run) stageReceipt(rc *events.VerificationReceipt) error {
	if rc == nil {
		return nil
	}
	p := *rc
	p.SessionID, p.TurnID = r.req.SessionID, r.turnID
	return r.stage(p)
}

// runCalls schedules the calls, records blocked ones as results, and runs the groups one after
// another, the calls of a group in parallel. A call the gate asks about waits for its answer
// before its group starts. Starts are durable before execution; results are recorded in model
// order.
func (r *run) runCalls(ctx context.Context, requestID string, calls []model.ToolCall) error {
	return r.runCallsExcept(ctx, requestID, calls, nil)
}

// runCallsExcept is runCalls over a response some of whose calls have a result already
// (settled: a resumed turn's earlier groups, its blocked calls): the schedule is the
// response's, as when it arrived, and the settled calls are left out of it.
func (r *run) runCallsExcept(ctx context.Context, requestID string, calls []model.ToolCall, settled map[string]bool) error {
	cr := &callRun{requestID: requestID, verdicts: make([]Verdict, len(calls))}
	validate := func(call model.ToolCall, decl tools.Declaration) (tools.Parsed, error) {
		return r.tools[decl.Name].Validate(json.RawMessage(call.Arguments))
	}
	var gate tools.Gate
	if r.req.Gate != nil {
		gate = func(c tools.Call) *tools.Block {
			v := r.req.Gate.Check(c)
			cr.verdicts[c.Index] = v
			return v.Block
		}
	}
	plan, err := tools.Schedule(r.registry, calls, validate, gate, r.req.ToolCalls)
	if err != nil {
		return err // call ids were checked when the response arrived, so this is a bug
	}
	cr.plan, cr.recorded = plan, make([]bool, len(plan.Entries))
	for i, e := range plan.Entries {
		cr.recorded[i] = settled[e.Call.Call.ID] // its result is in the log: never recorded again
	}
	for gi, g := range plan.Groups {
		if ctx.Err() != nil {
			break
		}
		if g.Calls = cr.unsettled(g.Calls, settled); len(g.Calls) == 0 {
			continue
		}
		if err := r.block(cr, g.Calls[0]); err != nil {
			return err
		}
		admitted, err := r.askGroup(ctx, cr, g.Calls)
		if err != nil {
			return err
		}
		if len(admitted) == 0 {
			continue
		}
		g.Calls = admitted
		if err := r.startGroup(ctx, cr, gi, g); err != nil {
			return err
		}
		results := r.execute(ctx, cr, g)
		for k, ci := range g.Calls {
			if err := r.block(cr, ci); err != nil {
				return err
			}
			e, res := plan.Entries[ci], results[k]
			if err := r.stageReceipt(res.Receipt); err != nil {
				return err
			}
			if err := r.stage(events.ToolSettled{SessionID: r.req.SessionID, TurnID: r.turnID, RequestID: requestID,
				CallID: e.Call.Call.ID, Tool: e.Decl.Name, Outcome: string(res.Outcome), ErrorCode: res.ErrorCode,
				Output: res.Output, Metadata: res.Metadata, DurationMs: res.durationMs}); err != nil {
				return err
			}
		}
	}
	// Blocked calls are results whatever happened to the groups (nothing ran for them); after
	// a cancellation the next step settles the calls that never started as cancelled.
	return r.block(cr, len(plan.Entries))
}

// block records the blocked entries before index upTo that are not recorded yet, in model order.
func (r *run) block(cr *callRun, upTo int) error {
	for i := 0; i < upTo && i < len(cr.plan.Entries); i++ {
		e := cr.plan.Entries[i]
		if e.Blocked == nil || cr.recorded[i] {
			continue
		}
		cr.recorded[i] = true
		ev := blockedEvent(r.req.SessionID, r.turnID, cr.requestID, e)
		if d := cr.verdicts[i].Decision; d.Action != "" {
			ev.Permission = &d
		}
		if err := r.stage(ev); err != nil {
			return err
		}
	}
	return nil
}

// askGroup puts the group's asks, in model order, and waits for each answer in the session's
// inbox. It returns the calls that may start; a rejected call becomes a blocked entry. A
// cancelled wait returns the calls answered so far: the rest never start and are settled
// cancelled like any call a cancellation cut off.
func (r *run) askGroup(ctx context.Context, cr *callRun, calls []int) ([]int, error) {
	admitted := make([]int, 0, len(calls))
	for _, ci := range calls {
		v := cr.verdicts[ci]
		if v.Ask == nil {
			admitted = append(admitted, ci)
			continue
		}
		e := cr.plan.Entries[ci]
		ask := *v.Ask
		ask.SessionID, ask.TurnID, ask.RequestID, ask.CallID = r.req.SessionID, r.turnID, cr.requestID, e.Call.Call.ID
		ask.AskID = "ask_" + e.Call.Call.ID
		if !r.asked(ask.CallID) { // a resumed turn asked before it suspended
			if err := r.stage(ask); err != nil {
				return nil, err
			}
			if err := r.commit(ctx); err != nil {
				return nil, err
			}
		}
		answer, err := r.answer(ctx, ask)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, err
		}
		v = r.req.Gate.Answer(e.Call, v, answer.Reply)
		v.Decision.AskID = ask.AskID
		cr.verdicts[ci] = v
		if err := r.stageGrants(ask, v.Grants); err != nil {
			return nil, err
		}
		if v.Block != nil {
			cr.plan.Entries[ci].Blocked = v.Block
			continue
		}
		admitted = append(admitted, ci)
	}
	return admitted, nil
}

// stageGrants records what an "always" answer installed, before the call starts: staging
// folds it into the gate for the rest of the turn, and the log carries it to every later turn
// of the session, in whichever process it runs (docs/permissions.md, "Standing approvals").
func (r *run) stageGrants(ask events.PermissionAsked, grants []events.StandingGrant) error {
	if len(grants) == 0 {
		return nil
	}
	return r.stage(events.PermissionGranted{SessionID: r.req.SessionID, TurnID: r.turnID, RequestID: ask.RequestID,
		CallID: ask.CallID, AskID: ask.AskID, Grants: grants})
}

// startGroup records the start of each call of a group (with who allowed it and how it is
// confined) and makes the starts durable before anything runs.
func (r *run) startGroup(ctx context.Context, cr *callRun, gi int, g tools.Group) error {
	for _, ci := range g.Calls {
		e, v := cr.plan.Entries[ci], cr.verdicts[ci]
		started := events.ToolStarted{SessionID: r.req.SessionID, TurnID: r.turnID, RequestID: cr.requestID,
			CallID: e.Call.Call.ID, Tool: e.Decl.Name, Action: e.Action, Group: gi,
			SideEffect: e.Policy.SideEffect.String(), Replay: e.Policy.Replay.String(),
			Concurrency: e.Policy.Concurrency.String(), Sandbox: v.Sandbox}
		if v.Decision.Action != "" {
			d := v.Decision
			started.Permission = &d
		}
		if w, ok := r.tools[e.Decl.Name].(tools.EnvWithholder); ok {
			started.WithheldEnv = w.WithheldEnv()
		}
		if err := r.stage(started); err != nil {
			return err
		}
	}
	return r.commit(ctx)
}

type executed struct {
	tools.Result
	durationMs int64
}

// execute runs one group's calls, in parallel when there are several, and returns the results
// in the group's (model) order.
func (r *run) execute(ctx context.Context, cr *callRun, g tools.Group) []executed {
	out := make([]executed, len(g.Calls))
	runOne := func(k int) {
		e := cr.plan.Entries[g.Calls[k]]
		begun := time.Now()
		res := r.tools[e.Decl.Name].Execute(ctx, tools.Invocation{SessionID: r.req.SessionID, CallID: e.Call.Call.ID, TurnID: r.turnID, RequestID: cr.requestID,
			ExternalRoot: cr.verdicts[g.Calls[k]].ExternalRoot, Permitted: r.permitted(e.Call), Parsed: e.Parsed})
		if !res.Outcome.Valid() || res.Outcome == tools.OutcomeBlocked {
			res = tools.Result{Outcome: tools.OutcomeError, ErrorCode: "invalid_result",
				Output: "The tool returned a result without a valid outcome; treat its effect as unknown and inspect the state."}
		}
		if res.Output == "" {
			res.Output = "(no output)"
		}
		out[k] = executed{Result: res, durationMs: elapsedMs(begun)}
	}
	if len(g.Calls) == 1 {
		runOne(0)
		return out
	}
	var wg sync.WaitGroup
	for k := range g.Calls {
		wg.Go(func() { runOne(k) })
	}
	wg.Wait()
	return out
}

func blockedEvent(sessionID, turnID, requestID string, e tools.Entry) events.ToolBlocked {
	b := e.Blocked
	text := "Blocked (" + string(b.Kind) + "): nothing ran. " + b.Message
	if b.Fix != "" {
		text += " Fix: " + b.Fix
	}
	return events.ToolBlocked{SessionID: sessionID, TurnID: turnID, RequestID: requestID, CallID: e.Call.Call.ID,
		Tool: e.Call.Call.Name, Category: string(b.Kind), Field: b.Field, Message: b.Message, Fix: b.Fix, Output: text}
}

// permitted is the call's Invocation.Permitted: the gate's decision for the same call with
// other arguments, true only for an allow (an ask cannot be put to the user while the call
// runs, so the tool refuses and the model makes the call the gate can ask about). Check only
// reads the gate's state, so parallel calls may ask it.
func (r *run) permitted(c tools.Call) func(tools.Parsed) bool {
	if r.req.Gate == nil {
		return nil
	}
	return func(p tools.Parsed) bool {
		c.Parsed = p
		v := r.req.Gate.Check(c)
		return v.Block == nil && v.Ask == nil
	}
}
