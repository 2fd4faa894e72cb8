package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// CompactionInstruction is the host's instruction that ends a compaction request: the
// conversation before the boundary, then this (docs/compaction.md).
const CompactionInstruction = "The conversation above is about to be replaced by a summary, because it no longer fits " +
	"the model's context window. Tools are closed for this request. Write that summary now, as plain text: the user's " +
	"requests and constraints in their own words where they matter, what was done (files read and changed, commands " +
	"run and their results), decisions taken and why, open questions, and what remains to do. Keep identifiers, paths, " +
	"error codes and revision numbers exact. Do not call tools and do not address the user."

// summaryHeader opens the message that stands for the summarised messages. Its numbers let a
// reader (and the scripted provider) know how many model answers the summary replaces
// without the messages themselves.
const summaryHeader = "[zuno compaction %d: the %d messages before this point (%d of them your answers) were replaced by " +
	"this summary, written by the model. The session log keeps them; the history tool reads them when continuity is on.]\n\n"

var summaryHeaderPattern = regexp.MustCompile(`^\[zuno compaction (\d+): the (\d+) messages before this point \((\d+) of them your answers\)`)

// SummaryMessage is the text of the user message a compaction opens the conversation with.
func SummaryMessage(window, through, responses int, summary string) string {
	return fmt.Sprintf(summaryHeader, window, through, responses) + summary
}

// SummarisedResponses returns how many model answers a summary message stands for, and
// whether text is one.
func SummarisedResponses(text string) (int, bool) {
	m := summaryHeaderPattern.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[3])
	return n, err == nil
}

// Responses counts the model answers msgs stand for: assistant messages, and those a summary
// message replaced.
func Responses(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		switch m.Role {
		case model.RoleAssistant:
			n++
		case model.RoleUser:
			if k, ok := SummarisedResponses(m.Text); ok {
				n += k
			}
		}
	}
	return n
}

// Boundary chooses where a compaction moves the transcript boundary in msgs: the smallest
// position b ≥ 1 at which the messages from b on cost at most keep tokens (cost estimates one
// message), with msgs[b] not a tool result (a call and its results stay together) and b
// before the last message (the current input is always kept). It returns 0 when no such
// position exists: nothing can be summarised. When no tail fits keep, the latest safe
// position is taken: the most that can be summarised.
func Boundary(msgs []model.Message, keep int64, cost func(model.Message) int64) int {
	var tail int64
	best, last := 0, 0
	for b := len(msgs) - 1; b >= 1; b-- {
		tail += cost(msgs[b])
		if msgs[b].Role == model.RoleTool {
			continue
		}
		if last == 0 {
			last = b
		}
		if tail > keep {
			break // the tail only grows from here
		}
		best = b
	}
	if best == 0 {
		return last
	}
	return best
}

// Compaction is what a compaction decided, before it is recorded.
type Compaction struct {
	Window, Through, Kept, Responses int
	Summary                          string
}

// Compacted returns the event that records c, made by request (with its receipt and step)
// of turnID; digest chains the summarised messages' receipt parts.
func (s *State) Compacted(turnID string, request events.ProviderRequest, c Compaction, digest string, before, after int64) events.TranscriptCompacted {
	msg := SummaryMessage(c.Window, c.Through, c.Responses, c.Summary)
	sum := sha256.Sum256([]byte(msg))
	return events.TranscriptCompacted{SessionID: s.SessionID, TurnID: turnID, Window: c.Window, RequestID: request.RequestID,
		PromptReceiptID: request.PromptReceiptID, Step: request.Step, Through: c.Through, KeptMessages: c.Kept,
		SummarisedResponses: c.Responses, SummarisedDigest: digest, Summary: c.Summary, SummaryMessage: msg,
		SummarySHA256: hex.EncodeToString(sum[:]), EstimatedTokensBefore: before, EstimatedTokensAfter: after}
}

// checkCompacted: a compaction moves the boundary of an open turn between steps (no request
// open, no result awaited), to a position that splits no call from its results, after the
// compaction request it names completed.
func (s *State) checkCompacted(e events.TranscriptCompacted) error {
	t := s.Open
	switch {
	case t == nil || t.TurnID != e.TurnID:
		return order("compaction %d outside an open turn", e.Window)
	case t.Request != nil:
		return order("compaction %d while request %s is open", e.Window, t.Request.RequestID)
	case s.Pending():
		return order("compaction %d while a call has no result", e.Window)
	case e.Window != s.Window+1:
		return order("compaction %d follows window %d", e.Window, s.Window)
	case e.Through < 1 || e.Through >= len(s.Messages) || s.Messages[e.Through].Role == model.RoleTool:
		return order("compaction %d moves the boundary to %d of %d messages, not a boundary between steps", e.Window, e.Through, len(s.Messages))
	case s.lastCompactionRequest != e.RequestID:
		return order("compaction %d names request %s, which is not the completed compaction request", e.Window, e.RequestID)
	}
	return nil
}

// compact moves the boundary: the conversation is now the summary message followed by the
// messages from Through on. It is a new slice, so views of the previous window (a receipt
// reader's) stay as they were.
func (s *State) compact(e events.TranscriptCompacted) {
	msgs := make([]model.Message, 0, 1+len(s.Messages)-e.Through)
	msgs = append(msgs, model.Message{Role: model.RoleUser, Text: e.SummaryMessage})
	s.Messages = append(msgs, s.Messages[e.Through:]...)
	s.Window = e.Window
	s.lastCompactionRequest = ""
}
