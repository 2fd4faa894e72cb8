package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/events"
)

// Inbox reads the answers to a session's permission asks from its inbox stream. The turn that
// asked waits here: the answer is a command (AnswerPermission) that may be handled by another
// process, so the log, not a channel, is where it arrives (docs/permissions.md, "Asking").
// The wait is on the process's live feed, not a poll of its own.
type Inbox struct {
	// Store is the log; closing an ask (Close) appends to it, so it must be an EventStore
	// then.
	Store    StreamReader
	Registry *events.Registry
	Feed     *live.Feed
	// Clock stamps a close; the wall clock when nil.
	Clock Clock
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

// Closed reports whether askID was closed unanswered: its turn ended the call without running
// it (session.permission.closed.1), so the ask takes no answer.
func (in Inbox) Closed(ctx context.Context, sessionID, askID string) (bool, error) {
	s, err := in.state(ctx, sessionID)
	if err != nil {
		return false, err
	}
	_, closed := s.Closed(askID)
	return closed, nil
}

func (in Inbox) state(ctx context.Context, sessionID string) (*answers.State, error) {
	s := &answers.State{}
	_, err := Load(ctx, in.Store, in.Registry, InboxStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error {
		return s.Evolve(p)
	})
	return s, err
}

// CloseAskID is the command id of the close of an ask: one per ask, so the close a stopped
// process recorded and the one its recovery sends again are one command.
func CloseAskID(sessionID, askID string) string { return closeAskPrefix + sessionID + "/" + askID }

// closeAskPrefix begins every close's command id; a reply may not use it (AnswerPermission).
const closeAskPrefix = "close-ask/"

// Close records that the turn ended c's call unanswered, unless the ask was answered (or
// closed) first: the inbox's decision at its revision picks the one of a reply and the close
// that is recorded, never the timing (docs/permissions.md, "Recovery"). A reply that loses is
// ask_not_pending; a close that loses records nothing.
func (in Inbox) Close(ctx context.Context, meta Meta, c events.PermissionClosed) error {
	store, ok := in.Store.(EventStore)
	if !ok {
		return fmt.Errorf("inbox: the store %T cannot append: ask %s of session %s cannot be closed", in.Store, c.AskID, c.SessionID)
	}
	clock := in.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	// The digest names the ask alone: a close sent again for another reason (recovered after
	// interrupted) is the same command, answered with its first result.
	digest, err := Digest("CloseAsk", map[string]string{"sessionId": c.SessionID, "askId": c.AskID})
	if err != nil {
		return err
	}
	x := execution[*answers.State]{store: store, registry: in.Registry, clock: clock, meta: meta, digest: digest,
		stream: InboxStream(c.SessionID), newState: func() *answers.State { return &answers.State{} },
		decide: func(s *answers.State) ([]events.Payload, error) { return answers.Close(s, c) }}
	_, _, err = x.run(ctx)
	var reused *CommandIDReusedError
	if errors.As(err, &reused) && !strings.HasSuffix(meta.CommandID, closeAgain) {
		// A reply took the close's id, recorded before AnswerPermission refused such ids: the
		// close is decided under a second id, derived as the first, so that a close sent
		// again is still one command.
		x.meta.CommandID += closeAgain
		_, _, err = x.run(ctx)
	}
	return err
}

// closeAgain ends the id a close takes when a reply of an older build holds its own.
const closeAgain = "/again"
