package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/work"
)

// UpdateTodos is todo_update for the root session SessionID.
type UpdateTodos struct {
	Meta
	SessionID string          `json:"sessionId"`
	Update    work.TodoUpdate `json:"update"`
}

// UpdateTodos handles UpdateTodos (todo_update); the view is the todo list after the update.
func (h *Handlers) UpdateTodos(ctx context.Context, c *UpdateTodos) (Result, error) {
	root, err := RootSession(ctx, h.store, h.registry, c.SessionID)
	if err != nil {
		return Result{CommandID: c.CommandID, Stream: WorkStream(c.SessionID), Revision: -1, Error: NewErrorReply(err)}, nil
	}
	u := c.Update
	u.SessionID = root
	return updateWork(ctx, h, "UpdateTodos", c.Meta, root, u, c, todoView), nil
}
