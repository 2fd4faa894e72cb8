package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// Permission asks (docs/permissions.md, "Standing approvals"; docs/acp.md, "Permission
// requests"). A turn run for a client is interactive: at an ask it records
// session.permission.asked.1 and waits for the answer in the session's inbox, the same port
// the terminal and the HTTP server answer through. The client is asked with
// session/request_permission, its three options being Zuno's three replies; its choice is
// recorded as any face's (Commands.AnswerPermission, actor acp). Whoever answers first is
// recorded: when another face answered, the turn goes on and the client's request is
// withdrawn ($/cancel_request); a choice that comes after another face's answer is not
// recorded, the ask being no longer pending (the 404 of the HTTP face), and the client is told
// so on the call (_meta.zuno.kind "ask_not_pending").

// The option ids of a permission request: Zuno's replies.
const (
	optionOnce   = "once"
	optionAlways = "always"
	optionReject = "reject"
)

// permissionOptions are the replies an ask takes: once, always for the session (only when the
// call has a pattern an "always" can save), reject.
func permissionOptions(e events.PermissionAsked) []sdk.PermissionOption {
	opts := []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optionOnce}}
	if e.Always != "" {
		opts = append(opts, sdk.PermissionOption{Kind: sdk.PermissionOptionKindAllowAlways,
			Name: "Allow always for this session: " + e.Key + " " + e.Always, OptionId: optionAlways})
	}
	return append(opts, sdk.PermissionOption{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: optionReject})
}

// ask puts the ask to the client beside the turn (the turn waits in the inbox, not here).
// Called with s.mu held.
func (s *stream) ask(e events.PermissionAsked) {
	actx, cancel := context.WithCancel(s.g.ctx)
	s.asks[e.CallID] = cancel
	call, dir := s.calls[e.CallID], s.dir
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		s.g.askClient(actx, e, call, dir)
	}()
}

// settle withdraws the client's request for a call that went on (answered by another face)
// or ended. Called with s.mu held.
func (s *stream) settle(callID string) {
	if cancel, ok := s.asks[callID]; ok {
		cancel()
		delete(s.asks, callID)
	}
}

func (g *Agent) askClient(ctx context.Context, e events.PermissionAsked, call events.ToolCall, dir string) {
	v := viewCall(call, dir)
	if call.ID == "" {
		v = callView{title: e.Tool, kind: toolKind(e.Tool)}
	}
	pending := sdk.ToolCallStatusPending
	meta := zunoMeta(map[string]any{"kind": "permission_ask", "askId": e.AskID, "tool": e.Tool, "key": e.Key,
		"resource": e.Resource, "rule": e.Rule, "layer": e.Layer, "gate": e.Gate, "reason": e.Reason, "always": e.Always})
	req := sdk.RequestPermissionRequest{SessionId: sdk.SessionId(e.SessionID), Options: permissionOptions(e), Meta: meta,
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(e.CallID), Title: &v.title, Kind: &v.kind, Status: &pending,
			Locations: v.locations, Content: v.content, RawInput: v.raw}}
	resp, err := sdk.SendRequest[sdk.RequestPermissionResponse](g.conn, ctx, sdk.ClientMethodSessionRequestPermission, req)
	switch {
	case ctx.Err() != nil:
		return // withdrawn: another face answered, or the turn ended
	case err != nil:
		g.logf("permission request %s of session %s: %v", e.AskID, e.SessionID, err)
		return
	case resp.Outcome.Cancelled != nil:
		return // the client cancelled the prompt: the turn's interruption settles the call
	case resp.Outcome.Selected == nil:
		return
	}
	reply := string(resp.Outcome.Selected.OptionId)
	if !offered(e, reply) {
		// Nothing runs that nobody approved: an option the request did not offer is a rejection.
		g.logf("permission request %s: option %q was not offered; rejected", e.AskID, reply)
		reply = optionReject
	}
	if err := g.answer(context.WithoutCancel(ctx), e, reply); err != nil {
		g.logf("permission request %s: %v", e.AskID, err)
		code := app.CodeOf(err)
		u := sdk.UpdateToolCall(sdk.ToolCallId(e.CallID))
		u.ToolCallUpdate.Meta = zunoMeta(map[string]any{"kind": code, "askId": e.AskID, "reply": reply, "message": err.Error()})
		_ = g.update(context.WithoutCancel(ctx), sdk.SessionNotification{SessionId: sdk.SessionId(e.SessionID), Update: u})
	}
}

func offered(e events.PermissionAsked, reply string) bool {
	for _, o := range permissionOptions(e) {
		if string(o.OptionId) == reply {
			return true
		}
	}
	return false
}

// answer records the client's reply when the ask is still pending; otherwise (or when another
// reply is committed between the read and the append) it records nothing and is
// ask_not_pending, as the HTTP face's second reply is.
func (g *Agent) answer(ctx context.Context, e events.PermissionAsked, reply string) error {
	asks, err := g.app.Queries.Asks(ctx, e.SessionID)
	if err != nil {
		return err
	}
	pending := false
	for _, a := range asks {
		if a.AskID == e.AskID && a.Pending {
			pending = true
		}
	}
	if !pending {
		return notPending(e)
	}
	res, err := g.app.Commands.AnswerPermission(ctx, g.meta(e.SessionID), e.SessionID, e.AskID, e.CallID, reply)
	switch {
	case app.CodeOf(err) == "already_answered":
		return notPending(e)
	case err != nil:
		return err
	case res.Events == 0 && !res.Duplicate:
		return notPending(e)
	}
	return nil
}

func notPending(e events.PermissionAsked) error {
	return &askError{e.AskID}
}

// askError is the typed refusal of a reply to an ask that is not pending.
type askError struct{ askID string }

func (e *askError) Error() string {
	return "ask " + e.askID + " is not pending: it was answered already, or its call ended; the recorded reply is final"
}

// Code is the stable code.
func (e *askError) Code() string { return CodeAskNotPending }
