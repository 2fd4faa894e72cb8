// Package questiontools offers the user-mediated tools (docs/questions.md): question (a
// structured clarification; in the Plan agent it waits for the first response, in Work or
// with an active Goal it publishes and returns a receipt at once), question_async (publishes
// and returns at once, everywhere) and plan_exit (a non-blocking, closed approval request
// binding the exact Plan revision and the agent/model identity; Plan agent only). The tools
// decode a call, hand it to the application's QuestionPort and render the receipt or the typed
// refusal. A real answer never appears in a result: it reaches the model once, as an input of
// the session's durable inbox.
package questiontools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Port is what the tools need of the application; commands/app's Questions is one.
type Port interface {
	Ask(ctx context.Context, inv tools.Invocation, a question.Ask) (question.Receipt, error)
}

// New returns question, question_async and plan_exit, in that order, over port.
func New(port Port) []tools.Tool {
	return []tools.Tool{&ask{port: port, name: tools.NameQuestion}, &ask{port: port, name: tools.NameQuestionAsync},
		&planExit{port}}
}

// CodeCancelled: the call was stopped before it asked anything of the application.
const CodeCancelled = "cancelled"

// Policy (docs/tools.md, "Declarations"): a question needs a person's input by design
// (UserMediated, which strict mode does not ask about); its request id derives from the call,
// so a call executed again publishes nothing new (Safe); calls of one response run one after
// another, so the user sees them in the model's order (Exclusive).
var policy = tools.Policy{SideEffect: tools.UserMediated, Replay: tools.Safe, Concurrency: tools.Exclusive}

var askSchema = schema.MustCompile(tools.NameQuestion, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "title": {"type": "string"},
    "questions": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "default q1, q2, …"},
        "question": {"type": "string", "minLength": 1, "description": "complete on its own"},
        "options": {"type": "array", "items": {
          "type": "object",
          "properties": {
            "label": {"type": "string", "minLength": 1, "description": "at most %[2]d bytes"},
            "description": {"type": "string"}
          },
          "required": ["label"],
          "additionalProperties": false
        }, "description": "at most %[3]d; none: free text"},
        "custom": {"type": "boolean", "description": "also allow free text; default true"}
      },
      "required": ["question"],
      "additionalProperties": false
    }, "description": "1 to %[1]d; the user may answer some, later, or none"}
  },
  "required": ["questions"],
  "additionalProperties": false
}`, question.MaxItems, question.MaxLabelLen, question.MaxOptions)), schema.Rules{
	Example:      `{"title": "Database", "questions": [{"id": "db", "question": "Which database should the service use?", "options": [{"label": "SQLite"}, {"label": "Postgres"}]}]}`,
	NullIsAbsent: true, StrictText: true,
	Fields: map[string]schema.Field{"title": {MaxBytes: 200}, "questions[].question": {MaxBytes: question.MaxQuestionLen},
		"questions[].id": {MaxBytes: 64}, "questions[].options[].label": {MaxBytes: question.MaxLabelLen},
		"questions[].options[].description": {MaxBytes: question.MaxDescriptionN}}})

type askArgs struct {
	Title     string `json:"title"`
	Questions []struct {
		ID       string `json:"id"`
		Question string `json:"question"`
		Options  []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
		Custom *bool `json:"custom"`
	} `json:"questions"`
}

// items is the arguments as the request's items: ids q1, q2, … where left out, free text
// allowed unless custom is false, and always for a question without options.
func (a askArgs) items() []events.QuestionItem {
	out := make([]events.QuestionItem, len(a.Questions))
	for i, q := range a.Questions {
		it := events.QuestionItem{ID: q.ID, Question: q.Question, Custom: q.Custom == nil || *q.Custom || len(q.Options) == 0}
		if it.ID == "" {
			it.ID = fmt.Sprintf("q%d", i+1)
		}
		for _, o := range q.Options {
			it.Options = append(it.Options, events.QuestionOption{Label: o.Label, Description: o.Description})
		}
		out[i] = it
	}
	return out
}

type ask struct {
	port Port
	name string
}

func (t *ask) Declaration() tools.Declaration { return tools.Declaration{Name: t.name, Policy: policy} }

func (t *ask) Spec() tools.Spec {
	desc := "Ask the user structured questions. In the plan agent without an active goal it waits for the " +
		"first response; otherwise it returns at once. The answer is never in this result: it arrives once as your " +
		"next input. A deferral (\"later\", or no response in time) is no answer: go on from the evidence, state your " +
		"assumptions, and do not ask the same again."
	if t.name == tools.NameQuestionAsync {
		desc = "Like question, but never waits, in any agent: go on working; the answer arrives once as your " +
			"next input. Until then work from the evidence and state your assumptions."
	}
	return tools.Spec{Name: t.name, Schema: askSchema.Raw(), Description: desc}
}

func (t *ask) WritesWorkspace() bool { return false }

func (t *ask) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a askArgs
	if err := askSchema.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	items := a.items()
	// The domain's own check: a request the port would refuse is blocked before it runs.
	if err := question.CheckItems(events.QuestionKindQuestion, items); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: question.Ask{Tool: t.name, Title: a.Title, Items: items}}, nil
}

func (t *ask) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(question.Ask)
	if !ok {
		return tools.NotValidated(inv)
	}
	return run(ctx, t.port, inv, a)
}

var planExitSchema = schema.MustCompile(tools.NamePlanExit, schema.Compact(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string", "minLength": 1, "description": "what the user approves: the plan in a few lines, its risks, and what Work will do first"}
  },
  "required": ["summary"],
  "additionalProperties": false
}`), schema.Rules{Example: `{"summary": "Plan rev 4: migrate the store in 3 steps; risk: a long lock on step 2."}`,
	NullIsAbsent: true, StrictText: true, Fields: map[string]schema.Field{"summary": {MaxBytes: question.MaxQuestionLen}}})

type planExit struct{ port Port }

func (t *planExit) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NamePlanExit, Policy: policy}
}

func (t *planExit) Spec() tools.Spec {
	return tools.Spec{Name: tools.NamePlanExit, Schema: planExitSchema.Raw(), Description: "Ask the user to approve " +
		"the current durable plan for Work. Returns a receipt at once; nothing waits. Only the user's explicit approve " +
		"authorises, and only the exact plan revision and agent/model identity shown: changing the plan afterwards, a " +
		"change of agent or model, or an interrupted turn voids the approval. An early approval takes effect when this " +
		"turn ends normally. Call it after plan_get shows the finished plan, then end your turn."}
}

func (t *planExit) WritesWorkspace() bool { return false }

func (t *planExit) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a struct {
		Summary string `json:"summary"`
	}
	if err := planExitSchema.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	items := []events.QuestionItem{{ID: question.PlanExitItem, Question: a.Summary,
		Options: []events.QuestionOption{{Label: question.Approve}, {Label: question.Reject}}}}
	if err := question.CheckItems(events.QuestionKindPlanExit, items); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: question.Ask{Tool: tools.NamePlanExit, Title: "Approve the plan for Work", Items: items}}, nil
}

func (t *planExit) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(question.Ask)
	if !ok {
		return tools.NotValidated(inv)
	}
	return run(ctx, t.port, inv, a)
}

// output is the JSON the model reads.
type output struct {
	Receipt *question.Receipt `json:"receipt,omitempty"`
	Error   *refusal          `json:"error,omitempty"`
	Note    string            `json:"note"`
}

type refusal struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Fix     string   `json:"fix,omitempty"`
	Field   string   `json:"field,omitempty"`
	Valid   []string `json:"valid,omitempty"`
}

// details is Metadata.Details: the request and its outcome, and a child's blocker, which the
// parent's report reads (domain/job, Evidence).
type details struct {
	RequestID string `json:"requestId,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Blocker   string `json:"blocker,omitempty"`
	Code      string `json:"code,omitempty"`
}

// notes say what each outcome means for the model's next step.
var notes = map[string]string{
	question.AskPublished: "The request is published. Do not wait for it: go on from the evidence you have and state " +
		"your assumptions. If the user answers, the answer arrives once as your next input.",
	question.AskAnswered: "The user responded. The answer arrives as your next input (it is not in this result); " +
		"continue once you have read it. Questions left unanswered stay open: do not ask them again.",
	question.AskDeferred: "No answer: the user deferred the request or did not respond in time. That is not an " +
		"answer and selects nothing. Go on from the evidence you have, state your assumptions, or end your turn; " +
		"do not ask again. An answer given later arrives as an input.",
	question.AskVoided: "The request was closed unanswered.",
	question.AskParent: "You are a delegated child: your question is not put to the user. It goes to your parent in " +
		"your report, as a blocker. Go on where you can without the answer, or end with what you found.",
}

func run(ctx context.Context, port Port, inv tools.Invocation, a question.Ask) tools.Result {
	if err := ctx.Err(); err != nil {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: CodeCancelled,
			Output: "The call was cancelled before it started (" + err.Error() + "); nothing was asked."}
	}
	r, err := port.Ask(ctx, inv, a)
	if err != nil && ctx.Err() != nil {
		// The run was stopped while the call waited: the request, if published, stays open
		// and an answer given later still arrives as an input.
		return result(tools.OutcomeCancelled, CodeCancelled, output{Error: &refusal{Code: CodeCancelled,
			Message: "the wait was interrupted: " + ctx.Err().Error()},
			Note: "Nothing was answered. If the request was published it stays open."}, details{Code: CodeCancelled})
	}
	if err != nil {
		return refusedOrFailed(err)
	}
	if r.Outcome == question.AskParent {
		return result(tools.OutcomeError, question.CodeQuestionToParent,
			output{Error: &refusal{Code: question.CodeQuestionToParent, Message: r.Blocker}, Note: notes[question.AskParent]},
			details{Outcome: r.Outcome, Blocker: r.Blocker, Code: question.CodeQuestionToParent})
	}
	note := notes[r.Outcome]
	if a.Tool == tools.NamePlanExit {
		note = "The approval request is published; nothing waits for it. End your turn: Work starts only after the " +
			"user approves this exact plan revision, and any plan change voids the request."
	}
	return result(tools.OutcomeCompleted, "", output{Receipt: &r, Note: note}, details{RequestID: r.RequestID, Outcome: r.Outcome})
}

func refusedOrFailed(err error) tools.Result {
	var de *domain.Error
	if errors.As(err, &de) {
		return result(tools.OutcomeError, de.Code(), output{Error: &refusal{Code: de.Code(), Message: de.Message, Fix: de.Fix,
			Field: de.Field, Valid: de.Valid}, Note: "Nothing was asked."}, details{Code: de.Code()})
	}
	code := domain.CodeOf(err)
	if code == "" {
		code = commands.CodeInternal
	}
	// The request id derives from the call, so whether it was published is for the user's
	// question list to say; a question is never sent again by the runtime.
	return result(tools.OutcomeUncertain, code, output{Error: &refusal{Code: code,
		Message: "the request may or may not have been published: " + err.Error()},
		Note: "Do not ask again at once; go on from the evidence you have."}, details{Code: code})
}

func result(outcome tools.Outcome, code string, o output, d details) tools.Result {
	text, err := json.Marshal(o)
	if err != nil {
		text = []byte("the result could not be shown: " + err.Error())
	}
	r := tools.Result{Outcome: outcome, ErrorCode: code, Output: string(text)}
	if b, err := json.Marshal(d); err == nil {
		r.Metadata.Details = b
	}
	return r
}
