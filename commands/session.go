package commands

import (
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/events"
)

// sessionExecution prepares a session command.
func sessionExecution(meta Meta, sessionID string, cmd session.Command) execution[*session.State] {
	return execution[*session.State]{
		meta: meta, stream: SessionStream(sessionID),
		newState: func() *session.State { return &session.State{} },
		decide:   func(s *session.State) ([]events.Payload, error) { return session.Decide(s, cmd) },
	}
}

// SessionView is what session commands return.
type SessionView struct {
	SessionID       string `json:"sessionId"`
	Title           string `json:"title"`
	Agent           string `json:"agent"`
	ParentSessionID string `json:"parentSessionId,omitempty"`
	Directory       string `json:"directory,omitempty"`
	MessageCount    int    `json:"messageCount"`
}

func sessionView(s *session.State) any {
	if !s.Exists {
		return nil
	}
	return SessionView{SessionID: s.SessionID, Title: s.Title, Agent: s.Agent,
		ParentSessionID: s.ParentSessionID, Directory: s.Directory, MessageCount: s.MessageCount}
}
