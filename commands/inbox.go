package commands

import (
	"context"

	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/events"
)

// Inbox reads the answers to a session's permission asks from its inbox stream. The turn that
// asked waits here: the answer is a command (AnswerPermission) that may be handled by another
// process, so the log, not a channel, is where it arrives (docs/permissions.md, "Asking").
// The wait is on the process's live feed, not a poll of its own.
type Inbox struct {
	Store    StreamReader
	Registry *events.Registry
	Feed     *live.Feed
}

// Wait returns the answer to askID: one the inbox holds already, else the first to arrive.
func (in Inbox) Wait(ctx context.Context, sessionID, askID string) (events.PermissionAnswered, error) {
	// The head first, then the stream: an answer the read misses lies after the head.
	head, err := in.Feed.Head(ctx)
	if err != nil {
		return events.PermissionAnswered{}, err
	}
	var found *events.PermissionAnswered
	if _, err := Load(ctx, in.Store, in.Registry, InboxStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error {
		if a, ok := p.(events.PermissionAnswered); ok && a.AskID == askID && found == nil {
			found = &a
		}
		return nil
	}); err != nil || found != nil {
		if found == nil {
			return events.PermissionAnswered{}, err
		}
		return *found, nil
	}
	stream := InboxStream(sessionID)
	var answer events.PermissionAnswered
	_, err = in.Feed.Wait(ctx, head, func(rec events.Recorded) bool {
		if rec.Stream != stream || rec.Type != events.TypePermissionAnswered {
			return false
		}
		p, err := in.Registry.Decode(rec)
		a, ok := p.(events.PermissionAnswered)
		if err != nil || !ok || a.AskID != askID {
			return false
		}
		answer = a
		return true
	})
	return answer, err
}
