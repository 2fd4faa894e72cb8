package app_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain"
)

// Sessions through the Application: each command's effect is read back through the queries,
// the folds of the log at once and the read models once they reach the command's position.
func TestComponentSessions(t *testing.T) {
	c := newComponent(t)
	ctx := context.Background()
	cmds, q := c.app.Commands, c.app.Queries
	create := app.NewSession{SessionID: "ses_a", Title: "first", Agent: "build", Directory: c.workspace}

	res, err := cmds.CreateSession(ctx, meta("create-a"), create)
	if err != nil || res.Duplicate {
		t.Fatalf("create: %+v %v", res, err)
	}
	if err := q.WaitFor(ctx, res.LastPosition); err != nil {
		t.Fatal(err)
	}
	list, err := q.Sessions(ctx, 10)
	if err != nil || len(list.Rows) != 1 {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	contains(t, list.Rows[0], `"first"`)
	if latest, err := q.LatestSession(ctx, c.workspace); err != nil || latest != "ses_a" {
		t.Fatalf("latest session in the workspace: %q %v", latest, err)
	}
	_, err = q.LatestSession(ctx, t.TempDir())
	code(t, err, "not_found")

	t.Run("the same command again writes nothing and returns the first result", func(t *testing.T) {
		again, err := cmds.CreateSession(ctx, meta("create-a"), create)
		if err != nil || !again.Duplicate || again.LastPosition != res.LastPosition {
			t.Fatalf("again: %+v %v", again, err)
		}
	})
	t.Run("the same command id with another body is refused", func(t *testing.T) {
		other := create
		other.Title = "changed"
		_, err := cmds.CreateSession(ctx, meta("create-a"), other)
		code(t, err, commands.CodeCommandIDReused)
	})
	t.Run("another command creating the same session is refused", func(t *testing.T) {
		_, err := cmds.CreateSession(ctx, meta("create-a-2"), create)
		code(t, err, domain.CodeSessionExists)
	})
	message, err := cmds.AppendMessage(ctx, meta("m1"), "ses_a", "msg_1", "hello")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("messages are folded from the log at once", func(t *testing.T) {
		info, err := q.Session(ctx, "ses_a")
		if err != nil || info.Messages != 1 || info.Title != "first" || info.Agent != "build" || len(info.Turns) != 0 {
			t.Fatalf("session: %+v %v", info, err)
		}
	})
	t.Run("an unknown session is session_not_found", func(t *testing.T) {
		_, err := q.Session(ctx, "ses_nope")
		code(t, err, domain.CodeSessionNotFound)
		_, err = q.Plan(ctx, "ses_nope")
		code(t, err, domain.CodeSessionNotFound)
		_, err = cmds.UpdatePlan(ctx, meta("p-nope"), "ses_nope", `{"action":"create","title":"P","steps":[{"title":"a"}]}`)
		code(t, err, domain.CodeSessionNotFound)
	})
	t.Run("plan and todos are read back from the work stream", func(t *testing.T) {
		if _, err := cmds.UpdatePlan(ctx, meta("p1"), "ses_a", `{"action":"create","title":"Ship it","steps":[{"title":"build"}]}`); err != nil {
			t.Fatal(err)
		}
		if _, err := cmds.UpdateTodos(ctx, meta("t1"), "ses_a", `{"items":[{"id":"t-1","title":"write the test"}]}`); err != nil {
			t.Fatal(err)
		}
		plan, err := q.Plan(ctx, "ses_a")
		if err != nil {
			t.Fatal(err)
		}
		contains(t, plan, `"title":"Ship it"`)
		todos, err := q.Todos(ctx, "ses_a")
		if err != nil {
			t.Fatal(err)
		}
		contains(t, todos, `"write the test"`)
	})
	t.Run("plan arguments with an unknown field are refused before anything is sent", func(t *testing.T) {
		_, err := cmds.UpdatePlan(ctx, meta("p2"), "ses_a", `{"action":"create","title":"P","colour":"red"}`)
		code(t, err, domain.CodeInvalidArgument)
	})
	t.Run("an answer to an ask the session never put is refused", func(t *testing.T) {
		_, err := cmds.AnswerPermission(ctx, meta("a1"), "ses_a", "ask_none", "call_none", "always")
		code(t, err, commands.CodeAskNotFound)
	})
	t.Run("a fork carries the history and is listed", func(t *testing.T) {
		if _, err := cmds.ForkSession(ctx, meta("fork"), strconv.FormatUint(message.LastPosition, 10), "ses_b", "second"); err != nil {
			t.Fatal(err)
		}
		info, err := q.Session(ctx, "ses_b")
		if err != nil || info.Messages != 1 || info.Title != "second" {
			t.Fatalf("fork: %+v %v", info, err)
		}
		list, err := q.Sessions(ctx, 10)
		if err != nil || len(list.Rows) != 2 {
			t.Fatalf("sessions after the fork: %+v %v", list, err)
		}
	})
}
