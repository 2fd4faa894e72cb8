package events

// Notes stream ("notes-<sessionId>") payloads: the logical documents a session's agent keeps
// through the notes tool (docs/tools.md, "history and notes"). A session runs one agent, so
// the stream is the (session, agent) scope the seeds name.

const TypeNoteWritten = "notes.document.written.1"

// Note actions as NoteWritten records them.
const (
	NoteAppend = "append"
	NoteWrite  = "write"
)

// NoteWritten changed one document: Action write replaced its content with Content, append
// added Content at its end (creating it when it did not exist). Revision is the document's
// revision after the change (1 when created); Bytes and SHA256 describe its whole content
// after it. CallID is the tool call that asked for it.
type NoteWritten struct {
	SessionID string `json:"sessionId"`
	Name      string `json:"name"`
	Action    string `json:"action"`
	Revision  uint64 `json:"revision"`
	Content   string `json:"content"`
	Bytes     int    `json:"bytes"`
	SHA256    string `json:"sha256"`
	CallID    string `json:"callId"`
}

func (NoteWritten) EventType() string { return TypeNoteWritten }
