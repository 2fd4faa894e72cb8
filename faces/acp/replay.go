package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// replay sends a session's history as session updates, read from its stream in the log (a
// fork's from its source up to the fork): every user message (a delegated child's report with
// _meta.zuno.kind "task_report" and the report under _meta.zuno.taskReport, seeds 002 §6), the
// model's text, each tool call with its start and its result, and, last, the durable Plan as
// it is now. The updates are those the live stream sent, made by the same functions
// (project.go), the model's text in one chunk per response where it had streamed in pieces.
// It returns the session's mode: the agent of the last turn the user started (a delivered
// report's turn runs as the session's recorded agent), else the session's own.
func (g *Agent) replay(ctx context.Context, sid string) (string, error) {
	info, err := g.app.Queries.Session(ctx, sid)
	if err != nil {
		return "", err
	}
	mode, dir, delivered := info.Agent, "", false
	send := func(u sdk.SessionUpdate) error {
		return g.update(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(sid), Update: u})
	}
	err = g.app.Queries.Fold(ctx, commands.SessionStream(sid), func(rec events.Recorded, p events.Payload) error {
		var us []sdk.SessionUpdate
		switch e := p.(type) {
		case events.SessionCreated:
			dir = e.Directory
		case events.DirectoryChanged:
			dir = e.Directory
		case events.UserMessageAppended:
			us, delivered = []sdk.SessionUpdate{userUpdate(e)}, deliveredInput(e)
		case events.TurnStarted:
			if !delivered && e.Agent != "" {
				mode = e.Agent // a delivery turn runs as the session's own agent: not a mode the user chose
			}
		case events.ProviderRequest:
			if e.Status == events.RequestCompleted {
				us = responseUpdates(e.Response, false, dir)
			}
		case events.ToolStarted:
			us = []sdk.SessionUpdate{startedUpdate(e)}
		case events.ToolSettled:
			us = []sdk.SessionUpdate{settledUpdate(e, dir)}
		case events.ToolBlocked:
			us = []sdk.SessionUpdate{blockedUpdate(e)}
		}
		for _, u := range us {
			if err := send(u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	v, err := g.app.Queries.Plan(ctx, sid)
	if err != nil {
		return "", err
	}
	pv, _ := v.(*work.PlanView)
	if u, ok := planUpdate(pv); ok {
		if err := send(u); err != nil {
			return "", err
		}
	}
	return mode, nil
}
