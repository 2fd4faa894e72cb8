package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/session"
)

// CreateSession creates a session.
type CreateSession struct {
	Meta
	session.Create
}

// CreateSession handles CreateSession.
func (h *Handlers) CreateSession(ctx context.Context, c *CreateSession) (Result, error) {
	return handle(ctx, h, "CreateSession", sessionExecution(c.Meta, c.SessionID, c.Create), c.Create, sessionView), nil
}
