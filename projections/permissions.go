package projections

import (
	"context"

	"github.com/zuno-run/zuno/events"
)

// Permissions is the "permission_decision" table: one row per call the permission gate judged,
// answering "who allowed this call" (docs/readmodels.md). The row follows the call:
//
//   - PermissionAsked creates it pending (action "ask"). A call is asked at most once (the
//     transcript refuses a second ask), so an ask seen again changes nothing.
//   - PermissionAnswered (stream inbox-<sessionId>) records the reply on the row of the ask it
//     names, by ask id (the answer command requires the ask id, not the call id), when that row
//     is not yet decided. Normally the decision follows and restates it; when the asking turn was gone,
//     no decision follows and the row keeps the answer with action "ask": recorded, never run.
//   - ToolStarted or ToolBlocked carrying a Permission writes the decision, creating the row
//     for a call decided without an ask. A decision is final: a later answer does not touch it.
//
// Every write is an upsert that gives the same row when applied again, so an event seen twice
// (a batch replayed after a crash) leaves the table as it was.
type Permissions struct{}

func (Permissions) Name() string     { return "permission_decision" }
func (Permissions) Tables() []string { return []string{"permission_decision"} }

// actionAsk is the action of a pending row.
const actionAsk = "ask"

func (Permissions) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.PermissionAsked:
		return recordAsk(ctx, tx, ev, e)
	case events.PermissionAnswered:
		return tx.Exec(ctx, `UPDATE permission_decision SET reply = ?, source = ?, time_answered = ?
			WHERE session_id = ? AND ask_id = ? AND time_decided IS NULL`,
			e.Reply, nullable(e.Source), tx.eventTime(ev), e.SessionID, e.AskID)
	case events.ToolStarted:
		if e.Permission != nil {
			return recordDecision(ctx, tx, ev, judgedCall{e.SessionID, e.TurnID, e.RequestID, e.CallID, e.Tool}, *e.Permission)
		}
	case events.ToolBlocked:
		if e.Permission != nil {
			return recordDecision(ctx, tx, ev, judgedCall{e.SessionID, e.TurnID, e.RequestID, e.CallID, e.Tool}, *e.Permission)
		}
	}
	return nil
}

// judgedCall names the call a decision is about.
type judgedCall struct{ sessionID, turnID, requestID, callID, tool string }

func recordAsk(ctx context.Context, tx *Tx, ev events.Recorded, e events.PermissionAsked) error {
	return tx.Exec(ctx, `INSERT INTO permission_decision (session_id, call_id, turn_id, request_id, tool, permission_key,
			resource, action, rule, layer, ask_id, always_pattern, mode, time_created, position)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, call_id) DO NOTHING`,
		e.SessionID, e.CallID, e.TurnID, e.RequestID, e.Tool, e.Key, nullable(e.Resource), actionAsk,
		nullable(e.Rule), nullable(e.Layer), e.AskID, nullable(e.Always), e.Mode, tx.eventTime(ev), int64(ev.Position))
}

// recordDecision writes a call's decision, which restates what its ask said (key, resource,
// rule, layer, ask id) and is authoritative. The row's creation (time_created, position), the
// always pattern of its ask and the time of its answer are kept.
func recordDecision(ctx context.Context, tx *Tx, ev events.Recorded, c judgedCall, d events.PermissionDecision) error {
	at := tx.eventTime(ev)
	return tx.Exec(ctx, `INSERT INTO permission_decision (session_id, call_id, turn_id, request_id, tool, permission_key,
			resource, rule_action, action, rule, layer, source, reply, ask_id, mode, message, time_created, time_decided, position)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, call_id) DO UPDATE SET turn_id = excluded.turn_id, request_id = excluded.request_id,
			tool = excluded.tool, permission_key = excluded.permission_key, resource = excluded.resource,
			rule_action = excluded.rule_action, action = excluded.action, rule = excluded.rule, layer = excluded.layer,
			source = excluded.source, reply = excluded.reply, ask_id = excluded.ask_id,
			mode = excluded.mode, message = excluded.message, time_decided = excluded.time_decided`,
		c.sessionID, c.callID, c.turnID, c.requestID, c.tool, d.Key, nullable(d.Resource), nullable(d.RuleAction), d.Action,
		nullable(d.Rule), nullable(d.Layer), nullable(d.Source), nullable(d.Reply), nullable(d.AskID), d.Mode,
		nullable(d.Message), at, at, int64(ev.Position))
}
