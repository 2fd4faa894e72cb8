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
	u := c.Update
	u.SessionID = c.SessionID
	return handle(ctx, h, "UpdateTodos", workExecution(c.Meta, c.SessionID, u), c, todoView), nil
}
