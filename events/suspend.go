package events

// A turn that waits for something only a person or another process can give (an answer to a
// permission ask) suspends: it records what it waits for and gives its lease back, so no
// process holds it while nobody answers. It resumes as a new command (ResumeTurn) whose first
// event is TurnResumed, in whichever process picks it up (docs/turns.md, "Suspended turns").
const (
	TypeTurnSuspended = "session.turn.suspended.1"
	TypeTurnResumed   = "session.turn.resumed.1"
)

// Input kinds: what a turn was given to continue with (docs/turns.md, "Input kinds").
const (
	// InputUserText is a user message: it starts a turn.
	InputUserText = "user_text"
	// InputAnswer is the answer to a permission ask: it resumes a suspended turn.
	InputAnswer = "answer"
)

// Awaited is one thing a suspended turn waits for.
type Awaited struct {
	// Kind is what is awaited: "permission" (an answer to AskID, asked for CallID).
	Kind   string `json:"kind"`
	AskID  string `json:"askId"`
	CallID string `json:"callId"`
}

// TurnSuspended records that turn TurnID stopped to wait for Awaiting; nothing of it runs
// until a ResumeTurn continues it.
type TurnSuspended struct {
	SessionID string    `json:"sessionId"`
	TurnID    string    `json:"turnId"`
	Awaiting  []Awaited `json:"awaiting"`
}

func (TurnSuspended) EventType() string { return TypeTurnSuspended }

// TurnResumed records that turn TurnID continues, given Input: Kind (InputAnswer) and the
// event that triggered the resumption (TriggerEventID: the answer's event id), from which the
// resuming command's id derives.
type TurnResumed struct {
	SessionID      string `json:"sessionId"`
	TurnID         string `json:"turnId"`
	Input          string `json:"input"`
	TriggerEventID string `json:"triggerEventId,omitempty"`
}

func (TurnResumed) EventType() string { return TypeTurnResumed }
