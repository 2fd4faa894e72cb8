package worktools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
)

type todoGet struct{ cmds Commands }

// todoGetArgs is todo_get's (empty) validated arguments.
type todoGetArgs struct{}

func (t *todoGet) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameTodoGet, Policy: readPolicy}
}

func (t *todoGet) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameTodoGet, Schema: noArgs.Raw(), Description: "Read this session's todo list: its revision " +
		"and every item in creation order. Send the revision as todo_update's expected_revision when your change " +
		"depends on what you read."}
}

func (t *todoGet) WritesWorkspace() bool { return false }

func (t *todoGet) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a todoGetArgs
	if err := noArgs.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: a}, nil
}

func (t *todoGet) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	if _, ok := inv.Args.(todoGetArgs); !ok {
		return tools.NotValidated(inv)
	}
	return read(ctx, t.cmds, inv, todoView)
}

type todoUpdate struct{ cmds Commands }

func (t *todoUpdate) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameTodoUpdate, Policy: updatePolicy}
}

// todoSchema is todo_update's arguments, as work.TodoUpdate's JSON tags name them.
var todoSchema = schema.MustCompile(tools.NameTodoUpdate, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "expected_revision": {"type": "integer", "minimum": 0, "description": "optional: the last todo_get's revision, unchanged"},
    "items": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "an existing item's id, or a new one"},
        "title": {"type": "string", "description": "one line, at most 200 characters; required for a new item"},
        "status": {"type": "string", "enum": %[2]s, "description": "default pending"},
        "owner": {"type": "string", "description": "an agent or job name; \"\" clears it"},
        "dependencies": {"type": "array", "items": {"type": "string"}, "description": "ids of items this one waits for (replaces the list; [] clears it; may name items of this call)"},
        "plan_step_id": {"type": "string", "description": "a step of the current plan; \"\" clears it"}
      },
      "additionalProperties": false
    }, "description": "%[1]d to %[3]d items. An existing id changes only the fields given; any other item is created and needs a title (no id: host-assigned)."}
  },
  "required": ["items"],
  "additionalProperties": false
}`, 1, quote(work.TodoStatuses()), work.MaxTodoItemsPerCall)),
	rules(`{"items": [{"id": "tests", "title": "Run the tests", "status": "pending", "dependencies": ["fix"]}]}`, nil))

func (t *todoUpdate) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameTodoUpdate, Schema: todoSchema.Raw(), Description: "Create or change todo items, the concrete " +
		"work under the plan's steps; items not named are kept. in_progress and completed need every dependency " +
		"completed; completed and cancelled are final. On stale_revision decide again from the list the refusal " +
		"returns. Returns the whole list."}
}

func (t *todoUpdate) WritesWorkspace() bool { return false }

func (t *todoUpdate) Validate(args json.RawMessage) (tools.Parsed, error) {
	var u work.TodoUpdate
	if err := todoSchema.Decode(args, &u); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: u}, nil
}

func (t *todoUpdate) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	u, ok := inv.Args.(work.TodoUpdate)
	if !ok {
		return tools.NotValidated(inv)
	}
	return update(ctx, t.cmds, inv, todoView, func(ctx context.Context, m commands.Meta) (commands.Result, error) {
		return t.cmds.UpdateTodos(ctx, &commands.UpdateTodos{Meta: m, SessionID: inv.SessionID, Update: u})
	})
}
