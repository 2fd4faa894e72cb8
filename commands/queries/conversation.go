package queries

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// ConversationMessage is one message of a session's conversation as a person reads it: who
// said it, the text, the calls an assistant message made and the call a tool result answers.
// Reasoning items (opaque, often encrypted) are left out.
type ConversationMessage struct {
	Role       string             `json:"role"`
	Text       string             `json:"text,omitempty"`
	ToolCalls  []ConversationCall `json:"toolCalls,omitempty"`
	ToolCallID string             `json:"toolCallId,omitempty"`
	IsError    bool               `json:"isError,omitempty"`
}

// ConversationCall is one tool call of an assistant message.
type ConversationCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Conversation folds a session's stream (a fork's source history included) into its
// conversation, in the order the model is shown it (domain/transcript): what zuno session
// show prints.
func (q *Queries) Conversation(ctx context.Context, sessionID string) ([]ConversationMessage, error) {
	if err := q.RequireSession(ctx, sessionID); err != nil {
		return nil, err
	}
	tr := transcript.New()
	_, err := commands.Load(ctx, q.log, q.registry, commands.SessionStream(sessionID), 0,
		func(_ events.Recorded, p events.Payload) error { return tr.Evolve(p) })
	if err != nil {
		return nil, err
	}
	out := make([]ConversationMessage, 0, len(tr.Messages))
	for _, m := range tr.Messages {
		c := ConversationMessage{Role: string(m.Role), Text: m.Text, ToolCallID: m.ToolCallID, IsError: m.IsError}
		for _, tc := range m.ToolCalls {
			c.ToolCalls = append(c.ToolCalls, ConversationCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		out = append(out, c)
	}
	return out, nil
}
