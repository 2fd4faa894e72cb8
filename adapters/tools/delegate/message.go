package delegate

import (
	"context"
	"encoding/json"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
)

type message struct{ jobs Jobs }

var messageSchema = schema.MustCompile(tools.NameSessionMessage, schema.Compact(`{
  "type": "object",
  "properties": {
    "target": {"type": "string", "minLength": 1, "description": "the session to send to: another root session of this project, or a child of this session"},
    "message": {"type": "string", "minLength": 1, "description": "what the other session should know"},
    "title": {"type": "string", "description": "one line naming the message"}
  },
  "required": ["target", "message"],
  "additionalProperties": false
}`), schema.Rules{Example: `{"target": "ses_…", "message": "The API moved to v2; see docs/api.md", "title": "API change"}`,
	NullIsAbsent: true, StrictText: true, Fields: map[string]schema.Field{"message": {MaxBytes: maxMessageBytes}, "title": {MaxBytes: 200}}})

// maxMessageBytes bounds a peer message: it is context, not a transfer of files.
const maxMessageBytes = 16 << 10

// messageArgs is session_message's arguments as the schema names them.
type messageArgs struct {
	Target  string `json:"target"`
	Message string `json:"message"`
	Title   string `json:"title"`
}

// Policy: session_message records durable input in another session (seeds 000: it has side
// effects): SideEffecting, replayed Never, Exclusive.
var messagePolicy = tools.Policy{SideEffect: tools.SideEffecting, Replay: tools.Never, Concurrency: tools.Exclusive}

func (t *message) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameSessionMessage, Policy: messagePolicy}
}

func (t *message) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameSessionMessage, Schema: messageSchema.Raw(), Description: "Send durable peer context " +
		"to another session of this project: another root session, or a child of this one. It arrives as that " +
		"session's next input, marked with this session and agent as its source and as not being the user's " +
		"instruction. Only a root session may send."}
}

func (t *message) WritesWorkspace() bool { return false }

func (t *message) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a messageArgs
	if err := messageSchema.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: delegation.Message{Target: a.Target, Text: a.Message, Title: a.Title}}, nil
}

type messageOutput struct {
	Target  string `json:"target"`
	InputID string `json:"inputId"`
	Note    string `json:"note"`
}

func (t *message) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	m, ok := inv.Args.(delegation.Message)
	if !ok {
		return tools.NotValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	out, err := t.jobs.Message(ctx, inv, m)
	if err != nil {
		return answer(err, "Nothing was sent.", tools.OutcomeUncertain, "the message may or may not have been recorded",
			"send it again with the same text: a message this call recorded is not recorded twice")
	}
	return result(tools.OutcomeCompleted, "", messageOutput{Target: out.Target, InputID: out.InputID,
		Note: "Recorded in the target's inbox; it arrives as its next input, marked as peer context. "},
		details{SessionID: out.Target})
}
