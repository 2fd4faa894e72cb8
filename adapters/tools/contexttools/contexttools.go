// Package contexttools offers the task context of a root session to the model: one tool,
// task_context, with action get | update | replace (docs/task-context.md). Like worktools it
// only decodes a call, sends it as a command, and renders the view or the typed refusal; the
// rules are the aggregate's (domain/taskcontext).
//
// The tool grants no permission, resumes no goal and triggers no continuation: it records
// what the user asked for so that a long task keeps its objective and acceptance checks.
package contexttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/taskcontext"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Commands is what the tool needs of the application layer; *commands.Handlers and
// commands.WorkCommands are both one.
type Commands interface {
	UpdateTaskContext(ctx context.Context, c *commands.UpdateTaskContext) (commands.Result, error)
	TaskContext(ctx context.Context, sessionID string) (taskcontext.View, error)
}

// New returns the task_context tool over cmds.
func New(cmds Commands) []tools.Tool { return []tools.Tool{&taskContext{cmds}} }

// policies: get is an inspection (ReadOnly, Safe, ParallelSafe, like plan_get); update and
// replace are durable state changes, the zero Policy (SideEffecting, Never, Exclusive). An
// unknown action has no row and fails closed in PolicyFor.
var policies = map[string]tools.Policy{
	taskcontext.ActionGet:     {SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe},
	taskcontext.ActionUpdate:  {},
	taskcontext.ActionReplace: {},
}

type taskContext struct{ cmds Commands }

func (t *taskContext) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameTaskContext, Classify: tools.ByAction(policies)}
}

func (t *taskContext) WritesWorkspace() bool { return false }

// argSchema is the tool's arguments as taskcontext.Update's JSON tags name them.
var argSchema = schema.MustCompile(tools.NameTaskContext, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": %[1]s, "description": "get: read it and the user_messages you may cite; update: change it (omitted fields kept, lists and checks merged by id); replace: start a new task. update or replace creates the first."},
    "expected_revision": {"type": "integer", "minimum": 0, "description": "update, replace: get's revision; a session's first task omits it"},
    "objective": {"type": "string", "description": "one paragraph; a new one needs source_message_ids"},
    "task_kind": {"type": "string", "enum": %[2]s, "description": "delivery changes something, inspection only looks; not other tools' intent label"},
    "source_message_ids": {"type": "array", "items": {"type": "string"}, "description": "user message ids asking for this; needed by a new task, a new objective, revise_checks. Job reports, peer messages and summaries never authorise."},
    "authorized_actions": {"type": "array", "items": {"type": "string"}, "description": "what you understand the user authorised (a record, not a permission)"},
    "constraints": {"type": "array", "items": {"type": "string"}, "description": "what must not be done"},
    "decision_owner": {"type": "string", "enum": %[3]s, "description": "who decides what the task leaves open"},
    "checks": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "existing: report on it; new or none: add a check"},
        "kind": {"type": "string", "enum": %[4]s, "description": "delivery: work done; safety: what must not happen did not"},
        "title": {"type": "string", "description": "a new check's definition"},
        "status": {"type": "string", "enum": %[5]s},
        "evidence": {"type": "string", "description": "required for passed: a [verification rcp_…] id, or a command and result"}
      },
      "additionalProperties": false
    }, "description": "changing an existing check's kind or title needs revise_checks"},
    "revise_checks": {"type": "boolean", "description": "update: redefine checks (needs source_message_ids); they restart pending"},
    "status": {"type": "string", "enum": %[6]s, "description": "update: completed once every check passed, a delivery task's delivery check among them"}
  },
  "required": ["action"],
  "additionalProperties": false
}`, quote(taskcontext.Actions()), quote(taskcontext.Kinds()), quote(taskcontext.Owners()), quote(taskcontext.CheckKinds()),
	quote(taskcontext.CheckStatuses()), quote(taskcontext.Statuses()))),
	schema.Rules{Example: `{"action": "update", "expected_revision": 2, "constraints": ["do not announce the fix"]}`,
		EmptyIsObject: true, NullIsAbsent: true, Fields: map[string]schema.Field{"action": {Code: domain.CodeInvalidAction}}})

func quote(v []string) string {
	b, _ := json.Marshal(v) // a string slice always marshals
	return string(b)
}

func (t *taskContext) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameTaskContext, Schema: argSchema.Raw(), Description: "A long task's durable context: objective, kind, " +
		"authorising user messages, constraints, decision owner, checks. A new task needs objective, task_kind and " +
		"source_message_ids. It grants no permission and continues no work; simple or single-step work needs none."}
}

func (t *taskContext) Validate(args json.RawMessage) (tools.Parsed, error) {
	var u taskcontext.Update
	if err := argSchema.Decode(args, &u); err != nil {
		return tools.Parsed{}, err
	}
	if u.Action == taskcontext.ActionGet && !emptyGet(u) {
		return tools.Parsed{}, domain.Invalid("action", "get reads only; it takes no other argument",
			"send {\"action\": \"get\"}, or use action=update to change the task context")
	}
	return tools.Parsed{Action: u.Action, Args: u}, nil
}

func emptyGet(u taskcontext.Update) bool {
	return u.ExpectedRevision == nil && u.Objective == "" && u.TaskKind == "" && len(u.SourceMessageIDs) == 0 &&
		len(u.AuthorizedActions) == 0 && len(u.Constraints) == 0 && u.DecisionOwner == "" && len(u.Checks) == 0 &&
		!u.ReviseChecks && u.Status == ""
}

// details is what Metadata.Details records of a result.
type details struct {
	Revision  *uint64 `json:"revision,omitempty"`
	TaskID    string  `json:"taskId,omitempty"`
	Stale     bool    `json:"stale,omitempty"`
	Duplicate bool    `json:"duplicate,omitempty"`
	Code      string  `json:"code,omitempty"`
	Field     string  `json:"field,omitempty"`
	ID        string  `json:"id,omitempty"`
	Expected  *uint64 `json:"expected,omitempty"`
	Current   *uint64 `json:"current,omitempty"`
}

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

type output struct {
	Error       *refusal        `json:"error,omitempty"`
	TaskContext json.RawMessage `json:"task_context,omitempty"`
	Note        string          `json:"note,omitempty"`
}

func (t *taskContext) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	u, ok := inv.Args.(taskcontext.Update)
	if !ok {
		return tools.NotValidated(inv)
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: worktools.CodeCancelled,
			Output: "The call was cancelled before it started (" + err.Error() + "); nothing was done."}
	}
	if u.Action == taskcontext.ActionGet {
		v, err := t.cmds.TaskContext(ctx, inv.SessionID)
		if err != nil {
			code := codeOf(err)
			return result(tools.OutcomeError, code, output{Error: &refusal{Code: code,
				Message: "reading the task context failed; nothing was changed: " + err.Error(),
				Fix:     "try again later; if it keeps failing, report it to the user"}}, details{Code: code})
		}
		return result(tools.OutcomeCompleted, "", viewOutput(v), viewDetails(v))
	}
	m := commands.Meta{CommandID: worktools.CommandID(inv.SessionID, inv.CallID), Actor: worktools.Actor,
		CorrelationID: inv.SessionID, CausationID: inv.CallID}
	res, err := t.cmds.UpdateTaskContext(ctx, &commands.UpdateTaskContext{Meta: m, SessionID: inv.SessionID, Update: u})
	if err == nil && res.Error == nil {
		var v taskcontext.View
		_ = json.Unmarshal(res.View, &v) // the handler's own JSON
		d := viewDetails(v)
		d.Duplicate = res.Duplicate
		return result(tools.OutcomeCompleted, "", output{TaskContext: res.View}, d)
	}
	if err == nil {
		err = res.Error.Typed()
	}
	var de *domain.Error
	switch {
	case errors.As(err, &de):
		return t.refused(ctx, inv, de)
	case codeOf(err) == commands.CodeContention:
		return refusedOther(err, "call task_context action=get and decide again from the current state")
	case codeOf(err) == commands.CodeCommandIDReused, codeOf(err) == events.CodeEventIDConflict:
		return refusedOther(err, "this call id was already used with other arguments; make a new call")
	}
	code := codeOf(err)
	return result(tools.OutcomeUncertain, code, output{Error: &refusal{Code: code,
		Message: "the update may or may not have been written: " + err.Error(),
		Fix:     "call task_context action=get to see the current state before changing it again"}}, details{Code: code})
}

// refused renders a domain refusal with the current task context, so the model can decide
// again without another call.
func (t *taskContext) refused(ctx context.Context, inv tools.Invocation, de *domain.Error) tools.Result {
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
	if v, err := t.cmds.TaskContext(ctx, inv.SessionID); err == nil {
		o.TaskContext = marshal(v)
		d.Revision = &v.Revision
		o.Note = fmt.Sprintf("Nothing was written. The task_context in this result is the current state (revision %d): decide again from it.", v.Revision)
	}
	return result(tools.OutcomeError, de.Code(), o, d)
}

func refusedOther(err error, fix string) tools.Result {
	code := codeOf(err)
	return result(tools.OutcomeError, code, output{Error: &refusal{Code: code, Message: err.Error(), Fix: fix}}, details{Code: code})
}

func viewOutput(v taskcontext.View) output {
	o := output{TaskContext: marshal(v)}
	switch {
	case v.Task == nil:
		o.Note = "There is no task context. Simple questions and single-step work need none; for a long task, create one " +
			"with action=update or replace, citing the user messages listed here in source_message_ids."
	case v.Stale:
		o.Note = "A user message came after the task's newest source: the current user instruction takes precedence over this record."
	}
	return o
}

func viewDetails(v taskcontext.View) details {
	d := details{Revision: &v.Revision, Stale: v.Stale}
	if v.Task != nil {
		d.TaskID = v.Task.TaskID
	}
	return d
}

func marshal(v taskcontext.View) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings, numbers and slices
	}
	return b
}

func result(outcome tools.Outcome, code string, o output, d details) tools.Result {
	text, err := json.Marshal(o)
	if err != nil {
		text = []byte("the view could not be shown: " + err.Error())
	}
	r := tools.Result{Outcome: outcome, ErrorCode: code, Output: string(text)}
	if b, err := json.Marshal(d); err == nil {
		r.Metadata.Details = b
	}
	return r
}

func codeOf(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	return commands.CodeInternal
}
