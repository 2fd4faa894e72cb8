package worktools

import (
	"context"
	"encoding/json"
	"fmt"

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
	return tools.Spec{Name: tools.NameTodoGet, Schema: noArgs.schema(), Description: "Read this session's todo list: " +
		"its revision and every item (id, title, status, owner, dependencies, plan_step_id) in creation order. " +
		"Pass the revision as expected_revision to todo_update when your change depends on what you read."}
}

func (t *todoGet) WritesWorkspace() bool { return false }

func (t *todoGet) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a todoGetArgs
	if err := noArgs.decode(args, &a); err != nil {
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

// todoShape is todo_update's arguments, as work.TodoUpdate's JSON tags name them.
var todoShape = shape{
	example: `{"items": [{"id": "tests", "title": "Run the tests", "status": "pending", "dependencies": ["fix"]}]}`,
	fields: []field{
		{name: "expected_revision", kind: kRevision, desc: "Optional: the revision the last todo_get returned, unchanged, " +
			"when your change depends on the list as you read it. On stale_revision the list changed since: " +
			"read the current list in the result and decide again."},
		{name: "items", kind: kObjects, required: true, desc: fmt.Sprintf("1 to %d items to create or change. "+
			"An item whose id exists is changed (only the fields given); any other item is created and needs a title "+
			"(leave id out for a host-assigned one).", work.MaxTodoItemsPerCall),
			elem: []field{
				{name: "id", kind: kString, desc: "the item's id: an existing item's, or a new one's of your choice"},
				{name: "title", kind: kString, desc: "one line, at most 200 characters; required for a new item"},
				{name: "status", kind: kString, enum: work.TodoStatuses(), desc: "default pending for a new item; " +
					"in_progress and completed need every dependency completed; completed and cancelled are final"},
				{name: "owner", kind: kString, desc: "who works on it (an agent or job name); \"\" clears it"},
				{name: "dependencies", kind: kStrings, desc: "ids of the items this one waits for, replacing the list; " +
					"[] clears it; an item created in the same call may be named"},
				{name: "plan_step_id", kind: kString, desc: "links the item to a step of the current plan; \"\" clears the link"},
			}},
	},
}

func (t *todoUpdate) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameTodoUpdate, Schema: todoShape.schema(), Description: "Create or change todo items: " +
		"concrete work under the plan's steps, with an owner, dependencies and a status. Items not named are left as they are. " +
		"An item cannot be in_progress or completed before its dependencies are completed (dependency_unmet), and a completed " +
		"or cancelled item cannot change (terminal_state). Revision rule: expected_revision is optional here, but when sent it " +
		"must be the revision todo_get returned; on stale_revision read the current list the refusal returns and decide again. " +
		"Returns the whole todo list after the change."}
}

func (t *todoUpdate) WritesWorkspace() bool { return false }

func (t *todoUpdate) Validate(args json.RawMessage) (tools.Parsed, error) {
	var u work.TodoUpdate
	if err := todoShape.decode(args, &u); err != nil {
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
