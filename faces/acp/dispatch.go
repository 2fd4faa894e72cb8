package acp

import (
	"context"
	"encoding/json"
	"errors"

	sdk "github.com/coder/acp-go-sdk"
)

// The methods the agent answers, dispatched on the library's JSON-RPC connection. The
// library's own agent-side dispatcher is not used: it cancels a session's running prompt
// when another prompt for the session arrives, so a client's second prompt would interrupt
// the first turn; here the second prompt is refused (prompt_running) and the running turn goes
// on (docs/acp.md, "Malformed and out-of-order messages"). The methods ACP marks optional that
// Zuno does not offer (and does not advertise in initialize) are "method not found".
func (g *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *sdk.RequestError) {
	<-g.connected
	switch method {
	case sdk.AgentMethodInitialize:
		return call(ctx, params, g.Initialize)
	case sdk.AgentMethodAuthenticate:
		return call(ctx, params, g.Authenticate)
	case sdk.AgentMethodSessionNew:
		return call(ctx, params, g.NewSession)
	case sdk.AgentMethodSessionLoad:
		return call(ctx, params, g.LoadSession)
	case sdk.AgentMethodSessionPrompt:
		return call(ctx, params, g.Prompt)
	case sdk.AgentMethodSessionSetMode:
		return call(ctx, params, g.SetSessionMode)
	case sdk.AgentMethodSessionCancel:
		return call(ctx, params, func(ctx context.Context, p sdk.CancelNotification) (any, error) { return nil, g.Cancel(ctx, p) })
	case methodQuestions:
		return call(ctx, params, g.questions)
	case methodQuestionsReply:
		return call(ctx, params, g.replyQuestion)
	}
	return nil, sdk.NewMethodNotFound(method)
}

// call decodes params as P, checks them as the protocol's schema does (the types' Validate),
// and calls fn; its error is answered as a JSON-RPC error.
func call[P, R any](ctx context.Context, params json.RawMessage, fn func(context.Context, P) (R, error)) (any, *sdk.RequestError) {
	var p P
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if v, ok := any(&p).(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
	}
	r, err := fn(ctx, p)
	if err != nil {
		var re *sdk.RequestError
		if errors.As(toRPC(err), &re) {
			return nil, re
		}
	}
	return r, nil
}

// update sends one session/update notification.
func (g *Agent) update(ctx context.Context, n sdk.SessionNotification) error {
	return g.conn.SendNotification(ctx, sdk.ClientMethodSessionUpdate, n)
}
