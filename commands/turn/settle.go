package turn

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// OpenTurn is a session's open turn as its log has it: how it was started, and what it waits
// for when it waits on asks.
type OpenTurn struct {
	Started events.TurnStarted
	// Awaiting is what the turn waits for; nil when it is not at a point where it waits.
	Awaiting []events.Awaited
	// Suspended: the turn recorded its suspension (else it waits in a process, or its process
	// died while it waited).
	Suspended bool
	// Directory is the session's workspace.
	Directory string
}

// CodeNoOpenTurn: the session has no open turn to resume or settle.
const CodeNoOpenTurn = "no_open_turn"

// Open returns the session's open turn.
func (d *Driver) Open(ctx context.Context, sessionID string) (OpenTurn, error) {
	tr := transcript.New()
	var started events.TurnStarted
	var dir string
	_, err := commands.Load(ctx, d.Store, d.Registry, commands.SessionStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error {
		switch e := p.(type) {
		case events.TurnStarted:
			started = e
		case events.SessionCreated:
			dir = e.Directory
		case events.SessionForked:
			dir = e.Directory
		case events.DirectoryChanged:
			dir = e.Directory
		}
		return tr.Evolve(p)
	})
	if err != nil {
		return OpenTurn{}, err
	}
	if tr.Open == nil || started.TurnID != tr.Open.TurnID {
		e := domain.NewError(CodeNoOpenTurn, fmt.Sprintf("session %s has no open turn", sessionID),
			"nothing waits: continue the session with zuno run --session")
		e.ID = sessionID
		return OpenTurn{}, e
	}
	return OpenTurn{Started: started, Awaiting: tr.Open.Awaiting(), Suspended: tr.Open.Suspended, Directory: dir}, nil
}

// Settle settles the open turn TurnID of a session whose lease expired (the reaction to an
// expired lease, docs/turns.md "Reactions"): a turn waiting on asks is recorded suspended on
// those inbox holds no answer to yet (Outcome.Reason ReasonSuspended, Awaiting them; nothing
// recorded and Awaiting empty when every one is answered: it can be resumed now), unless one
// of them was closed (its run stopped while it ended the turn); any other is
// recovered as the next run would: its running call settled uncertain, never run again, the
// calls that never started cancelled, the turn finished interrupted. A turn whose lease is
// live is session_busy; one already suspended or finished is left as it is.
func (d *Driver) Settle(ctx context.Context, meta commands.Meta, sessionID, turnID string, inbox Inbox) (Outcome, error) {
	req := Request{Meta: meta, SessionID: sessionID, Observer: NopObserver{}, Inbox: inbox}
	r, err := d.load(ctx, req)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{SessionID: sessionID, TurnID: turnID, Duplicate: r.prior.seen}
	open := r.tr.Open
	if open == nil || open.TurnID != turnID || open.Suspended {
		if open != nil && open.TurnID == turnID {
			out.Reason, out.Awaiting = ReasonSuspended, open.Awaiting()
		}
		return out, nil
	}
	leased, err := r.openTurnBinds(ctx, turnID, open.Owner)
	if err != nil {
		return out, err
	}
	release, err := r.takeOver(ctx, turnID, leased)
	if err != nil {
		return out, err
	}
	defer release()
	closed, err := r.awaitsClosed(ctx, open)
	if err != nil {
		return out, err
	}
	if asked := open.Awaiting(); len(asked) > 0 && !closed {
		out.Reason = ReasonSuspended
		for _, a := range asked {
			if _, answered, err := inbox.Answered(ctx, sessionID, a.AskID); err != nil {
				return out, err
			} else if !answered {
				out.Awaiting = append(out.Awaiting, a)
			}
		}
		if len(out.Awaiting) == 0 {
			return out, nil
		}
		return out, r.settleWith(ctx, events.TurnSuspended{SessionID: sessionID, TurnID: turnID, Awaiting: out.Awaiting})
	}
	out.Reason = events.FinishInterrupted
	closing, err := r.recovery(ctx, true)
	if err != nil {
		return out, err
	}
	return out, r.settleWith(ctx, closing...)
}

func (r *run) settleWith(ctx context.Context, ps ...events.Payload) error {
	if err := r.stage(ps...); err != nil {
		return err
	}
	return r.commit(ctx)
}

// Resumed returns the outcome of the resumption commandID of a session's turn, found false
// when no such command resumed one: a resumption sent again answers with its first outcome.
// When its process stopped while the turn waited on a later ask (nothing uncertain), found is
// false and again is the resumption to run again, under the same id and trigger.
func (d *Driver) Resumed(ctx context.Context, sessionID, commandID string) (out Outcome, found bool, again *Resume, err error) {
	var first *events.TurnResumed
	_, err = commands.Load(ctx, d.Store, d.Registry, commands.SessionStream(sessionID), 0, func(rec events.Recorded, p events.Payload) error {
		if e, ok := p.(events.TurnResumed); ok && first == nil && rec.Metadata.CommandID == commandID {
			first = &e
		}
		return nil
	})
	if err != nil || first == nil {
		return Outcome{}, false, nil, err
	}
	req := Request{Meta: commands.Meta{CommandID: commandID}, SessionID: sessionID, Observer: NopObserver{},
		Resume: &Resume{TurnID: first.TurnID, TriggerEventID: first.TriggerEventID}}
	r, err := d.load(ctx, req)
	if err != nil {
		return Outcome{}, true, nil, err
	}
	if r.resumesAgain() {
		return Outcome{}, false, req.Resume, nil
	}
	out, err = r.repeat(ctx)
	return out, true, nil, err
}

// recovery is what closes the open turn a crash, a cancellation or a takeover left: the
// restart rule, or, for a turn a fork cut, the source session's record of its calls
// (transcript.RecoverFork): a call the source started, even after the fork point, is
// uncertain, never "nothing happened".
func (r *run) recovery(ctx context.Context, recovered bool) ([]events.Payload, error) {
	open := r.tr.Open
	if open == nil || open.CutByFork == nil {
		return r.tr.Recover(recovered), nil
	}
	started := map[string]bool{}
	for rec, err := range commands.Events(ctx, r.d.Store, open.CutByFork.Stream, 0) {
		if err != nil {
			return nil, err
		}
		if rec.Type != events.TypeToolStarted {
			continue
		}
		p, err := r.d.Registry.Decode(rec)
		if err != nil {
			return nil, err
		}
		started[p.(events.ToolStarted).CallID] = true
	}
	return r.tr.RecoverFork(recovered, func(id string) bool { return started[id] }), nil
}
