// Package transcript folds a session stream into what the turn driver needs to continue it:
// the conversation as the model will see it, the step count, the blobs already recorded, and
// the turn that is still open. It also holds the transcript's invariants (a call settles only
// after it was requested and started, one provider request at a time, one turn at a time) and
// the restart rule that closes a turn a crashed process left open.
//
// It is pure: the driver folds each event it appends, so a turn never reloads its history.
package transcript

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// CodeTranscriptOrder is the stable code of an event that breaks the transcript's order.
const CodeTranscriptOrder = "transcript_order"

// CodeTurnOpen is the stable code of a turn started while another is open.
const CodeTurnOpen = "turn_open"

// State is a session transcript folded from its events.
type State struct {
	SessionID string
	Agent     string
	// Messages is the conversation, in the order the model is shown it: user messages,
	// assistant responses, and each response's tool results in the order of its calls.
	Messages []model.Message
	// Steps counts provider requests started in the session.
	Steps int
	// Blobs are the digests of every prompt blob already recorded in the session, so a new
	// receipt records only content the log does not hold yet.
	Blobs map[string]bool
	// LastReceiptID is the receipt of the latest prompt.
	LastReceiptID string
	// Turns counts turns started.
	Turns int
	// Open is the turn in progress, nil when none is.
	Open *Turn
	// Window counts the compactions of the session: Messages is the conversation after the
	// latest one's boundary (docs/compaction.md).
	Window int
	// lastCompactionRequest is the compaction request that completed and whose compaction is
	// not recorded yet.
	lastCompactionRequest string

	// results maps a call id whose result is still awaited to its message slot.
	results map[string]int
	// callIDs holds every tool call id of the session: providers and the log need them unique.
	callIDs map[string]bool
}

// HasCall reports whether a tool call with this id was already requested in the session.
func (s *State) HasCall(id string) bool { return s.callIDs[id] }

// Turn is an open turn.
type Turn struct {
	TurnID    string
	MessageID string
	Agent     string
	// Owner is the process that started the turn, when it was recorded.
	Owner *events.TurnOwner
	Steps int
	Usage events.Usage
	// Request is the provider request started and not yet completed or failed.
	Request *events.ProviderRequest
	// Calls are the calls of the turn's latest completed response, in model order.
	Calls []*Call
	// Suspended is set while the turn waits, suspended, for what it recorded it awaits.
	Suspended bool
	// CutByFork is set when this session is a fork taken from a point inside this turn: the
	// source went on after it (docs/storage.md, "Forks"), so what became of the turn's
	// calls is the source's to say, not a crash's (RecoverFork).
	CutByFork *events.ForkSource
}

// Awaiting returns the asks of the turn's calls that have neither started nor settled, when
// the turn is at a point where it can be suspended and resumed without anything uncertain: no
// provider request in flight, no call running. Some of them may be answered already (a group's
// calls start together once all its asks are); the answers are in the session's inbox. It
// returns nil when the turn is not at such a point (docs/turns.md, "Suspended turns").
func (t *Turn) Awaiting() []events.Awaited {
	if t == nil || t.Request != nil {
		return nil
	}
	var out []events.Awaited
	for _, c := range t.Calls {
		switch {
		case c.Started && !c.Settled:
			return nil // a running call: only recovery (uncertain) can settle it
		case c.AskID != "" && !c.Started && !c.Settled:
			out = append(out, events.Awaited{Kind: "permission", AskID: c.AskID, CallID: c.ID})
		}
	}
	return out
}

// Call is a requested tool call and what the log says happened to it.
type Call struct {
	events.ToolCall
	RequestID string
	Started   bool
	Settled   bool
	// AskID is the permission ask the call waits on (or waited on), "" when none.
	AskID string
}

// New returns the state of an empty session.
func New() *State { return &State{Blobs: map[string]bool{}, results: map[string]int{}} }

// checkWaiting checks a suspension or a resumption: the open turn must wait on an ask (and
// not be suspended already, to be suspended).
func checkWaiting(t *Turn, p events.Payload) error {
	switch e := p.(type) {
	case events.TurnSuspended:
		if t == nil || t.TurnID != e.TurnID || t.Suspended || len(t.Awaiting()) == 0 {
			return order("turn %s suspended but it is not an open turn waiting on an ask", e.TurnID)
		}
	case events.TurnResumed:
		if t == nil || t.TurnID != e.TurnID || len(t.Awaiting()) == 0 {
			return order("turn %s resumed but it is not an open turn waiting on an ask", e.TurnID)
		}
	}
	return nil
}

// Check reports whether p may be appended next, as a *domain.Error when it may not. The driver
// checks before it appends, so the log never holds a transcript out of order.
func (s *State) Check(p events.Payload) error {
	t := s.Open
	switch e := p.(type) {
	case events.TurnStarted:
		if t != nil {
			err := domain.NewError(CodeTurnOpen, fmt.Sprintf("turn %s of session %s is still open", t.TurnID, s.SessionID),
				"wait for it to finish; if its process died, the next run of the session recovers it first")
			err.ID = t.TurnID
			return err
		}
	case events.ProviderRequest:
		if t == nil || e.TurnID != t.TurnID {
			return order("provider request %s outside an open turn", e.RequestID)
		}
		if e.Status == events.RequestStarted {
			if t.Request != nil {
				return order("provider request %s started while %s is open", e.RequestID, t.Request.RequestID)
			}
			for _, c := range t.Calls {
				if !c.Settled {
					return order("provider request %s started while call %s has no result", e.RequestID, c.ID)
				}
			}
		} else if t.Request == nil || t.Request.RequestID != e.RequestID {
			return order("provider request %s settled without being started", e.RequestID)
		}
	case events.ToolBlocked:
		c := s.call(e.CallID)
		if c == nil || c.Started || c.Settled {
			return order("call %s blocked but it is not an open requested call", e.CallID)
		}
	case events.ToolStarted:
		c := s.call(e.CallID)
		if c == nil || c.Started || c.Settled {
			return order("call %s started but it is not an open requested call", e.CallID)
		}
	case events.PermissionAsked:
		c := s.call(e.CallID)
		if c == nil || c.Started || c.Settled || c.AskID != "" {
			return order("call %s asked for permission but it is not an open, unasked requested call", e.CallID)
		}
	case events.PermissionGranted:
		c := s.call(e.CallID)
		if c == nil || c.Started || c.Settled || c.AskID == "" || c.AskID != e.AskID {
			return order("call %s was granted standing approvals but it is not an open call waiting on ask %s", e.CallID, e.AskID)
		}
	case events.PermissionRevoked:
		if t != nil {
			return order("standing approvals revoked while turn %s is open", t.TurnID)
		}
	case events.ToolSettled:
		return s.checkSettled(e)
	case events.VerificationReceipt:
		c := s.call(e.CallID)
		if c == nil || !c.Started || c.Settled {
			return order("receipt %s of call %s recorded but the call is not running", e.ReceiptID, e.CallID)
		}
	case events.TurnSuspended, events.TurnResumed:
		return checkWaiting(t, p)
	case events.TranscriptCompacted:
		return s.checkCompacted(e)
	case events.TurnFinished:
		if t == nil || t.TurnID != e.TurnID {
			return order("turn %s finished but it is not open", e.TurnID)
		}
		if t.Request != nil {
			return order("turn %s finished while request %s is open", e.TurnID, t.Request.RequestID)
		}
		for _, c := range t.Calls {
			if !c.Settled {
				return order("turn %s finished while call %s has no result", e.TurnID, c.ID)
			}
		}
	}
	return nil
}

// checkSettled: a result closes an open requested call, and one never started is only
// cancelled, or, when a fork cut its turn, uncertain (the source session may have started it
// after the fork point: RecoverFork).
func (s *State) checkSettled(e events.ToolSettled) error {
	c := s.call(e.CallID)
	if c == nil || c.Settled {
		return order("call %s settled but it is not an open requested call", e.CallID)
	}
	t := s.Open
	forkUncertain := t != nil && t.CutByFork != nil && e.Recovered && e.Outcome == string(tools.OutcomeUncertain)
	if !c.Started && e.Outcome != string(tools.OutcomeCancelled) && !forkUncertain {
		return order("call %s settled without being started", e.CallID)
	}
	return nil
}

func order(format string, args ...any) *domain.Error {
	return domain.NewError(CodeTranscriptOrder, fmt.Sprintf(format, args...),
		"this is a bug in the turn driver: report it with the session id")
}

func (s *State) call(id string) *Call {
	if s.Open == nil {
		return nil
	}
	for _, c := range s.Open.Calls {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Evolve folds one event of the session stream. The session's own bookkeeping (title,
// directory) leaves the transcript alone; any other payload is an error, never skipped.
func (s *State) Evolve(p events.Payload) error {
	if s.Blobs == nil {
		s.Blobs = map[string]bool{}
	}
	if s.results == nil {
		s.results = map[string]int{}
	}
	switch e := p.(type) {
	case events.SessionCreated:
		s.SessionID, s.Agent = e.SessionID, e.Agent
	case events.SessionForked:
		s.SessionID, s.Agent = e.SessionID, e.Agent // the source's history stays
		if s.Open != nil {
			src := e.Source
			s.Open.CutByFork = &src
		}
	case events.UserMessageAppended:
		s.Messages = append(s.Messages, model.Message{Role: model.RoleUser, Text: e.Text})
	case events.PromptAssembled:
		for d := range e.Blobs {
			s.Blobs[d] = true
		}
		s.LastReceiptID = e.ReceiptID
	case events.TurnStarted:
		s.Turns++
		s.Open = &Turn{TurnID: e.TurnID, MessageID: e.MessageID, Agent: e.Agent, Owner: e.Owner}
	case events.ProviderRequest:
		s.evolveRequest(e)
	case events.ToolBlocked:
		if c := s.call(e.CallID); c != nil {
			c.Settled = true
		}
		s.result(e.CallID, e.Output, true)
	case events.ToolStarted:
		if c := s.call(e.CallID); c != nil {
			c.Started = true
		}
	case events.PermissionAsked:
		if c := s.call(e.CallID); c != nil {
			c.AskID = e.AskID
		}
	case events.ToolSettled:
		if c := s.call(e.CallID); c != nil {
			c.Settled = true
		}
		s.result(e.CallID, e.Output, e.Outcome != string(tools.OutcomeCompleted))
	case events.TurnSuspended:
		if t := s.Open; t != nil {
			t.Suspended = true
		}
	case events.TurnResumed:
		if t := s.Open; t != nil {
			t.Suspended = false
		}
	case events.TranscriptCompacted:
		s.compact(e)
	case events.TurnFinished:
		s.Open = nil
		s.lastCompactionRequest = ""
	case events.SessionTitled, events.DirectoryChanged, events.VerificationReceipt, events.PermissionGranted,
		events.PermissionRevoked, events.SessionPruned:
	default:
		return domain.UnexpectedEvent("transcript", p)
	}
	return nil
}

func (s *State) evolveRequest(e events.ProviderRequest) {
	t := s.Open
	switch e.Status {
	case events.RequestStarted:
		if e.Attempt <= 1 { // a retry is the same step, sent again
			s.Steps++
			// A compaction request is a session step (debug prompt finds it) but not one of
			// the turn's: the step limit counts the model's work.
			if t != nil && e.Purpose != events.PurposeCompaction {
				t.Steps++
			}
		}
		if t != nil {
			r := e
			t.Request = &r
			t.Calls = nil
		}
	case events.RequestCompleted:
		if t != nil {
			t.Request = nil
		}
		if e.Response == nil {
			return
		}
		if t != nil {
			t.Usage = t.Usage.Add(e.Response.Usage)
		}
		if e.Purpose == events.PurposeCompaction {
			s.lastCompactionRequest = e.RequestID // its text is the summary, recorded by the compaction
			return
		}
		msg := model.Message{Role: model.RoleAssistant, Text: e.Response.Text}
		for _, r := range e.Response.Reasoning {
			msg.Reasoning = append(msg.Reasoning, model.Reasoning(r))
		}
		for _, c := range e.Response.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: c.ID, ProviderID: c.ProviderID, Name: c.Name, Arguments: c.Arguments})
		}
		if msg.Text != "" || len(msg.ToolCalls) > 0 { // providers reject an empty assistant message
			s.Messages = append(s.Messages, msg)
		}
		for _, c := range e.Response.ToolCalls {
			if s.callIDs == nil {
				s.callIDs = map[string]bool{}
			}
			s.callIDs[c.ID] = true
			// Each call's result gets its slot now, so results land in model order whatever
			// order they settle in.
			s.results[c.ID] = len(s.Messages)
			s.Messages = append(s.Messages, model.Message{Role: model.RoleTool, ToolCallID: c.ID})
			if t != nil {
				t.Calls = append(t.Calls, &Call{ToolCall: c, RequestID: e.RequestID})
			}
		}
	case events.RequestFailed:
		if t != nil {
			t.Request = nil
		}
	}
}

func (s *State) result(callID, output string, isError bool) {
	i, ok := s.results[callID]
	if !ok {
		return
	}
	delete(s.results, callID)
	s.Messages[i].Text, s.Messages[i].IsError = output, isError
}

// Pending reports whether some call still waits for its result.
func (s *State) Pending() bool { return len(s.results) > 0 }

// Texts of the results restart recovery records. They are what the model reads next, so they
// say what to do.
const (
	UncertainText = "This call started, but the process running it stopped before its result was recorded. " +
		"Its effect may or may not have happened, and it will not be run again automatically. Inspect the " +
		"actual state (read the files, query the system) before deciding whether anything needs doing."
	CancelledText = "This call was never started: the run was interrupted first. Nothing it asked for happened."
	// ForkUncertainText is the result of a call of a turn a fork cut, which the source session
	// started (before the fork point or after it): its effect on the shared workspace may be
	// there.
	ForkUncertainText = "This session was forked from another while this call was being made: the source session " +
		"started it, before or after the point this fork was taken from, so its effect on the workspace may be there. " +
		"It will not be run again automatically. Inspect the actual state before deciding whether anything needs doing."
	// ForkCancelledText is the result of a call of a turn a fork cut, which the source never
	// started.
	ForkCancelledText = "This session was forked from another before this call started, and the source session never started it: nothing it asked for happened."
	// CodeInterrupted is the error code of a request or turn closed by recovery or cancellation.
	CodeInterrupted = "interrupted"
)

// Recover returns the events that close a turn a crashed or cancelled run left open, in the
// order to append them: the open provider request fails as interrupted, every call that
// started and never settled is settled uncertain, every call that never started is settled
// cancelled, and the turn finishes as interrupted. Nothing is ever re-run. It returns nil when
// no turn is open.
func (s *State) Recover(recovered bool) []events.Payload {
	return s.recover(recovered, nil)
}

// RecoverFork closes a turn a fork cut (Turn.CutByFork) by what the source session did: a
// call the source started, before the fork point or after it, is uncertain, since its effect
// on the workspace the fork shares may be there; one it never started is cancelled; the open
// request fails and the turn finishes interrupted, as Recover closes them. startedInSource
// reports whether the source recorded the call started.
func (s *State) RecoverFork(recovered bool, startedInSource func(callID string) bool) []events.Payload {
	return s.recover(recovered, startedInSource)
}

func (s *State) recover(recovered bool, startedInSource func(string) bool) []events.Payload {
	t := s.Open
	if t == nil {
		return nil
	}
	var out []events.Payload
	if r := t.Request; r != nil {
		out = append(out, events.ProviderRequest{SessionID: s.SessionID, TurnID: t.TurnID, RequestID: r.RequestID,
			Step: r.Step, Status: events.RequestFailed, PromptReceiptID: r.PromptReceiptID, Provider: r.Provider,
			Model: r.Model, StepLimitFinalization: r.StepLimitFinalization, Purpose: r.Purpose,
			Error: &events.ErrorInfo{Code: CodeInterrupted, Message: "the run stopped before the provider answered"}})
	}
	var recs []tools.Recorded
	byID := map[string]*Call{}
	for _, c := range t.Calls {
		recs = append(recs, tools.Recorded{ID: c.ID, Started: c.Started, Settled: c.Settled})
		byID[c.ID] = c
	}
	verdict := tools.Recover(recs)
	uncertainText, cancelledText := UncertainText, CancelledText
	if startedInSource != nil {
		uncertainText, cancelledText = ForkUncertainText, ForkCancelledText
		var never []string
		for _, id := range verdict.Cancelled {
			if startedInSource(id) {
				verdict.Uncertain = append(verdict.Uncertain, id)
			} else {
				never = append(never, id)
			}
		}
		verdict.Cancelled = never
	}
	for _, id := range verdict.Uncertain {
		c := byID[id]
		out = append(out, events.ToolSettled{SessionID: s.SessionID, TurnID: t.TurnID, RequestID: c.RequestID, CallID: id,
			Tool: c.Name, Outcome: string(tools.OutcomeUncertain), ErrorCode: string(tools.OutcomeUncertain),
			Output: uncertainText, Recovered: recovered})
	}
	for _, id := range verdict.Cancelled {
		c := byID[id]
		out = append(out, events.ToolSettled{SessionID: s.SessionID, TurnID: t.TurnID, RequestID: c.RequestID, CallID: id,
			Tool: c.Name, Outcome: string(tools.OutcomeCancelled), ErrorCode: CodeInterrupted,
			Output: cancelledText, Recovered: recovered})
	}
	out = append(out, events.TurnFinished{SessionID: s.SessionID, TurnID: t.TurnID, Reason: events.FinishInterrupted,
		Steps: t.Steps, Usage: t.Usage, Recovered: recovered,
		Error: &events.ErrorInfo{Code: CodeInterrupted, Message: "the run stopped before the turn finished"}})
	return out
}
