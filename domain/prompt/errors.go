package prompt

import (
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
)

// Stable error codes of prompt assembly and receipt verification. Invalid inputs are
// domain.Error values with domain.CodeInvalidArgument.
const (
	// CodeContextOverflow is model.CodeContextOverflow: a refusal before sending and a
	// provider's refusal after sending mean the same thing to the turn driver.
	CodeContextOverflow = model.CodeContextOverflow
	// CodeWorkStateOverflow: the authoritative identities of the durable work state do not
	// fit in the runtime.work_state budget even with every other item omitted.
	CodeWorkStateOverflow = "work_state_overflow"
	// CodeReceiptMismatch: a receipt does not prove what it claims; see ReceiptError.
	CodeReceiptMismatch = "receipt_mismatch"
)

// ContextOverflowError refuses a prompt whose estimated provider-visible input exceeds the
// model's known context window. Nothing is truncated to make it fit: which history or
// tool to give up is a decision for the user or the compaction policy, not for assembly.
type ContextOverflowError struct {
	Model           string
	ContextWindow   int64
	EstimatedTokens int64
	// The estimate split by what the turn driver can act on.
	SectionTokens      int64
	ConversationTokens int64
	ToolTokens         int64
	OverheadTokens     int64
	// Largest names the biggest parts, largest first, to say where to cut.
	Largest []PartSize
}

// PartSize is the estimated size of one part of the input.
type PartSize struct {
	// Kind is "section", "message" or "tool"; ID the section id, message index or tool name.
	Kind   string
	ID     string
	Tokens int
}

// Code returns the stable error code.
func (e *ContextOverflowError) Code() string { return CodeContextOverflow }

func (e *ContextOverflowError) Error() string {
	return CodeContextOverflow + ": " + e.Message() + "; " + e.Fix()
}

// Message says what is over the window and where the tokens are.
func (e *ContextOverflowError) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the prompt for model %q is an estimated %d tokens but its context window is %d "+
		"(sections %d, conversation %d, tools %d, message framing %d); nothing was sent",
		e.Model, e.EstimatedTokens, e.ContextWindow,
		e.SectionTokens, e.ConversationTokens, e.ToolTokens, e.OverheadTokens)
	if len(e.Largest) > 0 {
		b.WriteString("; largest parts:")
		for i, p := range e.Largest {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %s (%d)", p.Kind, p.ID, p.Tokens)
		}
	}
	return b.String()
}

// Fix says what to do.
func (e *ContextOverflowError) Fix() string {
	return "compact the conversation, shorten the input or the AGENTS.md files, drop tools, or choose a model with a larger window"
}

func invalid(field, message, fix string) *domain.Error { return domain.Invalid(field, message, fix) }
