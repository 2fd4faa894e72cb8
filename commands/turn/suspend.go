package turn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// ReasonSuspended is the outcome of a turn that suspended: it is open, waits for what
// Outcome.Awaiting names, and holds no lease (docs/turns.md, "Suspended turns").
const ReasonSuspended = "suspended"

const (
	// CodeTurnNotSuspended: a resumption names a turn that is not open and waiting on asks.
	CodeTurnNotSuspended = "turn_not_suspended"
	// CodeTurnSuspended: a new input came for a session whose turn is suspended.
	CodeTurnSuspended = "turn_suspended"
)

// Resume names the suspended turn a request continues and the event that triggered the
// resumption (the answer's), recorded on session.turn.resumed.1.
type Resume struct {
	TurnID, TriggerEventID string
}

// errSuspended ends a run that suspended its turn; the driver turns it into the outcome.
var errSuspended = errors.New("turn: suspended")

// asked reports whether the open turn recorded an ask for callID already.
func (r *run) asked(callID string) bool {
	if open := r.tr.Open; open != nil {
		for _, c := range open.Calls {
			if c.ID == callID {
				return c.AskID != ""
			}
		}
	}
	return false
}

// answer is the answer to an ask the turn recorded: waited for in this process, or, for a
// turn that suspends, the one the inbox holds already, else the turn suspends.
func (r *run) answer(ctx context.Context, ask events.PermissionAsked) (events.PermissionAnswered, error) {
	if !r.req.Suspend {
		return r.req.Inbox.Wait(ctx, r.req.SessionID, ask.AskID)
	}
	a, found, err := r.req.Inbox.Answered(ctx, r.req.SessionID, ask.AskID)
	if err != nil || found {
		return a, err
	}
	r.awaiting = []events.Awaited{{Kind: "permission", AskID: ask.AskID, CallID: ask.CallID}}
	if err := r.stage(events.TurnSuspended{SessionID: r.req.SessionID, TurnID: r.turnID, Awaiting: r.awaiting}); err != nil {
		return a, err
	}
	if err := r.commit(ctx); err != nil {
		return a, err
	}
	return a, errSuspended
}

// suspended turns the end of a run that suspended its turn into its outcome; any other error
// is returned as it is.
func (r *run) suspended(out *Outcome, err error) (Outcome, error) {
	if !errors.Is(err, errSuspended) {
		return *out, err
	}
	open := r.tr.Open
	out.Reason, out.Awaiting, out.Steps, out.Usage = ReasonSuspended, r.awaiting, open.Steps, open.Usage
	return *out, nil
}

// resumable checks that the request resumes the session's open turn and that the turn waits
// on asks (suspended, or left waiting by a process that died).
func (r *run) resumable() error {
	open := r.tr.Open
	if open != nil && open.TurnID == r.turnID && len(open.Awaiting()) > 0 {
		return nil
	}
	what := "has no open turn"
	if open != nil {
		what = fmt.Sprintf("has open turn %s, not waiting on an ask", open.TurnID)
	}
	e := domain.NewError(CodeTurnNotSuspended, fmt.Sprintf("session %s %s: turn %s cannot be resumed", r.req.SessionID, what, r.turnID),
		"check the session with zuno session show; only a turn waiting on an answer is resumed")
	e.ID = r.req.SessionID
	return e
}

// resumesAgain reports whether a resumption that was handled before goes on again: its process
// stopped while the turn waited on a later ask, neither suspended nor settled. Nothing of it
// is uncertain, so it is resumed, not recovered.
func (r *run) resumesAgain() bool {
	open := r.tr.Open
	return r.req.Resume != nil && open != nil && open.TurnID == r.turnID && !open.Suspended && len(open.Awaiting()) > 0
}

// resume records the resumption and runs the open response's calls that have no result yet:
// the asked ones with their answers, the rest as the gate decides now.
func (r *run) resume(ctx context.Context) error {
	open := r.tr.Open
	if err := r.restorePrompt(); err != nil {
		return err
	}
	if err := r.stage(events.TurnResumed{SessionID: r.req.SessionID, TurnID: r.turnID, Input: events.InputAnswer,
		TriggerEventID: r.req.Resume.TriggerEventID}); err != nil {
		return err
	}
	calls := make([]model.ToolCall, len(open.Calls))
	settled := map[string]bool{}
	for i, c := range open.Calls {
		calls[i] = model.ToolCall{ID: c.ID, ProviderID: c.ProviderID, Name: c.Name, Arguments: c.Arguments}
		settled[c.ID] = c.Settled
	}
	return r.runCallsExcept(ctx, open.Calls[0].RequestID, calls, settled)
}

// suspendedError refuses a new input while the session's turn waits for an answer, suspended
// or left so by a process that stopped: starting another would cancel its calls without anyone
// deciding so.
func (r *run) suspendedError(open *transcript.Turn) error {
	var asks []string
	for _, a := range open.Awaiting() {
		asks = append(asks, a.AskID)
	}
	state := "is suspended"
	if !open.Suspended {
		state = "stopped with its process"
	}
	e := domain.NewError(CodeTurnSuspended, fmt.Sprintf("turn %s of session %s %s, waiting for an answer to %s",
		open.TurnID, r.req.SessionID, state, strings.Join(asks, ", ")),
		fmt.Sprintf("answer it (zuno session answer %s ASK once|always|reject) and resume it (zuno session resume %s), or pass --recover to cancel its waiting calls", r.req.SessionID, r.req.SessionID))
	e.ID = r.req.SessionID
	return e
}

// unsettled is the group's calls without those that have a result already.
func (cr *callRun) unsettled(calls []int, settled map[string]bool) []int {
	if settled == nil {
		return calls
	}
	out := calls[:0:0]
	for _, ci := range calls {
		if settled[cr.plan.Entries[ci].Call.Call.ID] {
			continue
		}
		out = append(out, ci)
	}
	return out
}

// receiptFold keeps, for a resumed turn, the session's stored receipts and the latest of the
// turn, to restore the base its next receipt is stored relative to.
type receiptFold struct {
	receipts map[string]prompt.Receipt
	blobs    map[string]string
	latest   string
}

func newReceiptFold(resume *Resume) *receiptFold {
	if resume == nil {
		return nil
	}
	return &receiptFold{receipts: map[string]prompt.Receipt{}, blobs: map[string]string{}}
}

func (f *receiptFold) fold(turnID string, p events.Payload) {
	switch e := p.(type) {
	case events.TurnStarted:
		if e.TurnID == turnID {
			f.latest = ""
		}
	case events.PromptAssembled:
		f.receipts[e.ReceiptID] = e.PromptReceipt
		for d, b := range e.Blobs {
			if _, ok := f.blobs[d]; !ok {
				f.blobs[d] = b
			}
		}
		f.latest = e.ReceiptID
	}
}

// restorePrompt makes the turn's latest receipt, expanded, the base of the next: a resumed
// turn stores its receipts as it would have had it never suspended, so a replay, which runs
// it as one, records the same.
func (r *run) restorePrompt() error {
	f := r.resumed
	if f == nil || f.latest == "" {
		return nil
	}
	logged, err := prompt.LoggedMessages(r.tr.Messages)
	if err != nil {
		return err
	}
	lookup := func(id string) (prompt.Receipt, bool) { x, ok := f.receipts[id]; return x, ok }
	pool := func(d string) (string, bool) {
		if b, ok := f.blobs[d]; ok {
			return b, true
		}
		b, ok := logged.Blobs[d]
		return b, ok
	}
	full, err := prompt.ExpandLogged(f.receipts[f.latest], lookup, pool, logged.Parts)
	if err != nil {
		return fmt.Errorf("resume: restore the turn's latest prompt receipt %s: %w", f.latest, err)
	}
	r.prev, r.prevID = &full, f.latest
	r.resumed = nil
	return nil
}
