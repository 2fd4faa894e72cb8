package events

// Session stream ("session-<sessionId>") payloads: the transcript's identity and user input.

const (
	TypeSessionCreated      = "session.created.1"
	TypeSessionTitled       = "session.titled.1"
	TypeUserMessageAppended = "session.user_message.appended.1"
	TypeDirectoryChanged    = "session.directory.changed.1"
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
