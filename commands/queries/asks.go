package queries

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// AskView is one permission ask of a session: what the turn asked and, once answered, the
// reply its inbox recorded.
type AskView struct {
	events.PermissionAsked
	// Position is where the ask is in the log.
	Position uint64 `json:"position"`
	// Reply is the recorded answer ("" while the ask is pending).
	Reply string `json:"reply,omitempty"`
	// Source is who replied: user (a terminal or a client), or standing for a call a
	// standing "always" approved without asking (seeds 004: each such call is a request row
	// of its own, settled, with reply once and source standing).
	Source string `json:"source,omitempty"`
	// Pending: no reply is recorded yet. A reply is final, so an ask is pending at most once
	// (seeds 004: a second reply is refused, not recorded again).
	Pending bool `json:"pending"`
	// Closed: its turn ended the call unanswered and closed the ask
	// (session.permission.closed.1): nothing ran, no reply is recorded and none is taken.
	// ClosedReason is why (interrupted, recovered).
	Closed       bool   `json:"closed,omitempty"`
	ClosedReason string `json:"closedReason,omitempty"`

	settled bool // its call settled before a reply was folded
}

// SourceStanding is the source of a request a standing approval settled (the gate's decision
// source of the call).
const SourceStanding = "standing"

// Asks folds a session's permission asks from its stream and their answers from its inbox, in
// the order they were asked. A call a standing approval let start without asking is a row as
// well, settled with reply once and source standing; its id is the one its ask would have had
// (ask_<callId>), which no reply can answer. Whether an ask may still be answered is a decision (the HTTP
// face refuses a reply to an ask that is not pending), so it is folded from the log, never
// read from a lagging projection.
func (q *Queries) Asks(ctx context.Context, sessionID string) ([]AskView, error) {
	if err := q.RequireSession(ctx, sessionID); err != nil {
		return nil, err
	}
	var asks []AskView
	_, err := commands.Load(ctx, q.log, q.registry, commands.SessionStream(sessionID), 0,
		func(rec events.Recorded, p events.Payload) error {
			switch e := p.(type) {
			case events.PermissionAsked:
				asks = append(asks, AskView{PermissionAsked: e, Position: rec.Position, Pending: true})
			case events.ToolSettled:
				// A call that ended (cancelled while it waited, say) takes no answer: its ask is
				// no longer pending, and a late reply is ask_not_pending, not a dangling record.
				for i := range asks {
					if asks[i].CallID == e.CallID && asks[i].Reply == "" {
						asks[i].Pending, asks[i].settled = false, true
					}
				}
			case events.ToolStarted:
				if d := e.Permission; d != nil && d.Source == SourceStanding {
					asks = append(asks, AskView{Position: rec.Position, Reply: d.Reply, Source: SourceStanding,
						PermissionAsked: events.PermissionAsked{SessionID: e.SessionID, TurnID: e.TurnID, RequestID: e.RequestID,
							CallID: e.CallID, AskID: "ask_" + e.CallID, Tool: e.Tool, Key: d.Key, Resource: d.Resource,
							Rule: d.Rule, Layer: d.Layer, Mode: d.Mode}})
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	replies := map[string]events.PermissionAnswered{}
	closed := map[string]events.PermissionClosed{}
	_, err = commands.Load(ctx, q.log, q.registry, commands.InboxStream(sessionID), 0,
		func(_ events.Recorded, p events.Payload) error {
			switch e := p.(type) {
			case events.PermissionAnswered:
				replies[e.AskID] = e
			case events.PermissionClosed:
				closed[e.AskID] = e
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	for i := range asks {
		a := &asks[i]
		if !a.Pending && !a.settled {
			continue // a standing approval's row
		}
		if r, ok := replies[a.AskID]; ok {
			a.Reply, a.Source, a.Pending = r.Reply, r.Source, false
		} else if c, ok := closed[a.AskID]; ok {
			// The inbox records a reply or a close, never both (domain/answers).
			a.Closed, a.ClosedReason, a.Pending = true, c.Reason, false
		}
	}
	return asks, nil
}
