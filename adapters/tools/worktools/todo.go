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
	return tools.Spec{Name: tools.NameTodoGet, Schema: noArgs.Raw(), Description: "Read this session's todo list: " +
		"its revision and every item (id, title, status, owner, dependencies, plan_step_id) in creation order. " +
		"Pass the revision as expected_revision to todo_update when your change depends on what you read."}
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
    "expected_revision": {"type": "integer", "minimum": 0, "description": "Optional: the revision the last todo_get returned, unchanged, when your change depends on the list as you read it. On stale_revision the list changed since: read the current list in the result and decide again."},
    "items": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "description": "the item's id: an existing item's, or a new one's of your choice"},
        "title": {"type": "string", "description": "one line, at most 200 characters; required for a new item"},
        "status": {"type": "string", "enum": %[2]s, "description": "default pending for a new item; in_progress and completed need every dependency completed; completed and cancelled are final"},
        "owner": {"type": "string", "description": "who works on it (an agent or job name); \"\" clears it"},
        "dependencies": {"type": "array", "items": {"type": "string"}, "description": "ids of the items this one waits for, replacing the list; [] clears it; an item created in the same call may be named"},
        "plan_step_id": {"type": "string", "description": "links the item to a step of the current plan; \"\" clears the link"}
      },
      "required": [],
      "additionalProperties": false
    }, "description": "%[1]d to %[3]d items to create or change. An item whose id exists is changed (only the fields given); any other item is created and needs a title (leave id out for a host-assigned one)."}
  },
  "required": ["items"],
  "additionalProperties": false
}`, 1, quote(work.TodoStatuses()), work.MaxTodoItemsPerCall)),
	rules(`{"items": [{"id": "tests", "title": "Run the tests", "status": "pending", "dependencies": ["fix"]}]}`, nil))

func (t *todoUpdate) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameTodoUpdate, Schema: todoSchema.Raw(), Description: "Create or change todo items: " +
		"concrete work under the plan's steps, with an owner, dependencies and a status. Items not named are left as they are. " +
		"An item cannot be in_progress or completed before its dependencies are completed (dependency_unmet), and a completed " +
		"or cancelled item cannot change (terminal_state). Revision rule: expected_revision is optional here, but when sent it " +
		"must be the revision todo_get returned; on stale_revision read the current list the refusal returns and decide again. " +
		"Returns the whole todo list after the change."}
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
