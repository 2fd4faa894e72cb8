// Package session is the session aggregate (stream "session-<sessionId>"): a session's
// identity, title and user messages. The transcript's later events (prompt receipts, provider
// requests, tool parts) will join this aggregate.
package session

import (
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// State is what decisions about one session need. The zero value is a session that does not
// exist yet; Evolve it with the stream's events in order.
type State struct {
	Exists          bool
	SessionID       string
	Title           string
	Agent           string
	ParentSessionID string
	Directory       string
	// ForkedFrom is the session whose history this one continues (session fork).
	ForkedFrom string
	// MessageCount counts user messages.
	MessageCount int
	// Pruned is how the session was pruned (archive or delete), "" while it is live.
	Pruned string

	messageIDs map[string]bool
}

// HasMessage reports whether a user message with this id was appended.
func (s *State) HasMessage(id string) bool { return s.messageIDs[id] }

// Evolve applies one event of the session stream. The transcript's events share the stream
// and are folded by domain/transcript; any other payload is an error, never skipped.
func (s *State) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.SessionCreated:
		s.Exists = true
		s.SessionID, s.Title, s.Agent = e.SessionID, e.Title, e.Agent
		s.ParentSessionID, s.Directory = e.ParentSessionID, e.Directory
	case events.SessionForked:
		// Folded after the source's history: the fork takes over its identity, keeps its
		// messages, and is a root session of its own.
		s.Exists = true
		s.SessionID, s.Title, s.Agent, s.Directory = e.SessionID, e.Title, e.Agent, e.Directory
		s.ParentSessionID, s.ForkedFrom, s.MessageCount = "", e.Source.SessionID, e.MessageCount
		s.Pruned = "" // the fork is live, whatever became of its source
	case events.SessionPruned:
		s.Pruned = e.Mode
	case events.SessionTitled:
		s.Title = e.Title
	case events.UserMessageAppended:
		if s.messageIDs == nil {
			s.messageIDs = map[string]bool{}
		}
		s.messageIDs[e.MessageID] = true
		s.MessageCount++
	case events.DirectoryChanged:
		s.Directory = e.Directory
	case events.PromptAssembled, events.TurnStarted, events.ProviderRequest, events.ToolBlocked,
		events.ToolStarted, events.ToolSettled, events.TurnFinished, events.PermissionAsked, events.VerificationReceipt,
		events.PermissionGranted, events.PermissionRevoked, events.TurnSuspended, events.TurnResumed, events.TranscriptCompacted:
	default:
		return domain.UnexpectedEvent("session", p)
	}
	return nil
}

// CodeSessionPruned: the session was pruned (archived or deleted) and takes no new message
// or turn.
const CodeSessionPruned = "session_pruned"

// Prune ends a session: archived or deleted, it takes no new message (so no new turn) and
// lists leave it out (docs/server.md, "Pruning a session"). Pruning it again the same way
// decides nothing; a delete after an archive is recorded.
type Prune struct {
	SessionID string
	// Mode is archive or delete.
	Mode   string
	Reason string
}

// Command is one of Create, SetTitle, AppendUserMessage.
type Command interface{ isSessionCommand() }

// Create opens a session.
type Create struct {
	SessionID       string
	Title           string
	Agent           string
	ParentSessionID string
	Directory       string
}

// SetTitle renames a session. Setting the title it already has decides nothing.
type SetTitle struct {
	SessionID string
	Title     string
}

// ChangeDirectory moves the session to another workspace directory. The same directory
// decides nothing.
type ChangeDirectory struct {
	SessionID string
	Directory string
}

// Fork opens SessionID with the history of Source.SessionID up to the event Source names.
// Source is the state of the source session at that event: it must be a session.
type Fork struct {
	SessionID string
	Title     string
	Source    *State
	At        events.ForkSource
}

// AppendUserMessage adds user input to the transcript.
type AppendUserMessage struct {
	SessionID string
	MessageID string
	Text      string
	// InputID and TaskReport deliver a job's report from the session's inbox
	// (docs/delegation.md).
	InputID    string
	TaskReport *events.TaskReport
	// PeerMessage delivers another session's session_message (with InputID).
	PeerMessage *events.PeerMessage
}

func (Create) isSessionCommand()            {}
func (SetTitle) isSessionCommand()          {}
func (AppendUserMessage) isSessionCommand() {}
func (ChangeDirectory) isSessionCommand()   {}
func (Fork) isSessionCommand()              {}
func (Prune) isSessionCommand()             {}

// Decide returns the events a command produces against s, or a *domain.Error. It never
// changes s. A nil s is a session that does not exist.
func Decide(s *State, cmd Command) ([]events.Payload, error) {
	if s == nil {
		s = &State{}
	}
	switch c := cmd.(type) {
	case Create:
		return decideCreate(s, c)
	case SetTitle:
		return decideSetTitle(s, c)
	case AppendUserMessage:
		return decideAppend(s, c)
	case ChangeDirectory:
		return decideDirectory(s, c)
	case Fork:
		return decideFork(s, c)
	case Prune:
		return decidePrune(s, c)
	default:
		return nil, domain.Invalid("command", fmt.Sprintf("%T is not a session command", cmd),
			"send Create, SetTitle, AppendUserMessage, ChangeDirectory, Fork or Prune")
	}
}

func decideCreate(s *State, c Create) ([]events.Payload, error) {
	if err := domain.CheckID("session_id", c.SessionID); err != nil {
		return nil, err
	}
	if s.Exists {
		e := domain.NewError(domain.CodeSessionExists, fmt.Sprintf("session %s already exists", s.SessionID),
			"use a new session id, or continue the existing session")
		e.ID = s.SessionID
		return nil, e
	}
	title, err := domain.CheckTitle("title", c.Title)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Agent) == "" {
		return nil, domain.Invalid("agent", "is empty", "name the agent that runs the session, e.g. build")
	}
	if c.ParentSessionID != "" {
		if err := domain.CheckID("parent_session_id", c.ParentSessionID); err != nil {
			return nil, err
		}
		if c.ParentSessionID == c.SessionID {
			return nil, domain.Invalid("parent_session_id", "names the session itself",
				"omit parent_session_id for a root session")
		}
	}
	return []events.Payload{events.SessionCreated{
		SessionID: c.SessionID, Title: title, Agent: strings.TrimSpace(c.Agent),
		ParentSessionID: c.ParentSessionID, Directory: c.Directory,
	}}, nil
}

func decideSetTitle(s *State, c SetTitle) ([]events.Payload, error) {
	if err := requireSession(s, c.SessionID); err != nil {
		return nil, err
	}
	title, err := domain.CheckTitle("title", c.Title)
	if err != nil {
		return nil, err
	}
	if title == s.Title {
		return nil, nil
	}
	return []events.Payload{events.SessionTitled{SessionID: s.SessionID, Title: title}}, nil
}

func decideAppend(s *State, c AppendUserMessage) ([]events.Payload, error) {
	if err := requireSession(s, c.SessionID); err != nil {
		return nil, err
	}
	if err := domain.CheckID("message_id", c.MessageID); err != nil {
		return nil, err
	}
	if err := refusePruned(s); err != nil {
		return nil, err
	}
	if s.messageIDs[c.MessageID] {
		e := domain.NewError(domain.CodeDuplicateMessage,
			fmt.Sprintf("message %s is already in session %s", c.MessageID, s.SessionID),
			"use a new message id; a retry of the same command is answered by the command layer")
		e.Field, e.ID = "message_id", c.MessageID
		return nil, e
	}
	if strings.TrimSpace(c.Text) == "" {
		return nil, domain.Invalid("text", "is empty", "send a message with some text")
	}
	return []events.Payload{events.UserMessageAppended{SessionID: s.SessionID, MessageID: c.MessageID, Text: c.Text,
		InputID: c.InputID, TaskReport: c.TaskReport, PeerMessage: c.PeerMessage}}, nil
}

func decideDirectory(s *State, c ChangeDirectory) ([]events.Payload, error) {
	if err := requireSession(s, c.SessionID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Directory) == "" {
		return nil, domain.Invalid("directory", "is empty", "name the workspace directory the session moves to")
	}
	if c.Directory == s.Directory {
		return nil, nil
	}
	return []events.Payload{events.DirectoryChanged{SessionID: s.SessionID, Directory: c.Directory, Previous: s.Directory}}, nil
}

func requireSession(s *State, id string) *domain.Error {
	if !s.Exists {
		e := domain.NewError(domain.CodeSessionNotFound, fmt.Sprintf("session %s does not exist", id),
			"create the session first, or check the session id")
		e.ID = id
		return e
	}
	if id != s.SessionID {
		e := domain.Invalid("session_id", fmt.Sprintf("%s is not this session (%s)", id, s.SessionID),
			"load the stream of the session the command names")
		e.ID = id
		return e
	}
	return nil
}

func decideFork(s *State, c Fork) ([]events.Payload, error) {
	if err := domain.CheckID("session_id", c.SessionID); err != nil {
		return nil, err
	}
	if s.Exists {
		e := domain.NewError(domain.CodeSessionExists, fmt.Sprintf("session %s already exists", s.SessionID),
			"fork into a new session id")
		e.ID = s.SessionID
		return nil, e
	}
	if c.Source == nil || !c.Source.Exists {
		return nil, domain.Invalid("from", fmt.Sprintf("event %s is not in a session's history", c.At.EventID),
			"fork from an event of a session stream (zuno events read --stream session-…)")
	}
	title := c.Title
	if strings.TrimSpace(title) == "" {
		title = c.Source.Title + " (fork)"
	}
	title, err := domain.CheckTitle("title", title)
	if err != nil {
		return nil, err
	}
	return []events.Payload{events.SessionForked{SessionID: c.SessionID, Title: title, Agent: c.Source.Agent,
		Directory: c.Source.Directory, MessageCount: c.Source.MessageCount, Source: c.At}}, nil
}

func decidePrune(s *State, c Prune) ([]events.Payload, error) {
	if err := requireSession(s, c.SessionID); err != nil {
		return nil, err
	}
	if c.Mode != events.PruneArchive && c.Mode != events.PruneDelete {
		return nil, domain.Invalid("mode", fmt.Sprintf("%q is not archive or delete", c.Mode),
			"send mode archive (kept, hidden from lists) or delete")
	}
	if s.Pruned == c.Mode || s.Pruned == events.PruneDelete {
		return nil, nil // pruned already, as far as this asks
	}
	return []events.Payload{events.SessionPruned{SessionID: s.SessionID, Mode: c.Mode, Reason: c.Reason}}, nil
}

// refusePruned refuses a new message to a pruned session.
func refusePruned(s *State) error {
	if s.Pruned == "" {
		return nil
	}
	return PrunedError(s.SessionID, s.Pruned)
}

// PrunedError is the refusal of a new message or turn to a session pruned with mode.
func PrunedError(sessionID, mode string) *domain.Error {
	e := domain.NewError(CodeSessionPruned, fmt.Sprintf("session %s was pruned (%s): it takes no new message", sessionID, mode),
		"start a new session, or fork this one (zuno session fork) to go on from its history")
	e.ID = sessionID
	return e
}
