package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/lease"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// NewSession is a session to create.
type NewSession struct {
	SessionID, Title, Agent, Directory string
	// ParentSessionID makes the session a delegated child of that session.
	ParentSessionID string
}

// CreateSession creates a session. Its agent must be one the configuration knows, and a
// session of its own (not a delegated child's) must be a primary agent: a session that names
// no agent could never run a turn (unknown_agent, with the valid names).
func (c *Commands) CreateSession(ctx context.Context, meta commands.Meta, s NewSession) (commands.Result, error) {
	if s.Agent != "" {
		if _, err := agent.Resolve(s.Agent, c.settings.Agents, s.ParentSessionID == ""); err != nil {
			return commands.Result{}, err
		}
	}
	return c.send(ctx, &commands.CreateSession{Meta: meta,
		Create: session.Create{SessionID: s.SessionID, Title: s.Title, Agent: s.Agent, Directory: s.Directory,
			ParentSessionID: s.ParentSessionID}})
}

// OpenSession creates a session without a turn, checked as a turn's would be: its workspace
// resolved (an existing directory, never where Zuno's log lies) and its agent one the
// workspace's configuration knows (build when none is named), the title the given one or
// "untitled". The session's id derives from the command id (NewSessionID), as a turn's new
// session's does, so the same command sent again names the same session and creates nothing.
func (c *Commands) OpenSession(ctx context.Context, meta commands.Meta, title, agentName, dir string) (string, commands.Result, error) {
	sid := NewSessionID(meta.CommandID)
	if agentName == "" {
		agentName = "build"
	}
	dir, err := workspace(dir, "")
	if err == nil {
		err = c.settings.Own.OutsideWorkspace(filepath.ToSlash(dir))
	}
	if err != nil {
		return sid, commands.Result{}, err
	}
	sc, err := c.ports.Configure(dir)
	if err != nil {
		return sid, commands.Result{}, err
	}
	if _, err := agent.Resolve(agentName, sc.Settings.Agents, true); err != nil {
		return sid, commands.Result{}, err
	}
	meta.CorrelationID = sid
	res, err := c.CreateSession(ctx, meta, NewSession{SessionID: sid, Title: DefaultTitle(title), Agent: agentName, Directory: dir})
	return sid, res, err
}

// AppendMessage records a user message in a session.
func (c *Commands) AppendMessage(ctx context.Context, meta commands.Meta, sessionID, messageID, text string) (commands.Result, error) {
	return c.send(ctx, &commands.AppendUserMessage{Meta: meta,
		AppendUserMessage: session.AppendUserMessage{SessionID: sessionID, MessageID: messageID, Text: text}})
}

// UpdatePlan is plan_update with its JSON arguments, as a model sends them.
func (c *Commands) UpdatePlan(ctx context.Context, meta commands.Meta, sessionID, args string) (commands.Result, error) {
	var u work.PlanUpdate
	if err := decodeStrict(args, &u); err != nil {
		return commands.Result{}, err
	}
	if err := c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.Result{}, err
	}
	return c.send(ctx, &commands.UpdatePlan{Meta: meta, SessionID: sessionID, Update: u})
}

// UpdateTodos is todo_update with its JSON arguments.
func (c *Commands) UpdateTodos(ctx context.Context, meta commands.Meta, sessionID, args string) (commands.Result, error) {
	var u work.TodoUpdate
	if err := decodeStrict(args, &u); err != nil {
		return commands.Result{}, err
	}
	if err := c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.Result{}, err
	}
	return c.send(ctx, &commands.UpdateTodos{Meta: meta, SessionID: sessionID, Update: u})
}

// decodeStrict reads a tool's JSON arguments: an unknown field is an error naming it.
func decodeStrict(raw string, into any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return domain.Invalid("arguments", "are not valid JSON for this tool: "+err.Error(),
			"send one JSON object with the tool's fields (zuno plan update --help shows an example)")
	}
	if dec.More() {
		return domain.Invalid("arguments", "hold more than one JSON value", "send one JSON object")
	}
	return nil
}

// AnswerPermission answers a turn's permission ask (once, always or reject). The answer lands
// in the session's inbox, where the waiting turn reads it; it is recorded even when the turn
// that asked is gone.
func (c *Commands) AnswerPermission(ctx context.Context, meta commands.Meta, sessionID, askID, callID, reply string) (commands.Result, error) {
	return c.send(ctx, &commands.AnswerPermission{Meta: meta,
		Answer: answers.Answer{SessionID: sessionID, AskID: askID, CallID: callID, Reply: reply, Source: "user"}})
}

// InterruptTurn asks the process that drives the session's running turn to stop it; that
// process, wherever it runs, records the interruption on the turn (docs/turns.md, "Leases").
func (c *Commands) InterruptTurn(ctx context.Context, meta commands.Meta, sessionID, turnID string) (commands.Result, error) {
	if turnID == "" { // the session's open turn: its lease stream is where its holder looks
		open, err := c.ports.Driver.Open(ctx, sessionID)
		if domain.CodeOf(err) == turn.CodeNoOpenTurn {
			e := domain.NewError(lease.CodeTurnNotRunning, fmt.Sprintf("session %s has no running turn", sessionID),
				"check the session with zuno session show")
			e.ID = sessionID
			return commands.Result{}, e
		}
		if err != nil {
			return commands.Result{}, err
		}
		if open.Suspended { // no process drives it: nothing to stop
			e := domain.NewError(turn.CodeTurnSuspended, fmt.Sprintf("turn %s of session %s is suspended, waiting for an answer: no process runs it", open.Started.TurnID, sessionID),
				fmt.Sprintf("answer its ask (zuno session answer) and resume it, or cancel it: zuno run --session %s --recover PROMPT", sessionID))
			e.ID = sessionID
			return commands.Result{}, e
		}
		turnID = open.Started.TurnID
	}
	return c.send(ctx, &commands.InterruptTurn{Meta: meta, SessionID: sessionID, TurnID: turnID})
}

// RevokeGrants ends every standing approval ("always" answer) of the session: its later turns,
// in any process, ask again. It is refused while a turn of the session is open.
func (c *Commands) RevokeGrants(ctx context.Context, meta commands.Meta, sessionID string) (commands.Result, error) {
	return c.send(ctx, &commands.RevokeGrants{Meta: meta, Revoke: permission.Revoke{SessionID: sessionID}})
}

// PruneSession ends a session (archive or delete; docs/server.md, "Pruning a session"): its
// standing approvals end and it takes no new message or turn, in one append. It is refused
// (turn_open) while a turn of the session is open: interrupt the turn first.
func (c *Commands) PruneSession(ctx context.Context, meta commands.Meta, sessionID, mode, reason string) (commands.Result, error) {
	return c.send(ctx, &commands.RevokeGrants{Meta: meta, Revoke: permission.Revoke{SessionID: sessionID},
		Prune: &session.Prune{SessionID: sessionID, Mode: mode, Reason: reason}})
}

// ForkSession opens sessionID with the history of the session whose stream holds the event
// from names (a global position, or an event id), up to and including that event
// (docs/storage.md, "Forks"). The source is not touched.
func (c *Commands) ForkSession(ctx context.Context, meta commands.Meta, from, sessionID, title string) (commands.Result, error) {
	at, err := c.findEvent(ctx, from)
	if err != nil {
		return commands.Result{}, err
	}
	return c.send(ctx, &commands.ForkSession{Meta: meta, SessionID: sessionID, Title: title,
		SourceStream: at.Stream, SourceRevision: at.StreamRevision})
}

// findEvent reads the event at a global position, or scans the log for an event id: the log
// has no index by id that every store shares, and a fork is rare.
func (c *Commands) findEvent(ctx context.Context, from string) (events.Recorded, error) {
	notFound := &queries.NotFoundError{Message: fmt.Sprintf("no event at position or with id %q; list events with zuno events read", from)}
	if pos, err := strconv.ParseUint(from, 10, 64); err == nil {
		recs, err := c.ports.Log.ReadAll(ctx, max(pos, 1)-1, 1)
		if err != nil {
			return events.Recorded{}, err
		}
		if len(recs) == 0 || recs[0].Position != pos {
			return events.Recorded{}, notFound
		}
		return recs[0], nil
	}
	const page = 4096
	var after uint64
	for {
		recs, err := c.ports.Log.ReadAll(ctx, after, page)
		if err != nil {
			return events.Recorded{}, err
		}
		for _, r := range recs {
			if r.ID == from {
				return r, nil
			}
		}
		if len(recs) < page {
			return events.Recorded{}, notFound
		}
		after = recs[len(recs)-1].Position
	}
}
