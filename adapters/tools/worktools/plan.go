package worktools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
)

// noArgs is the argument object of the read tools: none.
var noArgs = schema.MustCompile("no_arguments", schema.Compact(`{
  "type": "object",
  "properties": {},
  "additionalProperties": false
}`), rules(`{}`, nil))

// rules are the work tools' Rules: the empty arguments are {}, and null means absent at any
// depth, as an omitted field (docs/tools.md, "Argument schemas").
func rules(example string, fields map[string]schema.Field) schema.Rules {
	return schema.Rules{Example: example, EmptyIsObject: true, NullIsAbsent: true, Fields: fields}
}

type planGet struct{ cmds Commands }

// planGetArgs is plan_get's (empty) validated arguments.
type planGetArgs struct{}

func (t *planGet) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NamePlanGet, Policy: readPolicy}
}

func (t *planGet) Spec() tools.Spec {
	return tools.Spec{Name: tools.NamePlanGet, Schema: noArgs.Raw(), Description: "Read this session's focused plan (an open " +
		"sub-plan, else the root): id, revision, title, status, depth, steps; plan: null when there is none. Call it " +
		"right before every plan_update and send its revision as expected_revision."}
}

func (t *planGet) WritesWorkspace() bool { return false }

func (t *planGet) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a planGetArgs
	if err := noArgs.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: a}, nil
}

func (t *planGet) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	if _, ok := inv.Args.(planGetArgs); !ok {
		return tools.NotValidated(inv)
	}
	return read(ctx, t.cmds, inv, planView)
}

type planUpdate struct{ cmds Commands }

func (t *planUpdate) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NamePlanUpdate, Policy: updatePolicy}
}

// planSchema is plan_update's arguments, as work.PlanUpdate's JSON tags name them. Which
// action reads which field is the domain's table (work.PlanActionFields), quoted in the
// descriptions, so the schema tells the model what Validate and the domain enforce.
var planSchema = schema.MustCompile(tools.NamePlanUpdate, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": %[1]s, "description": %[2]s},
    "expected_revision": {"type": "integer", "minimum": 0, "description": "the last plan_get's revision, unchanged"},
    "title": {"type": "string", "description": %[3]s},
    "steps": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "create, push: optional; append: host-assigned"},
        "title": {"type": "string", "description": "one line, at most 200 characters"},
        "status": {"type": "string", "enum": %[4]s, "description": "default pending"}
      },
      "required": ["title"],
      "additionalProperties": false
    }, "description": %[5]s},
    "patches": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "an existing step of the focused plan"},
        "title": {"type": "string"},
        "status": {"type": "string", "enum": %[4]s}
      },
      "required": ["id"],
      "additionalProperties": false
    }, "description": %[6]s},
    "status": {"type": "string", "enum": %[4]s, "description": %[7]s}
  },
  "required": ["action"],
  "additionalProperties": false
}`, quote(work.PlanActions()), quote(actionUsage()),
	quote("create, push: the new plan's; patch: the focused plan's"),
	quote(work.PlanStatuses()),
	quote("create, push: the new plan's; append: added to the focused plan"),
	quote("patch: step changes of the focused plan, by id"),
	quote("patch: the focused plan's; pop: how the sub-plan closes (completed by default, or superseded)"),
)), rules(`{"action": "patch", "expected_revision": 3, "patches": [{"id": "step-2", "status": "completed"}]}`,
	map[string]schema.Field{"action": {Code: domain.CodeInvalidAction}}))

// quote writes v as JSON, for the computed parts of a schema's text.
func quote(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings and string slices always marshal
	}
	return string(b)
}

// actionUsage lists each action with the fields it reads.
func actionUsage() string {
	var parts []string
	for _, a := range work.PlanActions() {
		parts = append(parts, fmt.Sprintf("%s: %s", a, strings.Join(work.PlanActionFields(a), ", ")))
	}
	return "Fields read besides expected_revision: " + strings.Join(parts, "; ") + "."
}

func (t *planUpdate) Spec() tools.Spec {
	return tools.Spec{Name: tools.NamePlanUpdate, Schema: planSchema.Raw(), Description: "Change this session's durable plan. create: " +
		"the first plan, or a new one for a new goal (the old is superseded); patch: steps by id, title, status; " +
		"append: add steps; push: open a focused sub-plan; pop: close it. Send expected_revision from a plan_get just " +
		"before (only the first create after plan_get returned null omits it); on stale_revision decide again from the " +
		"plan returned, never resend blindly. completed and superseded are final. Returns the plan."}
}

func (t *planUpdate) WritesWorkspace() bool { return false }

func (t *planUpdate) Validate(args json.RawMessage) (tools.Parsed, error) {
	var u work.PlanUpdate
	if err := planSchema.Decode(args, &u); err != nil {
		return tools.Parsed{}, err
	}
	// The domain's own check of the fields an action reads: a call that mixes up two actions
	// is refused before it runs, not after.
	if err := u.CheckShape(); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Action: u.Action, Args: u}, nil
}

func (t *planUpdate) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	u, ok := inv.Args.(work.PlanUpdate)
	if !ok {
		return tools.NotValidated(inv)
	}
	return update(ctx, t.cmds, inv, planView, func(ctx context.Context, m commands.Meta) (commands.Result, error) {
		return t.cmds.UpdatePlan(ctx, &commands.UpdatePlan{Meta: m, SessionID: inv.SessionID, Update: u})
	})
}
