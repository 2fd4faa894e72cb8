package app

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/inbox"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
)

// NewSession is a session to create.
type NewSession struct {
	SessionID, Title, Agent, Directory string
}

// CreateSession creates a session.
func (c *Commands) CreateSession(ctx context.Context, meta commands.Meta, s NewSession) (commands.Result, error) {
	return c.send(ctx, &commands.CreateSession{Meta: meta,
		Create: session.Create{SessionID: s.SessionID, Title: s.Title, Agent: s.Agent, Directory: s.Directory}})
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
		Answer: inbox.Answer{SessionID: sessionID, AskID: askID, CallID: callID, Reply: reply, Source: "user"}})
}
