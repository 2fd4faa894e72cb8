// Package worktools offers the durable work state of a root session to the model: plan_get,
// plan_update, todo_get and todo_update. The Plan and Todo items are the work aggregate
// (domain/work); these tools only decode a call, send it as a command, and render the view or
// the typed refusal, so a model and `zuno plan|todo` meet the same rules and the same errors.
//
// The reads take the stream, not the projections: a model that just updated its plan must
// never read an older one. An update is a command whose id derives from the tool call, so a
// call executed again (a re-delivered turn, a recovered run) returns its first result and
// writes nothing.
package worktools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zuno-run/zuno/events"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
)

// Commands is what the tools need of the application layer; *commands.Handlers is one.
type Commands interface {
	UpdatePlan(ctx context.Context, c *commands.UpdatePlan) (commands.Result, error)
	UpdateTodos(ctx context.Context, c *commands.UpdateTodos) (commands.Result, error)
	Work(ctx context.Context, sessionID string) (*work.State, error)
}

// New returns plan_get, plan_update, todo_get and todo_update, in that order, over cmds.
func New(cmds Commands) []tools.Tool {
	return []tools.Tool{&planGet{cmds}, &planUpdate{cmds}, &todoGet{cmds}, &todoUpdate{cmds}}
}

// Actor is who the update commands name as their sender.
const Actor = "agent"

// CodeCancelled: the call was stopped before it sent or read anything.
const CodeCancelled = "cancelled"

// Policies (side effect, replay and concurrency): reading the plan or the todo list is an
// inspection, like job or goal status, so it is ReadOnly, may be retried and may overlap. An
// update is a durable state
// change, which strict mode asks about every time, and keeps the zero Policy: SideEffecting,
// replayed Never, Exclusive (a later plan_get waits for it).
var (
	readPolicy   = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	updatePolicy = tools.Policy{}
)

// meta is the command an update call becomes. The session whose work the call changes is the
// invocation's session, which is the root session: delegation does not exist yet, and when
// it does a child's calls must be routed to its root's work stream, not its own.
func meta(inv tools.Invocation) commands.Meta {
	return commands.Meta{
		// Call ids are unique per session, so session and call id name one call for good.
		CommandID:     CommandID(inv.SessionID, inv.CallID),
		Actor:         Actor,
		CorrelationID: inv.SessionID,
		CausationID:   inv.CallID,
	}
}

// details is what Metadata.Details records of a result. Revision is the plan revision for the
// plan tools and the todo revision for the todo tools, after the call (or, for a refusal, as
// read just after it); Code, Expected and Current repeat a refusal's typed facts.
type details struct {
	Revision *uint64 `json:"revision,omitempty"`
	// Fingerprint digests the whole work state (plan and todo items) as a read returned it: an
	// unchanged fingerprint over repeated reads is a loop making no progress, and any real
	// mutation changes it.
	Fingerprint string  `json:"fingerprint,omitempty"`
	Duplicate   bool    `json:"duplicate,omitempty"`
	Code        string  `json:"code,omitempty"`
	Field       string  `json:"field,omitempty"`
	ID          string  `json:"id,omitempty"`
	Expected    *uint64 `json:"expected,omitempty"`
	Current     *uint64 `json:"current,omitempty"`
}

// refusal is the error object of an Output: everything the model needs to act on it.
type refusal struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
	Field    string   `json:"field,omitempty"`
	ID       string   `json:"id,omitempty"`
	Expected *uint64  `json:"expected,omitempty"`
	Current  *uint64  `json:"current,omitempty"`
	Valid    []string `json:"valid,omitempty"`
}

// output is the JSON text the model reads. Plan results carry plan (null when there is none)
// and todo results todos; a refusal carries error, and with it the current state when that
// was readable, so the model can decide again without another call.
type output struct {
	Error *refusal        `json:"error,omitempty"`
	Plan  json.RawMessage `json:"plan,omitempty"`
	Todos json.RawMessage `json:"todos,omitempty"`
	Note  string          `json:"note,omitempty"`
}

// view is one kind of work view: the plan or the todo list.
type view struct {
	// plan selects output.Plan over output.Todos.
	plan bool
	// noun and getTool name the view and its read tool in the texts.
	noun, getTool string
	revision      func(*work.State) uint64
	render        func(*work.State) any
}

var (
	planView = view{plan: true, noun: "plan", getTool: tools.NamePlanGet,
		revision: (*work.State).PlanRevision, render: func(s *work.State) any { return s.PlanView() }}
	todoView = view{noun: "todo list", getTool: tools.NameTodoGet,
		revision: (*work.State).TodoRevision, render: func(s *work.State) any { return s.TodoView() }}
)

func (v view) put(o *output, raw json.RawMessage) {
	if v.plan {
		o.Plan = raw
	} else {
		o.Todos = raw
	}
}

func result(outcome tools.Outcome, code string, o output, d details) tools.Result {
	text, err := json.Marshal(o)
	if err != nil {
		// Only a view that is not JSON fails here (a Commands that replied with broken JSON);
		// the outcome stands, the model is told the view is unreadable.
		text = []byte("the view could not be shown: " + err.Error())
	}
	r := tools.Result{Outcome: outcome, ErrorCode: code, Output: string(text)}
	if b, err := json.Marshal(d); err == nil {
		r.Metadata.Details = b
	}
	return r
}

func marshalView(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the views are plain structs of strings, numbers and slices
	}
	return b
}

// noPlanMessage says what an empty plan means for the next call, where the revision rule has
// its one exception.
const noPlanMessage = "There is no plan yet. Create the first one with plan_update action=create; " +
	"only this first create may leave out expected_revision."

// read answers plan_get and todo_get from the authoritative work state.
func read(ctx context.Context, cmds Commands, inv tools.Invocation, v view) tools.Result {
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	st, err := cmds.Work(ctx, inv.SessionID)
	if err != nil {
		return failure(err, "reading the work state failed; nothing was changed")
	}
	o := output{}
	raw := marshalView(v.render(st))
	v.put(&o, raw)
	if v.plan && string(raw) == "null" {
		o.Note = noPlanMessage
	}
	rev := v.revision(st)
	return result(tools.OutcomeCompleted, "", o, details{Revision: &rev, Fingerprint: fingerprint(st)})
}

// fingerprint is the SHA-256 of the plan and todo views together, the state a read shows.
func fingerprint(st *work.State) string {
	sum := sha256.Sum256(marshalView(struct {
		Plan  *work.PlanView `json:"plan"`
		Todos work.TodoView  `json:"todos"`
	}{st.PlanView(), st.TodoView()}))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// update sends one update command for inv and renders its reply.
func update(ctx context.Context, cmds Commands, inv tools.Invocation, v view,
	send func(context.Context, commands.Meta) (commands.Result, error)) tools.Result {
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	res, err := send(ctx, meta(inv))
	if err == nil && res.Error == nil {
		o := output{}
		v.put(&o, res.View)
		var rv struct {
			Revision *uint64 `json:"revision"`
		}
		_ = json.Unmarshal(res.View, &rv) // the view is the handler's own JSON
		// A duplicate's Output is the first call's, byte for byte; only Details say so.
		return result(tools.OutcomeCompleted, "", o, details{Revision: rv.Revision, Duplicate: res.Duplicate})
	}
	if err == nil {
		err = res.Error.Typed()
	}
	var de *domain.Error
	switch {
	case errors.As(err, &de):
		return refused(ctx, cmds, inv, v, de)
	case codeOf(err) == commands.CodeContention:
		// Others kept changing the work stream and nothing was written. The model decides
		// again from the current state rather than re-sending blindly.
		return refusedOther(err, fmt.Sprintf("call %s and decide again from the current state", v.getTool))
	case codeOf(err) == commands.CodeCommandIDReused, codeOf(err) == events.CodeEventIDConflict:
		return refusedOther(err, "this call id was already used with other arguments; make a new call")
	}
	// The store failed, or the reply was lost, perhaps after the command was written: the
	// update is uncertain, and the runtime never sends it again (replay Never).
	code := codeOf(err)
	return result(tools.OutcomeUncertain, code, output{Error: &refusal{Code: code,
		Message: "the update may or may not have been written: " + err.Error(),
		Fix:     fmt.Sprintf("call %s to see the current state before changing it again", v.getTool)}},
		details{Code: code})
}

// refused renders a domain refusal with the current state, read again so that the model can
// decide again without another call.
func refused(ctx context.Context, cmds Commands, inv tools.Invocation, v view, de *domain.Error) tools.Result {
	r := &refusal{Code: de.Code(), Message: de.Message, Fix: de.Fix, Field: de.Field, ID: de.ID, Valid: de.Valid}
	d := details{Code: de.Code(), Field: de.Field, ID: de.ID}
	switch de.Code() {
	case domain.CodeStaleRevision:
		r.Expected, r.Current = &de.Expected, &de.Current
		d.Expected, d.Current = &de.Expected, &de.Current
	case domain.CodeExpectedRevisionRequired:
		r.Current, d.Current = &de.Current, &de.Current
	}
	o := output{Error: r}
	// Nothing was written, so a failed read here costs only the convenience.
	if st, err := cmds.Work(ctx, inv.SessionID); err == nil {
		v.put(&o, marshalView(v.render(st)))
		rev := v.revision(st)
		d.Revision = &rev
		o.Note = fmt.Sprintf("Nothing was written. The %s in this result is the current state (revision %d): decide again from it.",
			v.noun, rev)
	}
	return result(tools.OutcomeError, de.Code(), o, d)
}

// refusedOther renders a typed refusal of the command layer (not of the domain): nothing was
// written.
func refusedOther(err error, fix string) tools.Result {
	code := codeOf(err)
	return result(tools.OutcomeError, code, output{Error: &refusal{Code: code, Message: err.Error(), Fix: fix}},
		details{Code: code})
}

// failure is a read that failed: nothing was changed, so it is an error, not uncertain.
func failure(err error, what string) tools.Result {
	code := codeOf(err)
	return result(tools.OutcomeError, code, output{Error: &refusal{Code: code, Message: what + ": " + err.Error(),
		Fix: "try again later; if it keeps failing, report it to the user"}}, details{Code: code})
}

func cancelledBefore(ctx context.Context) (tools.Result, bool) {
	if err := ctx.Err(); err != nil {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: CodeCancelled,
			Output: "The call was cancelled before it started (" + err.Error() + "); nothing was done."}, true
	}
	return tools.Result{}, false
}

// codeOf is err's stable code, or internal for an untyped failure.
func codeOf(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	return commands.CodeInternal
}

// CommandID is the command id of a work tool call: the session and the call id, the session's
// length first, so that no two (session, call) pairs give one id whatever characters the ids
// hold.
func CommandID(sessionID, callID string) string {
	return fmt.Sprintf("tool:%d:%s:%s", len(sessionID), sessionID, callID)
}
