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

// Answer is a recorded answer to an ask, with the event that recorded it (the trigger a
// suspended turn's resumption derives its command id from).
type Answer struct {
	Record events.Recorded
	events.PermissionAnswered
}

// Find returns the answer to askID the inbox holds, found false when it holds none yet.
func (in Inbox) Find(ctx context.Context, sessionID, askID string) (Answer, bool, error) {
	var found *Answer
	_, err := Load(ctx, in.Store, in.Registry, InboxStream(sessionID), 0, func(rec events.Recorded, p events.Payload) error {
		if a, ok := p.(events.PermissionAnswered); ok && a.AskID == askID && found == nil {
			found = &Answer{Record: rec, PermissionAnswered: a}
		}
		return nil
	})
	if err != nil || found == nil {
		return Answer{}, false, err
	}
	return *found, true, nil
}

// Answered is Find without the record: the turn driver's question (turn.Inbox).
func (in Inbox) Answered(ctx context.Context, sessionID, askID string) (events.PermissionAnswered, bool, error) {
	a, ok, err := in.Find(ctx, sessionID, askID)
	return a.PermissionAnswered, ok, err
}

// Wait returns the answer to askID: one the inbox holds already, else the first to arrive.
// The feed says when the inbox gains an answer; the inbox stream says whose.
func (in Inbox) Wait(ctx context.Context, sessionID, askID string) (events.PermissionAnswered, error) {
	// The head first, then the stream: an answer the read misses lies after the head.
	after, err := in.Feed.Head(ctx)
	if err != nil {
		return events.PermissionAnswered{}, err
	}
	stream := InboxStream(sessionID)
	for {
		if a, ok, err := in.Answered(ctx, sessionID, askID); err != nil || ok {
			return a, err
		}
		rec, err := in.Feed.Wait(ctx, after, func(rec events.Recorded) bool {
			return rec.Stream == stream && rec.Type == events.TypePermissionAnswered
		})
		if err != nil {
			return events.PermissionAnswered{}, err
		}
		after = rec.Position // an answer to another ask: wait on after it
	}
}
