package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/events"
)

// The user's Goal commands through the Application: a completion is refused while the
// session's latest turn is open (a task call of it could admit a job the barrier would not
// see), and goes through the barrier once the turn is finished; resume and answer follow the
// Goal's rules.
func TestComponentGoalCommands(t *testing.T) {
	c := newComponent(t)
	ctx := context.Background()
	registry := events.NewRegistry(events.AllPayloads()...)
	h := commands.NewHandlers(c.store, registry, commands.SystemClock{}, nil)
	const sid = "ses_goal"
	if _, err := c.app.Commands.CreateSession(ctx, meta("create"), app.NewSession{SessionID: sid, Title: "g", Agent: "build", Directory: c.workspace}); err != nil {
		t.Fatal(err)
	}
	obj := "Ship it"
	if res, err := h.UpdateGoal(ctx, &commands.UpdateGoal{Meta: meta("goal"), SessionID: sid, Update: goal.Update{Objective: &obj}}); err != nil || res.Err() != nil {
		t.Fatal(err, res.Err())
	}
	// A turn of the session starts and has not finished.
	w := commands.Writer{Store: c.store, Stream: commands.SessionStream(sid), Meta: meta("turn"), Digest: "turn", Clock: commands.SystemClock{}, Revision: 0}
	if _, err := w.Append(ctx, events.TurnStarted{SessionID: sid, TurnID: "turn_open", MessageID: "msg_1", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.app.Commands.CompleteGoal(ctx, meta("complete-1"), sid, nil, nil)
	if domain.CodeOf(err) != app.CodeGoalTurnOpen {
		t.Fatalf("completion during an open turn: %v", err)
	}
	if _, err := w.Append(ctx, events.TurnFinished{SessionID: sid, TurnID: "turn_open", Reason: events.FinishCompleted}); err != nil {
		t.Fatal(err)
	}
	res, err := c.app.Commands.CompleteGoal(ctx, meta("complete-2"), sid, nil, nil)
	var v goal.View
	if err != nil || json.Unmarshal(res.View, &v) != nil || v.Status != events.GoalComplete {
		t.Fatalf("completion: %v %s", err, res.View)
	}
	if _, err := c.app.Commands.ResumeGoal(ctx, meta("resume"), sid, nil); domain.CodeOf(err) != goal.CodeNoGoal {
		t.Fatalf("resuming a completed Goal: %v", err)
	}
	if _, err := c.app.Commands.AnswerGoalInput(ctx, meta("answer"), sid, "req_x", "yes"); domain.CodeOf(err) != goal.CodeWaitMismatch {
		t.Fatalf("answering no request: %v", err)
	}
	if v, err := c.app.Queries.Goal(ctx, sid); err != nil || v == nil || v.Revision != 2 {
		t.Fatalf("goal read: %+v %v", v, err)
	}
}
