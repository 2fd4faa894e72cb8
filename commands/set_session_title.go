package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/session"
)

// SetSessionTitle renames a session.
type SetSessionTitle struct {
	Meta
	session.SetTitle
}

// SetSessionTitle handles SetSessionTitle.
func (h *Handlers) SetSessionTitle(ctx context.Context, c *SetSessionTitle) (Result, error) {
	return handle(ctx, h, "SetSessionTitle", sessionExecution(c.Meta, c.SessionID, c.SetTitle), c.SetTitle, sessionView), nil
}
