package bg

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
)

// Tool is the bg tool over one Manager: read-back of background output and
// withheld artifacts, list, wait and cancel.
type Tool struct {
	m *Manager
}

// NewTool binds the bg tool to m.
func NewTool(m *Manager) *Tool { return &Tool{m: m} }

// The bg tool is mixed: its side-effect class depends on the action (see
// "Declarations" in docs/tools.md). Reading is ReadOnly, may be retried and
// may overlap; cancel changes the world and keeps the strictest policy. An
// unknown action has no row and fails closed in PolicyFor.
var policies = map[string]tools.Policy{
	ActionList:     readOnly,
	ActionOutput:   readOnly,
	ActionWait:     readOnly,
	ActionArtifact: readOnly,
	ActionCancel:   {SideEffect: tools.SideEffecting, Replay: tools.Never, Concurrency: tools.Exclusive},
}

var readOnly = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}

// Declaration is bg, classified per call by its action.
func (t *Tool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameBg, Classify: tools.ByAction(policies)}
}

// WritesWorkspace is false: bg reads output and stops processes; it edits no
// file.
func (t *Tool) WritesWorkspace() bool { return false }

// Spec is what the model is shown.
func (t *Tool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameBg, Description: description, Schema: argsSchema.Raw()}
}

const description = `Background tasks and withheld output, a bounded window at a time; reading never re-runs a command.
list: tasks and status. output: a task's output (no cursor: the tail). wait: up to timeoutMs for the end, then a window; a timeout is no failure and the task runs on. cancel: stop its process group. artifact: withheld output at outputPath (no cursor: byte 0).
To read on, pass back the returned cursor (hasMore: bytes follow; windowFrom, hasEarlier: where it starts).`

// schemaText is what the model is shown; argsSchema compiles these bytes.
const schemaText = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "output", "wait", "artifact", "cancel"]},
    "taskID": {"type": "string", "description": "output, wait, cancel"},
    "outputPath": {"type": "string", "description": "artifact: the path a tool result's notice gave"},
    "cursor": {"type": "integer", "minimum": 0, "description": "absolute byte offset"},
    "limit": {"type": "integer", "description": "window bytes: default 16384, at most 51200"},
    "timeoutMs": {"type": "integer", "minimum": 0, "description": "wait: default and at most 60000"}
  },
  "required": ["action"],
  "additionalProperties": false
}`

// Validate decodes args strictly; the action classifies the call. A refusal is
// a *domain.Error naming the field and saying what to send.
func (t *Tool) Validate(raw json.RawMessage) (tools.Parsed, error) {
	a, err := parseArgs(raw)
	if err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Action: a.Action, Args: a}, nil
}

// Execute runs one validated call. It never returns a Go error: a refusal
// is OutcomeError with the manager's stable code. The window is already
// bounded, so its text is never subjected to the output caps again.
func (t *Tool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(args)
	if !ok {
		return tools.NotValidated(inv)
	}
	switch a.Action {
	case ActionList:
		list, err := t.m.List(ctx)
		text := renderList(list)
		if err != nil {
			// The tasks this process runs are still worth listing; say what is missing.
			text += "\n" + err.Error()
		}
		return completed(text, struct {
			Tasks []TaskInfo `json:"tasks"`
		}{list})
	case ActionOutput:
		w, err := t.m.Output(ctx, a.TaskID, a.Cursor, a.Limit)
		if err != nil {
			return failed(err)
		}
		return windowResult(ActionOutput, w, false)
	case ActionWait:
		w, err := t.m.Wait(ctx, a.TaskID, a.Timeout, a.Cursor, a.Limit)
		interrupted := false
		if err != nil {
			if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
				return failed(err)
			}
			interrupted = true // the read itself is sound; only the wait was cut short
		}
		return windowResult(ActionWait, w, interrupted)
	case ActionArtifact:
		w, err := t.m.ReadArtifact(a.OutputPath, a.Cursor, a.Limit)
		if err != nil {
			return failed(err)
		}
		return windowResult(ActionArtifact, w, false)
	case ActionCancel:
		info, err := t.m.Cancel(ctx, a.TaskID)
		if err != nil {
			return failed(err)
		}
		return completed(renderCancel(info), info)
	}
	return blocked(domain.Invalid("action", "unknown action "+a.Action, "use list, output, wait, artifact or cancel"))
}

func windowResult(action string, w Window, interrupted bool) tools.Result {
	facts := w
	facts.Text = "" // the bytes are the Output; details carry the facts only
	return completed(renderWindow(action, w, interrupted), facts)
}

func completed(text string, details any) tools.Result {
	r := tools.Result{Outcome: tools.OutcomeCompleted, Output: text}
	if b, err := json.Marshal(details); err == nil {
		r.Metadata.Details = b
	}
	return r
}

// failed maps a Manager error onto an error result with its stable code.
func failed(err error) tools.Result {
	var e *Error
	if errors.As(err, &e) {
		msg := e.Message
		if e.Err != nil {
			msg += " (" + e.Err.Error() + ")"
		}
		return tools.Result{Outcome: tools.OutcomeError, ErrorCode: e.Code, Output: msg}
	}
	return tools.Result{Outcome: tools.OutcomeError, ErrorCode: CodeUnavailable, Output: err.Error()}
}

// blocked is arguments Execute was handed without a passing Validate.
func blocked(err error) tools.Result {
	return tools.Result{Outcome: tools.OutcomeBlocked, ErrorCode: CodeInvalidArguments, Output: err.Error()}
}
