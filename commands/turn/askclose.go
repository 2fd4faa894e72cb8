package turn

import (
	"context"
	"errors"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// Closing the asks of calls a turn ends unanswered (docs/permissions.md, "Recovery"). A reply
// lands in the session's inbox stream, the turn's records in its session stream: nothing
// orders the two but the inbox's own revision. So before the turn settles an asked call it
// never ran (cancelled by an interrupt, or by the recovery of a turn whose process stopped),
// it records session.permission.closed.1 in the inbox, decided at the inbox's revision: a
// reply recorded first wins and the close records nothing; a close recorded first wins and
// every later reply is ask_not_pending. Exactly one of them is recorded, whatever the timing.
// A suspended turn's ask is not closed: it waits for its answer.

// noteClosing keeps, for the next commit, the close of the ask of a call the turn settles
// without having started it. Called with the settle checked, before it is folded.
func (r *run) noteClosing(p events.Payload) {
	s, ok := p.(events.ToolSettled)
	if !ok || r.tr.Open == nil {
		return
	}
	for _, c := range r.tr.Open.Calls {
		if c.ID != s.CallID || c.AskID == "" || c.Started {
			continue
		}
		reason := events.AskClosedInterrupted
		if s.Recovered {
			reason = events.AskClosedRecovered
		}
		r.closing = append(r.closing, events.PermissionClosed{SessionID: r.req.SessionID, TurnID: s.TurnID,
			AskID: c.AskID, CallID: c.ID, Reason: reason})
	}
}

// closeAsks records the kept closes in the inbox, each its own command (CloseAskID), and
// forgets them. A run without an inbox (nobody could have answered) has none to close.
func (r *run) closeAsks(ctx context.Context) error {
	closing := r.closing
	r.closing = nil
	if r.req.Inbox == nil {
		return nil
	}
	for _, c := range closing {
		meta := commands.Meta{CommandID: commands.CloseAskID(c.SessionID, c.AskID), Actor: "host",
			CorrelationID: r.req.SessionID, CausationID: r.req.Meta.CommandID}
		if err := r.req.Inbox.Close(context.WithoutCancel(ctx), meta, c); err != nil {
			return err
		}
	}
	return nil
}

// closesFirst says whether the closes go out before the session's append (the rule) or after
// it: a run whose lease was taken over is no longer its session's writer, and its append fails
// if the taker wrote first; the taker may have suspended the turn on the very ask, which must
// then stay open for its answer. So such a run closes only what it did settle.
func closesFirst(ctx context.Context) bool {
	return !errors.Is(context.Cause(ctx), errLeaseLost)
}

// awaitsClosed reports whether an ask the open turn waits on was closed: the run that closed
// it stopped before it settled the call (or lost its session's stream to another writer). Its
// call can never be answered, so the turn is recovered, not left waiting.
func (r *run) awaitsClosed(ctx context.Context, open *transcript.Turn) (bool, error) {
	if r.req.Inbox == nil {
		return false, nil
	}
	for _, a := range open.Awaiting() {
		closed, err := r.req.Inbox.Closed(ctx, r.req.SessionID, a.AskID)
		if err != nil || closed {
			return closed, err
		}
	}
	return false, nil
}
