package turn

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// maxCompactionsPerStep bounds the compactions one step runs before it gives up with the
// context overflow: each summarises what fits in one request, so a transcript far over the
// window takes a few.
const maxCompactionsPerStep = 8

// CodeCompactionFailed: the compaction request answered without a summary.
const CodeCompactionFailed = "compaction_failed"

// fit assembles the step's prompt, and when a known context window refuses it, compacts the
// transcript (docs/compaction.md) and assembles again from the conversation after the new
// boundary. conversation returns the step's conversation as the transcript now holds it. A
// prompt that does not fit even then is refused with the overflow, as without compaction.
// Errors the turn should end with are *refusedPrompt; any other is a failure to record.
func (r *run) fit(ctx context.Context, in prompt.Input, conversation func() []model.Message) (prompt.Assembled, error) {
	for i := 0; ; i++ {
		in.Conversation = conversation()
		asm, err := prompt.Assemble(in)
		var over *prompt.ContextOverflowError
		if err == nil || !errors.As(err, &over) || i == maxCompactionsPerStep {
			if err != nil {
				err = &refusedPrompt{err}
			}
			return asm, err
		}
		moved, err := r.compact(ctx, in, over)
		if err != nil {
			return asm, err
		}
		if !moved {
			return asm, &refusedPrompt{over}
		}
	}
}

// compact runs one compaction: it chooses the boundary, sends the compaction request (the
// conversation before the boundary and the host's instruction, tools closed), and records the
// summary as the transcript's new opening. It reports false, having recorded nothing, when
// nothing can be summarised or the summary request itself would not fit.
func (r *run) compact(ctx context.Context, in prompt.Input, over *prompt.ContextOverflowError) (bool, error) {
	msgs := r.tr.Messages
	// What the step's prompt costs besides the transcript: sections, tools, their framing.
	fixed := over.EstimatedTokens - over.ConversationTokens - prompt.MessageOverheadTokens*int64(len(in.Conversation))
	budget := over.ContextWindow - fixed
	instruction := model.Message{Role: model.RoleDeveloper, Text: transcript.CompactionInstruction}
	// Keep the latest messages worth up to half of the conversation's room, verbatim.
	through := transcript.Boundary(msgs, budget/2, prompt.MessageTokens)
	// The compaction request carries the messages it summarises: summarise at most what fits.
	through = min(through, fitting(msgs, budget-prompt.MessageTokens(instruction)))
	if through < 1 || futile(msgs, through, budget) {
		return false, nil
	}
	cin := in
	cin.ToolChoice = model.ToolChoice{Mode: model.ToolChoiceNone}
	cin.Conversation = append(msgs[:through:through], instruction)
	asm, err := prompt.Assemble(cin)
	if err != nil {
		return false, nil // the estimate said it fits and assembly disagrees: give up, refused
	}
	base, err := r.recordPrompt(ctx, asm, through, events.ProviderRequest{Purpose: events.PurposeCompaction})
	if err != nil {
		return false, err
	}
	r.summarising = true
	resp, base, begun, err := r.send(ctx, asm.Request, base)
	r.summarising = false
	if err != nil {
		return false, r.failCompaction(base, begun, err)
	}
	completed := base
	completed.Status, completed.Response, completed.DurationMs = events.RequestCompleted, recordResponse(resp), elapsedMs(begun)
	completed.Wire = r.lastWire
	// Tools were closed: a call named anyway is recorded, never run.
	completed.Response.ClosedToolCalls, completed.Response.ToolCalls = completed.Response.ToolCalls, nil
	if err := r.stage(completed); err != nil {
		return false, err
	}
	summary := strings.TrimSpace(resp.Text)
	if summary == "" {
		return false, &refusedPrompt{domain.NewError(CodeCompactionFailed, "the compaction request "+base.RequestID+" answered without a summary",
			"retry the turn; if the model keeps answering empty, choose a model with a larger context window")}
	}
	if err := r.stage(r.compacted(base, through, summary)); err != nil {
		return false, err
	}
	// The next receipt is stored whole: its conversation shares nothing with the last window's.
	r.prev, r.prevID = nil, ""
	return true, r.commit(ctx)
}

// compacted is the event that moves the boundary to through with summary.
func (r *run) compacted(req events.ProviderRequest, through int, summary string) events.TranscriptCompacted {
	msgs := r.tr.Messages
	c := transcript.Compaction{Window: r.tr.Window + 1, Through: through, Kept: len(msgs) - through,
		Responses: transcript.Responses(msgs[:through]), Summary: summary}
	digest := ""
	if logged, err := prompt.LoggedMessages(msgs[:through]); err == nil {
		digest, _ = prompt.ConversationDigest(logged.Parts)
	}
	var before, after int64
	for i, m := range msgs {
		before += prompt.MessageTokens(m)
		if i >= through {
			after += prompt.MessageTokens(m)
		}
	}
	after += prompt.MessageTokens(model.Message{Role: model.RoleUser, Text: transcript.SummaryMessage(c.Window, through, c.Responses, summary)})
	return r.tr.Compacted(r.turnID, req, c, digest, before, after)
}

// failCompaction records the compaction request's failure; the turn ends with it (or is
// interrupted, when the run was cancelled).
func (r *run) failCompaction(base events.ProviderRequest, begun time.Time, err error) error {
	var rec *recordError
	if errors.As(err, &rec) {
		return rec.err
	}
	if errors.Is(err, errWaitCancelled) {
		return &refusedPrompt{context.Canceled}
	}
	failed := base
	failed.Status, failed.Error, failed.Wire, failed.DurationMs = events.RequestFailed, errorInfo(err), r.lastWire, elapsedMs(begun)
	if err := r.stage(failed); err != nil {
		return err
	}
	return &refusedPrompt{err}
}

// futile reports whether a compaction at through could not help, so no request is spent on
// it: the messages that must stay verbatim (those after the latest boundary position, the
// current input among them) do not fit the room on their own, or the range to summarise is
// only the previous summary (a summary of a summary gains nothing).
func futile(msgs []model.Message, through int, budget int64) bool {
	if through == 1 {
		if _, ok := transcript.SummarisedResponses(msgs[0].Text); ok && msgs[0].Role == model.RoleUser {
			return true
		}
	}
	last := transcript.Boundary(msgs, 0, prompt.MessageTokens) // the latest position: the least kept
	var kept int64
	for _, m := range msgs[last:] {
		kept += prompt.MessageTokens(m)
	}
	return kept > budget
}

// fitting is the latest position b ≥ 1 whose first b messages cost at most budget and end
// before a step (msgs[b] is not a tool result), 0 when there is none.
func fitting(msgs []model.Message, budget int64) int {
	var cost int64
	best := 0
	for b := 1; b < len(msgs); b++ {
		cost += prompt.MessageTokens(msgs[b-1])
		if cost > budget {
			break
		}
		if msgs[b].Role != model.RoleTool {
			best = b
		}
	}
	return best
}
