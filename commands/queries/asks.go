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
	// Pending: no reply is recorded yet. A reply is final, so an ask is pending at most once
	// (seeds 004: a second reply is refused, not recorded again).
	Pending bool `json:"pending"`
}

// Asks folds a session's permission asks from its stream and their answers from its inbox, in
// the order they were asked. Whether an ask may still be answered is a decision (the HTTP
// face refuses a reply to an ask that is not pending), so it is folded from the log, never
// read from a lagging projection.
func (q *Queries) Asks(ctx context.Context, sessionID string) ([]AskView, error) {
	if err := q.RequireSession(ctx, sessionID); err != nil {
		return nil, err
	}
	var asks []AskView
	_, err := commands.Load(ctx, q.log, q.registry, commands.SessionStream(sessionID), 0,
		func(rec events.Recorded, p events.Payload) error {
			if a, ok := p.(events.PermissionAsked); ok {
				asks = append(asks, AskView{PermissionAsked: a, Position: rec.Position, Pending: true})
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	replies := map[string]string{}
	_, err = commands.Load(ctx, q.log, q.registry, commands.InboxStream(sessionID), 0,
		func(_ events.Recorded, p events.Payload) error {
			if a, ok := p.(events.PermissionAnswered); ok {
				replies[a.AskID] = a.Reply
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	for i := range asks {
		if r, ok := replies[asks[i].AskID]; ok {
			asks[i].Reply, asks[i].Pending = r, false
		}
	}
	return asks, nil
}
