package commands

import (
	"context"
	"time"

	"github.com/zuno-run/zuno/events"
)

// Inbox reads the answers to a session's permission asks from its inbox stream. The turn that
// asked waits here: the answer is a command (AnswerPermission) that may be handled by another
// process, so the log, not a channel, is where it arrives (docs/permissions.md, "Asking").
type Inbox struct {
	Store    StreamReader
	Registry *events.Registry
	// Poll is how often the stream is read while waiting; 0 means 50ms.
	Poll time.Duration
}

// Wait returns the answer to askID, reading the session's inbox until it is there or ctx ends.
func (in Inbox) Wait(ctx context.Context, sessionID, askID string) (events.PermissionAnswered, error) {
	poll := in.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	var from uint64
	for {
		var found *events.PermissionAnswered
		last, err := Load(ctx, in.Store, in.Registry, InboxStream(sessionID), from, func(_ events.Recorded, p events.Payload) error {
			if a, ok := p.(events.PermissionAnswered); ok && a.AskID == askID && found == nil {
				found = &a
			}
			return nil
		})
		if err != nil {
			return events.PermissionAnswered{}, err
		}
		if found != nil {
			return *found, nil
		}
		from = uint64(last + 1)
		select {
		case <-ctx.Done():
			return events.PermissionAnswered{}, ctx.Err()
		case <-time.After(poll):
		}
	}
}
