package events

// Session stream ("session-<sessionId>") payloads: the transcript's identity and user input.

const (
	TypeSessionCreated      = "session.created.1"
	TypeSessionTitled       = "session.titled.1"
	TypeUserMessageAppended = "session.user_message.appended.1"
	TypeDirectoryChanged    = "session.directory.changed.1"
	TypeSessionForked       = "session.forked.1"
	TypeSessionPruned       = "session.pruned.1"
)

// SessionCreated opens a session. A child session (a delegated job's) names its parent so that
// the work stream of the root session can be found from any descendant.
type SessionCreated struct {
	SessionID       string `json:"sessionId"`
	Title           string `json:"title"`
	Agent           string `json:"agent"`
	ParentSessionID string `json:"parentSessionId,omitempty"`
	Directory       string `json:"directory,omitempty"`
}

func (SessionCreated) EventType() string { return TypeSessionCreated }

// SessionTitled carries the whole new title, so a projector never needs the previous one.
type SessionTitled struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
}

func (SessionTitled) EventType() string { return TypeSessionTitled }

// UserMessageAppended records user input before any prompt is assembled from it, so that every
// prompt receipt can point back to the exact text it was built from.
type UserMessageAppended struct {
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId"`
	Text      string `json:"text"`
	// InputID and TaskReport are set when the message delivers a job's report from the
	// session's inbox (docs/delegation.md): the report is consumed once this is recorded.
	InputID    string      `json:"inputId,omitempty"`
	TaskReport *TaskReport `json:"taskReport,omitempty"`
	// PeerMessage is set when the message delivers another session's session_message.
	PeerMessage *PeerMessage `json:"peerMessage,omitempty"`
}

func (UserMessageAppended) EventType() string { return TypeUserMessageAppended }

// DirectoryChanged moves a session to another workspace directory (zuno run --session S --dir
// D): later turns work there, and the log says from when.
type DirectoryChanged struct {
	SessionID string `json:"sessionId"`
	Directory string `json:"directory"`
	// Previous is the directory the session worked in before.
	Previous string `json:"previous,omitempty"`
}

func (DirectoryChanged) EventType() string { return TypeDirectoryChanged }

// SessionForked opens a session whose history is another session's up to one event, by
// reference: the source's events are not copied. Loading the fork's stream folds the source
// stream up to Source.Revision first (commands.Load), then the fork's own events. Source.Hash
// pins that history: loading refuses a source whose event at that revision no longer carries
// it (docs/storage.md, "Forks").
type SessionForked struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	Agent     string `json:"agent"`
	Directory string `json:"directory,omitempty"`
	// MessageCount is how many user messages the history holds, for the session read model,
	// which sees only the fork's own events.
	MessageCount int        `json:"messageCount"`
	Source       ForkSource `json:"source"`
}

// ForkSource is the event a fork's history ends with.
type ForkSource struct {
	SessionID string `json:"sessionId"`
	Stream    string `json:"stream"`
	Revision  uint64 `json:"revision"`
	Position  uint64 `json:"position"`
	EventID   string `json:"eventId"`
	// Hash is that event's link in its stream's hash chain.
	Hash string `json:"hash"`
}

func (SessionForked) EventType() string { return TypeSessionForked }

// ForkedFrom names the stream and last revision whose events come before this stream's own.
func (e SessionForked) ForkedFrom() (stream string, revision uint64, hash string) {
	return e.Source.Stream, e.Source.Revision, e.Source.Hash
}

// Prune modes (SessionPruned.Mode).
const (
	PruneArchive = "archive"
	PruneDelete  = "delete"
)

// SessionPruned ends a session (POST /api/session/prune; docs/server.md, "Pruning a
// session"): it takes no further turn or message, and lists leave it out. Mode is archive or
// delete; a delete keeps the session's events, since the log is append-only and hash-chained
// (docs/storage.md), and records only that the session's owner wanted it gone. The same
// append ends the session's standing approvals (session.permission.revoked.1) when it held any.
type SessionPruned struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode"`
	// Reason is the client's note, for the record.
	Reason string `json:"reason,omitempty"`
}

func (SessionPruned) EventType() string { return TypeSessionPruned }
