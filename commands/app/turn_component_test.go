package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain/verification"
)

// turnScript writes a file, makes a plan, runs a shell command that reads the file back, and
// answers.
const turnScript = `{"turns":[
 {"toolCalls":[
   {"id":"call_write","name":"write","arguments":{"path":"notes/hello.txt","content":"hi from the turn\n"}},
   {"id":"call_plan","name":"plan_update","arguments":{"action":"create","title":"Ship","steps":[{"title":"write the note"}]}}]},
 {"toolCalls":[{"id":"call_cat","name":"shell","arguments":{"command":"cat notes/hello.txt"}}]},
 {"text":"The note is written."}]}`

// A turn through the Application: real tools change the workspace, and the session, its turns,
// the plan, the shell's verification receipt and the prompt receipt are read back through the
// queries.
func TestComponentTurn(t *testing.T) {
	c := newComponent(t)
	ctx := context.Background()
	q := c.app.Queries
	if err := os.WriteFile(filepath.Join(c.workspace, "AGENTS.md"), []byte("Project rule: keep notes short.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := c.script("turn", turnScript)
	first := c.run(t, app.RunTurn{Meta: meta("run-1"), Prompt: "write a note", Model: spec})
	session := first.SessionID
	if first.Reason != "completed" || first.Steps != 3 || first.Text != "The note is written." {
		t.Fatalf("outcome: %+v", first.Outcome)
	}

	t.Run("the write tool changed the workspace", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(c.workspace, "notes", "hello.txt"))
		if err != nil || string(b) != "hi from the turn\n" {
			t.Fatalf("the note: %q %v", b, err)
		}
	})
	t.Run("the session and its turn are folded from the log", func(t *testing.T) {
		info, err := q.Session(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.EvalSymlinks(c.workspace)
		if info.Directory != want || info.Title != "write a note" || info.Agent != "build" || info.Messages != 1 {
			t.Fatalf("session: %+v", info)
		}
		if len(info.Turns) != 1 || info.Turns[0].Status != "completed" || info.Turns[0].Steps != 3 {
			t.Fatalf("turns: %+v", info.Turns)
		}
	})
	t.Run("the plan the model made is the session's", func(t *testing.T) {
		plan, err := q.Plan(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		contains(t, plan, `"title":"Ship"`)
	})
	t.Run("the shell call's verification receipt is found by its id", func(t *testing.T) {
		r, err := q.VerificationReceipt(ctx, verification.ReceiptID(session, "call_cat"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Command != "cat notes/hello.txt" || r.EventID == "" {
			t.Fatalf("receipt: %+v", r)
		}
		_, err = q.VerificationReceipt(ctx, verification.ReceiptID(session, "call_never"))
		code(t, err, queries.CodeNotFound)
		_, err = q.VerificationReceipt(ctx, "rcp_short")
		code(t, err, "invalid_argument")
	})
	t.Run("each step's prompt receipt verifies and holds the project's AGENTS.md", func(t *testing.T) {
		for step := 1; step <= 3; step++ {
			v, err := q.Prompt(ctx, session, step, true)
			if err != nil || !v.Verified || v.ReceiptID == "" {
				t.Fatalf("step %d: %+v %v", step, v.ReceiptID, err)
			}
			contains(t, v, "keep notes short")
		}
	})
	t.Run("the same command again runs nothing and returns the first outcome", func(t *testing.T) {
		before, err := q.Events(ctx, commands.SessionStream(session), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		// A provider that fails when asked: a re-run that asked it anything would fail.
		again := c.run(t, app.RunTurn{Meta: meta("run-1"), Prompt: "write a note",
			Model: c.script("failing", `{"turns":[{"error":{"code":"invalid_request","message":"a duplicate must not ask"}}]}`)})
		after, err := q.Events(ctx, commands.SessionStream(session), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Duplicate || again.SessionID != session || again.TurnID != first.TurnID || len(after) != len(before) {
			t.Fatalf("again: %+v; %d events, then %d", again.Outcome, len(before), len(after))
		}
	})
	t.Run("the next turn continues the session", func(t *testing.T) {
		next := c.run(t, app.RunTurn{Meta: meta("run-2"), SessionID: session, Prompt: "thanks",
			Model: c.script("next", `{"turns":[{"text":"You are welcome."}]}`)})
		if err := q.WaitFor(ctx, next.LastPosition); err != nil {
			t.Fatal(err)
		}
		info, err := q.Session(ctx, session)
		if err != nil || len(info.Turns) != 2 || info.Messages != 2 {
			t.Fatalf("session after two turns: %+v %v", info, err)
		}
		list, err := q.Sessions(ctx, 10)
		if err != nil || len(list.Rows) != 1 {
			t.Fatalf("sessions: %+v %v", list, err)
		}
	})
	t.Run("a session that does not exist is refused before anything is recorded", func(t *testing.T) {
		head, _ := c.store.LastPosition(ctx)
		_, err := c.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-x"), SessionID: "ses_nope", Prompt: "hi", Model: spec, Cwd: c.workspace})
		code(t, err, "session_not_found")
		if after, _ := c.store.LastPosition(ctx); after != head {
			t.Fatalf("the log grew from %d to %d", head, after)
		}
	})
}
