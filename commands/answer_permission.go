package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/events"
)

// AnswerPermission answers a permission ask of a turn.
type AnswerPermission struct {
	Meta
	answers.Answer
}

// AnswerPermission handles AnswerPermission: the reply lands in the session's inbox, where the
// waiting turn reads it; the view is the recorded reply.
func (h *Handlers) AnswerPermission(ctx context.Context, c *AnswerPermission) (Result, error) {
	err := closesNamespace(c.CommandID)
	if err == nil {
		err = h.requireAsk(ctx, c.SessionID, c.AskID)
	}
	if err != nil {
		return Result{CommandID: c.CommandID, Stream: InboxStream(c.SessionID), Revision: -1, Error: NewErrorReply(err)}, nil
	}
	x := execution[*answers.State]{meta: c.Meta, stream: InboxStream(c.SessionID),
		newState: func() *answers.State { return &answers.State{} },
		decide:   func(s *answers.State) ([]events.Payload, error) { return answers.Decide(s, c.Answer) }}
	view := func(s *answers.State) any {
		r, _ := s.Reply(c.AskID)
		return map[string]string{"askId": c.AskID, "reply": r}
	}
	return handle(ctx, h, "AnswerPermission", x, c.Answer, view), nil
}

// closesNamespace refuses a reply under a command id of the form the turn gives its closes
// (CloseAskID): both are commands of the inbox stream, and a reply recorded under the close's
// id would make that close a reuse of another command's id (command_id_reused), so the turn
// could never record the end of the call it closes (docs/permissions.md, "Recovery").
func closesNamespace(commandID string) error {
	if !strings.HasPrefix(commandID, closeAskPrefix) {
		return nil
	}
	return domain.Invalid("commandId", fmt.Sprintf("command id %q is of the form Zuno gives the close of an ask", commandID),
		"send the reply under another command id (one not beginning with "+closeAskPrefix+")")
}

// CodeAskNotFound is an answer to an ask the session never put: an answer cannot wait in the
// inbox for a call that does not exist yet, so nobody can approve a call in advance.
const CodeAskNotFound = "ask_not_found"

// requireAsk checks that the session's log holds the ask being answered.
func (h *Handlers) requireAsk(ctx context.Context, sessionID, askID string) error {
	found := false
	_, err := Load(ctx, h.store, h.registry, SessionStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error {
		if a, ok := p.(events.PermissionAsked); ok && a.AskID == askID {
			found = true
		}
		return nil
	})
	if err != nil || found {
		return err
	}
	e := domain.NewError(CodeAskNotFound, fmt.Sprintf("session %s has no ask %s", sessionID, askID),
		"answer an ask the session recorded (session.permission.asked.1 names its askId)")
	e.ID = askID
	return e
}
