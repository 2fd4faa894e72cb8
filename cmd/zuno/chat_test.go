package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/faces/tui"
)

// The chat answers asks and questions through the ports the server uses, with the server's
// outcome for a reply that comes second (docs/server.md, "Permission replies"; docs/tui.md,
// "A second face"): over a real SQLite log, a suspended turn's ask and a published question are
// answered by the chat and another face at once; exactly one reply is recorded, and every
// other reply of the chat is refused ask_not_pending / question_not_pending. On SQLite and on
// the Postgres server of ZUNO_TEST_POSTGRES_URL. Run with -race.
func TestChatRepliesAsTheServerDoes(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { chatReplies(t, "") })
	t.Run("postgres", func(t *testing.T) { chatReplies(t, pgtest.NewDatabase(t)) })
}

func chatReplies(t *testing.T, postgres string) {
	if postgres != "" {
		t.Setenv("ZUNO_EVENTSTORE_URL", postgres)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns": [{"text": "another session"}], "sessions": [
	  {"when": "patch", "turns": [{"toolCalls": [{"id": "p1", "name": "apply_patch", "arguments": {"patch": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"}}]}]},
	  {"when": "ask", "turns": [{"toolCalls": [{"id": "q1", "name": "question", "arguments": {"questions": [{"id": "db", "question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}]}}]}, {"text": "ok"}]}]}`)
	cfg := filepath.Join(dir, "config.json")
	writeFile(t, cfg, `{"model": "scripted:`+script+`", "permission": {"rules": {"edit": "ask"}}}`)
	t.Setenv("ZUNO_CONFIG", cfg)
	t.Setenv("ZUNO_DB", filepath.Join(t.TempDir(), "zuno.db"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(t.TempDir(), "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "cfg"))
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws)
	ctx := context.Background()
	a, err := openApp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	chat := tui.NewEngine(tui.Config{App: a.Application}, func(any) {})
	meta := func() commands.Meta { return commands.Meta{CommandID: zapp.NewID("cmd_"), Actor: "user"} }

	// A turn suspended at its ask: the ask stays pending, no process waits.
	res, err := a.Commands.RunTurn(ctx, zapp.RunTurn{Meta: meta(), Prompt: "patch", Cwd: ws, Interactive: true, Suspend: true})
	if err != nil || res.Reason != turn.ReasonSuspended {
		t.Fatalf("the turn: %+v %v (want suspended)", res.Outcome, err)
	}
	sid := res.SessionID
	other, _, err := a.Commands.OpenSession(ctx, meta(), "other", "", ws)
	if err != nil {
		t.Fatal(err)
	}
	notPending := func(t *testing.T, err error, code string) {
		t.Helper()
		if zapp.CodeOf(err) != code {
			t.Fatalf("got %v, want %s", err, code)
		}
	}
	t.Run("ask never asked", func(t *testing.T) {
		notPending(t, chat.AnswerAsk(ctx, sid, "ask_nope", "once"), tui.CodeAskNotPending)
	})
	t.Run("another session's ask", func(t *testing.T) {
		notPending(t, chat.AnswerAsk(ctx, other, "ask_p1", "once"), tui.CodeAskNotPending)
	})
	t.Run("the chat against another face, at once", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i, reply := range []string{"once", "once", "always"} {
			wg.Go(func() { errs[i] = chat.AnswerAsk(ctx, sid, "ask_p1", reply) })
		}
		var rawRes commands.Result
		var rawErr error
		wg.Go(func() { // zuno session answer, in effect
			rawRes, rawErr = a.Commands.AnswerPermission(ctx, meta(), sid, "ask_p1", "p1", "reject")
		})
		wg.Wait()
		winners := 0
		for _, err := range errs {
			switch zapp.CodeOf(err) {
			case "":
				winners++
			case tui.CodeAskNotPending:
			default:
				t.Fatalf("a chat reply: %v", err)
			}
		}
		if rawErr == nil && rawRes.Events > 0 {
			winners++
		}
		if winners != 1 {
			t.Fatalf("%d replies were recorded (chat %v, other face %+v %v); want exactly 1", winners, errs, rawRes, rawErr)
		}
		asks, err := a.Queries.Asks(ctx, sid)
		if err != nil || len(asks) != 1 || asks[0].Pending || asks[0].Reply == "" {
			t.Fatalf("asks after the race: %+v %v", asks, err)
		}
	})
	t.Run("the same ask again", func(t *testing.T) {
		notPending(t, chat.AnswerAsk(ctx, sid, "ask_p1", "reject"), tui.CodeAskNotPending)
	})

	// A question the build agent publishes and does not wait for: it stays open.
	res, err = a.Commands.RunTurn(ctx, zapp.RunTurn{Meta: meta(), Prompt: "ask", Cwd: ws})
	if err != nil || res.Reason != events.FinishCompleted {
		t.Fatalf("the question's turn: %+v %v", res.Outcome, err)
	}
	port := a.Commands.Questions()
	req, err := port.Get(ctx, res.SessionID, zapp.RequestID(res.SessionID, "q1"))
	if err != nil {
		t.Fatal(err)
	}
	pick := func(label string) []events.QuestionItemAnswer {
		return []events.QuestionItemAnswer{{ItemID: "db", Selected: []string{label}}}
	}
	t.Run("question never published", func(t *testing.T) {
		ghost := *req
		ghost.RequestID = "qst_0000"
		notPending(t, chat.AnswerQuestion(ctx, &ghost, pick("A")), tui.CodeQuestionNotPending)
	})
	t.Run("the chat against another face on a question, at once", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i, label := range []string{"A", "B", "A"} {
			wg.Go(func() { errs[i] = chat.AnswerQuestion(ctx, req, pick(label)) })
		}
		var rawErr error
		wg.Go(func() { // zuno question answer, in effect, against the revision it read
			_, rawErr = port.Answer(ctx, meta(), req.SessionID, req.RequestID, req.Revision, pick("B"), "cli")
		})
		wg.Wait()
		winners := 0
		for _, err := range append(errs, rawErr) {
			switch zapp.CodeOf(err) {
			case "":
				winners++
			case tui.CodeQuestionNotPending, zapp.CodeStaleRevision, "question_closed":
			default:
				t.Fatalf("a reply: %v", err)
			}
		}
		if winners != 1 {
			t.Fatalf("%d answers were recorded (chat %v, other face %v); want exactly 1", winners, errs, rawErr)
		}
		cur, err := port.Get(ctx, req.SessionID, req.RequestID)
		if err != nil || cur.Open() {
			t.Fatalf("the request after the race: %+v %v", cur, err)
		}
	})
	t.Run("the answered question again, and later", func(t *testing.T) {
		notPending(t, chat.AnswerQuestion(ctx, req, pick("A")), tui.CodeQuestionNotPending)
		notPending(t, chat.AnswerQuestion(ctx, req, nil), tui.CodeQuestionNotPending)
	})
	// The answer wakes its session: the delivery's turn runs in this process, as under the chat,
	// which waits for it (SettleJobs) after a reply.
	if _, err := a.Commands.SettleJobs(ctx); err != nil {
		t.Fatalf("the answer's delivery: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
