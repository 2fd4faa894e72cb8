package delegation

// Message is one validated session_message call: durable peer context for another session of
// the project (docs/delegation.md, "Peer messages").
type Message struct {
	// Target is the session the message is for.
	Target string
	// Text is what it says; Title, optional, names it in one line.
	Text, Title string
}

// MessageOutcome is what a session_message call answers: the target's inbox input.
type MessageOutcome struct {
	Target  string `json:"target"`
	InputID string `json:"inputId"`
}
