// Package answers holds the answers to the permission asks of a session's turns, recorded on
// the session's answer stream (still named "inbox-<sessionId>", so logs written before the
// rename read the same). The answers live outside the session stream because the turn that
// asked is that stream's single writer while it waits; an answer is recorded here even when
// the asking turn is gone (docs/permissions.md, "Asking"). It is not the job-report inbox of
// the seeds, which is part of a root session's durable work.
package answers

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Replies an ask accepts.
const (
	ReplyOnce   = "once"
	ReplyAlways = "always"
	ReplyReject = "reject"
)

// CodeAlreadyAnswered is an answer to an ask that has a different answer already: a recorded
// reply is final.
const CodeAlreadyAnswered = "already_answered"

// CodeAskNotPending is an answer to an ask that takes none any more: its turn ended the call
// without running it and closed the ask (session.permission.closed.1). The faces' code for a
// reply to an ask that is not pending (the HTTP face's 404, docs/server.md).
const CodeAskNotPending = "ask_not_pending"

// State is the answers recorded so far, and the asks closed unanswered, by ask id.
type State struct {
	answers map[string]string
	closed  map[string]events.PermissionClosed
}

// Answer is the command: the reply to one ask.
type Answer struct {
	SessionID string `json:"sessionId"`
	AskID     string `json:"askId"`
	CallID    string `json:"callId"`
	Reply     string `json:"reply"`
	// Source is who answered: "user" for a person at a terminal or a client.
	Source string `json:"source"`
}

// Evolve applies one event of the answer stream.
func (s *State) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.PermissionAnswered:
		if s.answers == nil {
			s.answers = map[string]string{}
		}
		s.answers[e.AskID] = e.Reply
	case events.PermissionClosed:
		if s.closed == nil {
			s.closed = map[string]events.PermissionClosed{}
		}
		s.closed[e.AskID] = e
	default:
		return domain.UnexpectedEvent("answers", p)
	}
	return nil
}

// Closed returns the record that closed an ask unanswered.
func (s *State) Closed(askID string) (events.PermissionClosed, bool) {
	c, ok := s.closed[askID]
	return c, ok
}

// Reply returns the recorded reply to an ask.
func (s *State) Reply(askID string) (string, bool) {
	r, ok := s.answers[askID]
	return r, ok
}

// Decide records an answer. The same answer again records nothing (a retried command); a
// different answer to an answered ask is refused.
func Decide(s *State, a Answer) ([]events.Payload, error) {
	switch {
	case a.SessionID == "":
		return nil, domain.Invalid("sessionId", "is empty", "name the session the ask belongs to")
	case a.AskID == "":
		return nil, domain.Invalid("askId", "is empty", "name the ask you answer (its id is on the session.permission.asked event)")
	case a.Reply != ReplyOnce && a.Reply != ReplyAlways && a.Reply != ReplyReject:
		return nil, domain.Invalid("reply", fmt.Sprintf("%q is not a reply", a.Reply), "answer once, always or reject")
	}
	if c, ok := s.Closed(a.AskID); ok {
		e := domain.NewError(CodeAskNotPending, fmt.Sprintf("ask %s takes no answer: its call ended unanswered (%s) and the ask was closed", a.AskID, c.Reason),
			"nothing ran on it and the model was told the call was cancelled; continue the session with a new message (zuno run --session)")
		e.ID = a.AskID
		return nil, e
	}
	if prev, ok := s.Reply(a.AskID); ok {
		if prev == a.Reply {
			return nil, nil
		}
		e := domain.NewError(CodeAlreadyAnswered, fmt.Sprintf("ask %s was already answered %q", a.AskID, prev),
			"a recorded reply is final; the call has been decided")
		e.ID = a.AskID
		return nil, e
	}
	source := a.Source
	if source == "" {
		source = "user"
	}
	return []events.Payload{events.PermissionAnswered{SessionID: a.SessionID, AskID: a.AskID, CallID: a.CallID,
		Reply: a.Reply, Source: source}}, nil
}

// Close ends an ask its turn will never act on. An ask answered already, or closed, records
// nothing: the inbox's revision decides which of a reply and a close came first, and the one
// that came second is refused (a reply) or has no effect (a close).
func Close(s *State, c events.PermissionClosed) ([]events.Payload, error) {
	switch {
	case c.SessionID == "":
		return nil, domain.Invalid("sessionId", "is empty", "name the session the ask belongs to")
	case c.AskID == "":
		return nil, domain.Invalid("askId", "is empty", "name the ask to close")
	}
	if _, ok := s.Reply(c.AskID); ok {
		return nil, nil
	}
	if _, ok := s.Closed(c.AskID); ok {
		return nil, nil
	}
	return []events.Payload{c}, nil
}
