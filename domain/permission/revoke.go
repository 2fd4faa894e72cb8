package permission

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// Revoke is the command RevokeGrants: end every standing approval of the session (zuno session
// revoke-grants; a session prune will send it too).
type Revoke struct {
	SessionID string `json:"sessionId"`
}

// SessionGrants is what Revoke is decided on: the session's stream folded for whether the
// session exists, whether a turn is open, and its standing approvals.
type SessionGrants struct {
	Exists   bool
	openTurn string
	Standing Standing
}

// Evolve folds one event of the session stream; every event type is accepted, since the
// session's stream holds its transcript as well.
func (s *SessionGrants) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.SessionCreated, events.SessionForked:
		s.Exists = true
	case events.TurnStarted:
		s.openTurn = e.TurnID
	case events.TurnFinished:
		if e.TurnID == s.openTurn {
			s.openTurn = ""
		}
	}
	s.Standing.Evolve(p)
	return nil
}

// DecideRevoke records the revocation of the session's standing approvals. A session without
// any records nothing (a second revocation changes nothing); one with an open turn is refused,
// since that turn goes on honouring what it folded and would lose its stream to this write.
func DecideRevoke(s *SessionGrants, c Revoke) ([]events.Payload, error) {
	if c.SessionID == "" {
		return nil, domain.Invalid("sessionId", "is empty", "name the session whose standing approvals end")
	}
	if !s.Exists {
		e := domain.NewError(domain.CodeSessionNotFound, fmt.Sprintf("session %s does not exist", c.SessionID),
			"check the id with zuno session list")
		e.ID = c.SessionID
		return nil, e
	}
	if s.openTurn != "" {
		e := domain.NewError(transcript.CodeTurnOpen, fmt.Sprintf("turn %s of session %s is open", s.openTurn, c.SessionID),
			"stop the turn (Ctrl-C where it runs) and revoke again; a turn whose process is gone is closed by the session's next run (zuno run --session "+c.SessionID+" --recover)")
		e.ID = c.SessionID
		return nil, e
	}
	held := s.Standing.Grants()
	if len(held) == 0 {
		return nil, nil
	}
	return []events.Payload{events.PermissionRevoked{SessionID: c.SessionID, Grants: Recorded(held)}}, nil
}
