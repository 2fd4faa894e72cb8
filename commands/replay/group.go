package replay

import (
	"context"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/events"
)

// group is the events one command appended to the session's stream, decoded, with what the
// replay reads out of them: the turn it started, its inputs and its recorded outputs.
type group struct {
	recs     []events.Recorded
	payloads []events.Payload
	steps    []int // the step each event belongs to
	started  *events.TurnStarted
	text     string
	report   *turn.Report // the inbox report the turn's user message delivered
	// inputs are the inbox inputs delivered inside the turn, by the number of steps whose
	// calls ran before each: the replayed driver takes them at the same boundaries.
	inputs   map[int][]turn.Input
	requests int
	move     string
	asked    bool
	finished bool
	// responses are the ends of the provider requests (completed or failed), in order.
	responses []events.ProviderRequest
	settled   map[string]events.ToolSettled
	// settledAt is the log position of each call's result: what the call wrote to other
	// streams (a plan tool's work events) lies before it.
	settledAt map[string]uint64
	receipts  map[string]events.VerificationReceipt
	// interruptedDuring are the calls during which the run was cancelled: the last calls
	// settled before the turn finished interrupted, with no request started after them.
	interruptedDuring map[string]bool
}

func newGroup(registry *events.Registry, recs []events.Recorded) (*group, error) {
	g := &group{recs: recs, inputs: map[int][]turn.Input{}, settled: map[string]events.ToolSettled{}, settledAt: map[string]uint64{}, receipts: map[string]events.VerificationReceipt{}}
	for i, rec := range recs {
		p, err := registry.Decode(rec)
		if err != nil {
			return nil, err
		}
		g.payloads = append(g.payloads, p)
		switch e := p.(type) {
		case events.TurnStarted:
			g.started = &e
		case events.UserMessageAppended:
			if g.started != nil && e.InputID == "" {
				// The host's continuation of an active Goal (docs/goals.md): the driver's own
				// decision, compared like any other, not an input to give it.
				break
			}
			if g.started != nil { // delivered inside the turn, at a tool-safe boundary
				g.inputs[g.requests] = append(g.inputs[g.requests], inputOf(e))
				break
			}
			g.text = e.Text
			if in := inputOf(e); in.InputID != "" {
				g.report = &in.Report
			}
		case events.DirectoryChanged:
			g.move = e.Directory
		case events.PermissionAsked:
			g.asked = true
		case events.ProviderRequest:
			if e.Status != events.RequestStarted {
				g.responses = append(g.responses, e)
			}
			if e.Status == events.RequestCompleted && e.Response != nil && len(e.Response.ToolCalls) > 0 {
				g.requests++ // a step whose calls ran: the driver takes inputs after it
			}
		case events.ToolSettled:
			g.settled[e.CallID], g.settledAt[e.CallID] = e, recs[i].Position
		case events.VerificationReceipt:
			g.receipts[e.CallID] = e
		case events.TurnFinished:
			g.finished = g.started != nil && e.TurnID == g.started.TurnID
			if e.Reason == events.FinishInterrupted && !e.Recovered {
				g.interruptedDuring = lastCalls(g.payloads)
			}
		}
	}
	g.steps = g.stepOf()
	return g, nil
}

// stepOf numbers each event with the step it belongs to: a receipt and what follows it up to
// the next receipt belong to the request it was assembled for; the turn's opening to its
// first step.
func (g *group) stepOf() []int {
	n := len(g.payloads)
	next, out := make([]int, n), make([]int, n)
	for i, s := n-1, 0; i >= 0; i-- { // backwards: a receipt learns its step from its request
		if r, ok := g.payloads[i].(events.ProviderRequest); ok {
			s = r.Step
		}
		next[i] = s
	}
	cur := 0
	for i, p := range g.payloads {
		if r, ok := p.(events.ProviderRequest); ok {
			cur = r.Step
		}
		out[i] = cur
		if _, receipt := p.(events.PromptAssembled); (receipt || cur == 0) && next[i] != 0 {
			out[i] = next[i]
		}
	}
	return out
}

// ids are the fresh ids the recorded run drew, in the order the driver draws them: a step's
// receipt, then its request, then each retry's request.
func (g *group) ids() []string {
	var out []string
	for _, p := range g.payloads {
		switch e := p.(type) {
		case events.PromptAssembled:
			out = append(out, e.ReceiptID)
		case events.ProviderRequest:
			if e.Status == events.RequestStarted {
				out = append(out, e.RequestID)
			}
		}
	}
	return out
}

// meta is the command the group was appended by, as it was sent: the actor is the sender of
// the user message (the agent acts for the rest).
func (g *group) meta() commands.Meta {
	md := g.recs[0].Metadata
	m := commands.Meta{CommandID: md.CommandID, Actor: md.Actor, CorrelationID: md.CorrelationIn(g.recs[0].Stream), CausationID: md.CausationID}
	for i, p := range g.payloads {
		if _, ok := p.(events.UserMessageAppended); ok {
			m.Actor = g.recs[i].Metadata.Actor
		}
	}
	return m
}

// refused is a turn today's build refuses to start at all (an agent or tool that is gone).
func (g *group) refused(err error) Difference {
	return Difference{TurnID: g.started.TurnID, Step: g.steps[0], Event: g.recs[0].Type, Field: "(run)",
		Recorded: "started", Replayed: err.Error()}
}

// Now stamps the replayed events with the first recorded time; metadata is not compared.
func (g *group) Now() time.Time { return g.recs[0].Metadata.Time }

// lastCalls are the calls settled (not cancelled before they started) after the last
// request of the events before a turn's end.
func lastCalls(ps []events.Payload) map[string]bool {
	out := map[string]bool{}
	for i := len(ps) - 1; i >= 0; i-- {
		switch e := ps[i].(type) {
		case events.ProviderRequest:
			return out
		case events.ToolSettled:
			if e.Outcome != "cancelled" {
				out[e.CallID] = true
			}
		}
	}
	return out
}

// inputOf is the inbox input a user message delivered (InputID empty for an ordinary one).
func inputOf(e events.UserMessageAppended) turn.Input {
	in := turn.Input{Text: e.Text, MessageID: e.MessageID, Report: turn.Report{InputID: e.InputID, Peer: e.PeerMessage}}
	if e.TaskReport != nil {
		in.Report.Report = *e.TaskReport
	}
	// An input that carries neither a report nor a peer message is the user's steer.
	in.Report.Steer = e.InputID != "" && e.TaskReport == nil && e.PeerMessage == nil
	return in
}

// recordedInputs plays a turn's inputs back at the boundaries where they were delivered.
type recordedInputs struct {
	byStep map[int][]turn.Input
	steps  int
}

func (r *recordedInputs) Take(context.Context, string) []turn.Input {
	r.steps++
	return append([]turn.Input(nil), r.byStep[r.steps]...)
}

func (r *recordedInputs) Recorded(context.Context, string, []turn.Input, error) {}

// jobsReads are the job-stream reads the group's prompts recorded, in log order.
func (g *group) jobsReads() []recordedRead {
	var out []recordedRead
	for i, p := range g.payloads {
		if e, ok := p.(events.PromptAssembled); ok {
			out = append(out, recordedRead{position: g.recs[i].Position, read: e.JobsRead})
		}
	}
	return out
}
