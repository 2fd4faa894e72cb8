// Package goaltools offers a root session's Goal to the model: goal_get, goal_update and
// goal_request_input (docs/goals.md). Like adapters/tools/worktools they only decode a call,
// send it as a command and render the view or the typed refusal, so the model and `zuno
// goal` meet the same rules: the same revision rule, the same completion barrier, the same
// error codes.
package goaltools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// Commands is what the tools need of the application layer; commands.GoalCommands is one.
type Commands interface {
	UpdateGoal(ctx context.Context, c *commands.UpdateGoal) (commands.Result, error)
	RequestGoalInput(ctx context.Context, c *commands.RequestGoalInput) (commands.Result, error)
	Work(ctx context.Context, sessionID string) (*work.State, error)
}

// New returns goal_get, goal_update and goal_request_input, in that order, over cmds.
func New(cmds Commands) []tools.Tool {
	return []tools.Tool{&goalGet{cmds}, &goalUpdate{cmds}, &goalRequestInput{cmds}}
}

// Policies: goal_get is a status read (seeds 000 lists goal status among the Safe reads);
// an update or an input request is a durable state change, replayed Never and Exclusive.
var (
	readPolicy   = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	updatePolicy = tools.Policy{}
)

// meta is the command an update call becomes: its id derives from the session and the call,
// so a call executed again answers with its first result and writes nothing.
func meta(inv tools.Invocation) commands.Meta {
	return commands.Meta{CommandID: worktools.CommandID(inv.SessionID, inv.CallID), Actor: worktools.Actor,
		CorrelationID: inv.SessionID, CausationID: inv.CallID}
}

// RequestID is the stable id of a goal_request_input call's request: an answer names it.
func RequestID(sessionID, callID string) string {
	sum := sha256.Sum256([]byte("goal-input\n" + worktools.CommandID(sessionID, callID)))
	return "req_" + hex.EncodeToString(sum[:16])
}

// details is what Metadata.Details records of a result.
type details struct {
	Revision  *uint64  `json:"revision,omitempty"`
	Duplicate bool     `json:"duplicate,omitempty"`
	RequestID string   `json:"requestId,omitempty"`
	Code      string   `json:"code,omitempty"`
	Blockers  []string `json:"blockers,omitempty"`
}

type refusal struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
	Field    string   `json:"field,omitempty"`
	Expected *uint64  `json:"expected,omitempty"`
	Current  *uint64  `json:"current,omitempty"`
	Blockers []string `json:"blockers,omitempty"`
}

// output is the JSON text the model reads: the Goal (null when there is none), or a refusal
// with the current Goal so the model can decide again without another call.
type output struct {
	Error *refusal        `json:"error,omitempty"`
	Goal  json.RawMessage `json:"goal"`
	Note  string          `json:"note,omitempty"`
}

func result(outcome tools.Outcome, code string, o output, d details) tools.Result {
	if o.Goal == nil {
		o.Goal = json.RawMessage("null")
	}
	text, err := json.Marshal(o)
	if err != nil {
		text = []byte("the Goal could not be shown: " + err.Error())
	}
	r := tools.Result{Outcome: outcome, ErrorCode: code, Output: string(text)}
	if b, err := json.Marshal(d); err == nil {
		r.Metadata.Details = b
	}
	return r
}

func viewOf(st *work.State) (json.RawMessage, uint64) {
	b, err := json.Marshal(st.Goal().View())
	if err != nil {
		panic(err) // plain strings, numbers and slices
	}
	return b, st.Goal().Revision()
}

const noGoalNote = "There is no Goal. Create one with goal_update (objective, criteria); only this first " +
	"creation may leave out expected_revision."

func read(ctx context.Context, cmds Commands, inv tools.Invocation) tools.Result {
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	st, err := cmds.Work(ctx, inv.SessionID)
	if err != nil {
		code := codeOf(err)
		return result(tools.OutcomeError, code, output{Error: &refusal{Code: code, Message: "reading the Goal failed: " + err.Error(),
			Fix: "try again later; if it keeps failing, report it to the user"}}, details{Code: code})
	}
	raw, rev := viewOf(st)
	o := output{Goal: raw}
	if st.Goal().Goal() == nil {
		o.Note = noGoalNote
	}
	return result(tools.OutcomeCompleted, "", o, details{Revision: &rev})
}

// send sends one command for inv and renders its reply.
func send(ctx context.Context, cmds Commands, inv tools.Invocation, d details,
	do func(context.Context, commands.Meta) (commands.Result, error)) tools.Result {
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	res, err := do(ctx, meta(inv))
	if err == nil && res.Error == nil {
		var rv struct {
			Revision *uint64 `json:"revision"`
		}
		_ = json.Unmarshal(res.View, &rv)
		d.Revision, d.Duplicate = rv.Revision, res.Duplicate
		return result(tools.OutcomeCompleted, "", output{Goal: res.View}, d)
	}
	if err == nil {
		err = res.Error.Typed()
	}
	var de *domain.Error
	switch {
	case errors.As(err, &de):
		return refused(ctx, cmds, inv, de)
	case codeOf(err) == commands.CodeContention, codeOf(err) == commands.CodeCommandIDReused, codeOf(err) == events.CodeEventIDConflict:
		code := codeOf(err)
		return result(tools.OutcomeError, code, output{Error: &refusal{Code: code, Message: err.Error(),
			Fix: "call goal_get and decide again from the current Goal"}}, details{Code: code})
	}
	code := codeOf(err)
	return result(tools.OutcomeUncertain, code, output{Error: &refusal{Code: code,
		Message: "the change may or may not have been written: " + err.Error(),
		Fix:     "call goal_get to see the current Goal before changing it again"}}, details{Code: code})
}

// refused renders a domain refusal with the current Goal, read again.
func refused(ctx context.Context, cmds Commands, inv tools.Invocation, de *domain.Error) tools.Result {
	r := &refusal{Code: de.Code(), Message: de.Message, Fix: de.Fix, Field: de.Field}
	d := details{Code: de.Code()}
	switch de.Code() {
	case domain.CodeStaleRevision:
		r.Expected, r.Current = &de.Expected, &de.Current
	case domain.CodeExpectedRevisionRequired:
		r.Current = &de.Current
	case "goal_blocked":
		r.Blockers, d.Blockers = de.Valid, de.Valid
	}
	o := output{Error: r}
	if st, err := cmds.Work(ctx, inv.SessionID); err == nil {
		raw, rev := viewOf(st)
		o.Goal, d.Revision = raw, &rev
		o.Note = fmt.Sprintf("Nothing was written. The goal in this result is the current Goal (revision %d): decide again from it.", rev)
	}
	return result(tools.OutcomeError, de.Code(), o, d)
}

func cancelledBefore(ctx context.Context) (tools.Result, bool) {
	if err := ctx.Err(); err != nil {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: worktools.CodeCancelled,
			Output: "The call was cancelled before it started (" + err.Error() + "); nothing was done."}, true
	}
	return tools.Result{}, false
}

func codeOf(err error) string {
	if c := domain.CodeOf(err); c != "" {
		return c
	}
	return commands.CodeInternal
}
