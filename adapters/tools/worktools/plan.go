package worktools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
  "required": [],
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
	return tools.Spec{Name: tools.NamePlanGet, Schema: noArgs.Raw(), Description: "Read this session's durable plan: " +
		"the focused plan (an open sub-plan, else the root plan) with its id, revision, title, status, depth and steps. " +
		"Returns plan: null when there is no plan yet. Call it immediately before every plan_update and pass its " +
		"revision unchanged as expected_revision."}
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
    "expected_revision": {"type": "integer", "minimum": 0, "description": "The revision the last plan_get returned, unchanged. Required for every action except the first create after plan_get returned null. On stale_revision the plan changed since: read the current plan in the result and decide again."},
    "title": {"type": "string", "description": %[3]s},
    "steps": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "create, push: optional step id (host-assigned when left out); append: leave out, the host assigns it"},
        "title": {"type": "string", "description": "one line, at most 200 characters"},
        "status": {"type": "string", "enum": %[4]s, "description": "default pending"}
      },
      "required": ["title"],
      "additionalProperties": false
    }, "description": %[5]s},
    "patches": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "the id of an existing step of the focused plan"},
        "title": {"type": "string", "description": "the step's new title"},
        "status": {"type": "string", "enum": %[4]s, "description": "the step's new status; completed and superseded steps cannot change again"}
      },
      "required": ["id"],
      "additionalProperties": false
    }, "description": %[6]s},
    "status": {"type": "string", "enum": %[4]s, "description": %[7]s}
  },
  "required": ["action"],
  "additionalProperties": false
}`, quote(work.PlanActions()), quote("What to do. "+actionUsage()),
	quote(usedBy("title")+": the new plan's title (create, push) or the focused plan's new title (patch)"),
	quote(work.PlanStatuses()),
	quote(usedBy("steps")+": the new plan's steps (create, push) or the steps to add to the focused plan (append)"),
	quote(usedBy("patches")+": changes to steps of the focused plan, by id"),
	quote(usedBy("status")+": the focused plan's own status (patch), or how the sub-plan closes (pop: completed, the default, or superseded)"),
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
	return "Fields each action reads besides expected_revision: " + strings.Join(parts, "; ") + "."
}

// usedBy names the actions that read field.
func usedBy(name string) string {
	var users []string
	for _, a := range work.PlanActions() {
		if slices.Contains(work.PlanActionFields(a), name) {
			users = append(users, a)
		}
	}
	return "Only with action=" + strings.Join(users, ", ")
}

func (t *planUpdate) Spec() tools.Spec {
	return tools.Spec{Name: tools.NamePlanUpdate, Schema: planSchema.Raw(), Description: "Change this session's durable plan. " +
		"action=create makes the first plan or replaces it for a new goal (the old one is superseded); " +
		"patch changes steps by id, the title or the plan's status; append adds steps (the host assigns their ids); " +
		"push opens a focused sub-plan under the current one; pop closes the sub-plan and returns to its exact parent. " +
		"Revision rule: call plan_get immediately before, and send the revision it returned as expected_revision; " +
		"only the first create after plan_get returned null may leave it out. A stale_revision refusal means the plan " +
		"changed: read the current plan the refusal returns and decide again, never resend blindly. " +
		"completed and superseded are final for plans and steps. Returns the plan after the change."}
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
