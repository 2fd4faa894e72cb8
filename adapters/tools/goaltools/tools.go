package goaltools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/tools"
)

// rules are the goal tools' Rules, as the work tools': {} is the empty object and null
// means absent (docs/tools.md, "Argument schemas").
func rules(example string) schema.Rules {
	return schema.Rules{Example: example, EmptyIsObject: true, NullIsAbsent: true}
}

var noArgs = schema.MustCompile("no_arguments", schema.Compact(`{
  "type": "object",
  "properties": {},
  "additionalProperties": false
}`), rules(`{}`))

type goalGet struct{ cmds Commands }

type goalGetArgs struct{}

func (t *goalGet) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameGoalGet, Policy: readPolicy}
}

func (t *goalGet) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameGoalGet, Schema: noArgs.Raw(), Description: "Read this session's Goal: revision, objective, " +
		"status, owning turn, acceptance criteria, open input request; goal: null when there is none. Send its revision " +
		"as expected_revision to goal_update and goal_request_input."}
}

func (t *goalGet) WritesWorkspace() bool { return false }

func (t *goalGet) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a goalGetArgs
	if err := noArgs.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: a}, nil
}

func (t *goalGet) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	if _, ok := inv.Args.(goalGetArgs); !ok {
		return tools.NotValidated(inv)
	}
	return read(ctx, t.cmds, inv)
}

type goalUpdate struct{ cmds Commands }

// updateArgs is goal_update's arguments; evidence is a list on the wire (one object per
// criterion) and a map in the command.
type updateArgs struct {
	ExpectedRevision *uint64                `json:"expected_revision"`
	Objective        *string                `json:"objective"`
	Criteria         *[]goal.CriterionInput `json:"criteria"`
	Status           string                 `json:"status"`
	Evidence         []evidenceArg          `json:"evidence"`
}

type evidenceArg struct {
	CriterionID string `json:"criterion_id"`
	ReceiptID   string `json:"receipt_id"`
}

var updateSchema = schema.MustCompile(tools.NameGoalUpdate, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "expected_revision": {"type": "integer", "minimum": 0, "description": "goal_get's revision, unchanged; only a session's first Goal omits it"},
    "objective": {"type": "string", "description": "what the Goal achieves, at most %[1]d characters; required to create one"},
    "criteria": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "default c1, c2, ..."},
        "text": {"type": "string", "description": "a checkable acceptance criterion, at most %[2]d characters"},
        "needs_evidence": {"type": "boolean", "description": "met only by a passing [verification rcp_…] receipt cited at completion"}
      },
      "required": ["text"],
      "additionalProperties": false
    }, "description": "at most %[3]d; replaces the list"},
    "status": {"type": "string", "enum": ["active", "paused", "complete"], "description": "complete needs no open plan step, todo or job, no unread job report, and evidence for each criterion needing it; only the user resumes a paused Goal"},
    "evidence": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "criterion_id": {"type": "string"},
        "receipt_id": {"type": "string", "description": "from a shell result's [verification rcp_…]"}
      },
      "required": ["criterion_id", "receipt_id"],
      "additionalProperties": false
    }, "description": "status complete: the receipt meeting each criterion that needs evidence"}
  },
  "additionalProperties": false
}`, goal.MaxObjectiveRunes, goal.MaxCriterionRunes, goal.MaxCriteria)),
	rules(`{"expected_revision": 2, "status": "complete", "evidence": [{"criterion_id": "tests", "receipt_id": "rcp_0123456789abcdef0123456789abcdef"}]}`))

func (t *goalUpdate) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameGoalUpdate, Policy: updatePolicy}
}

func (t *goalUpdate) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameGoalUpdate, Schema: updateSchema.Raw(), Description: "Create or change this " +
		"session's Goal, a long task's objective and acceptance criteria kept across turns (a new one without a Goal or " +
		"after a completed one). goal_blocked lists what blocks status complete; on stale_revision decide again from the " +
		"Goal the refusal returns. Returns the Goal."}
}

func (t *goalUpdate) WritesWorkspace() bool { return false }

func (t *goalUpdate) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a updateArgs
	if err := updateSchema.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	u := goal.Update{ExpectedRevision: a.ExpectedRevision, Objective: a.Objective, Criteria: a.Criteria, Status: a.Status}
	for _, e := range a.Evidence {
		if u.Evidence == nil {
			u.Evidence = map[string]string{}
		}
		u.Evidence[e.CriterionID] = e.ReceiptID
	}
	return tools.Parsed{Action: a.Status, Args: u}, nil
}

func (t *goalUpdate) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	u, ok := inv.Args.(goal.Update)
	if !ok {
		return tools.NotValidated(inv)
	}
	u.TurnID = inv.TurnID
	return send(ctx, t.cmds, inv, details{}, func(ctx context.Context, m commands.Meta) (commands.Result, error) {
		return t.cmds.UpdateGoal(ctx, &commands.UpdateGoal{Meta: m, SessionID: inv.SessionID, Update: u})
	})
}

type goalRequestInput struct{ cmds Commands }

var requestSchema = schema.MustCompile(tools.NameGoalRequestInput, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "expected_revision": {"type": "integer", "minimum": 0, "description": "goal_get's revision"},
    "question": {"type": "string", "description": "what you need from the user, at most %d characters"}
  },
  "required": ["expected_revision", "question"],
  "additionalProperties": false
}`, goal.MaxQuestionRunes)), rules(`{"expected_revision": 3, "question": "Which database should the migration target?"}`))

func (t *goalRequestInput) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameGoalRequestInput, Policy: updatePolicy}
}

func (t *goalRequestInput) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameGoalRequestInput, Schema: requestSchema.Raw(), Description: "Ask the user for input " +
		"the active Goal cannot go on without; it pauses the Goal until the user answers this request. For an optional " +
		"clarification keep working on stated assumptions instead. Then end the turn with a final answer."}
}

func (t *goalRequestInput) WritesWorkspace() bool { return false }

func (t *goalRequestInput) Validate(args json.RawMessage) (tools.Parsed, error) {
	var r goal.RequestInput
	if err := requestSchema.Decode(args, &r); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: r}, nil
}

func (t *goalRequestInput) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	r, ok := inv.Args.(goal.RequestInput)
	if !ok {
		return tools.NotValidated(inv)
	}
	r.TurnID, r.RequestID = inv.TurnID, RequestID(inv.SessionID, inv.CallID)
	return send(ctx, t.cmds, inv, details{RequestID: r.RequestID}, func(ctx context.Context, m commands.Meta) (commands.Result, error) {
		return t.cmds.RequestGoalInput(ctx, &commands.RequestGoalInput{Meta: m, SessionID: inv.SessionID, Request: r})
	})
}
