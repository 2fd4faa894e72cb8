package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/session"
)

// AppendUserMessage records a user message.
type AppendUserMessage struct {
	Meta
	session.AppendUserMessage
}

// AppendUserMessage handles AppendUserMessage.
func (h *Handlers) AppendUserMessage(ctx context.Context, c *AppendUserMessage) (Result, error) {
	return handle(ctx, h, "AppendUserMessage", sessionExecution(c.Meta, c.SessionID, c.AppendUserMessage), c.AppendUserMessage, sessionView), nil
}
