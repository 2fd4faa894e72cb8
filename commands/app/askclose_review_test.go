package app_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Review attack: the close of an ask is a command of the inbox stream with a fixed id
// (commands.CloseAskID). A reply sent under that very id (zuno session answer --command-id
// takes any text) lands in the same stream first; when the turn then ends the call unstarted
// (a suspended turn cancelled with --recover) its close met its own id with another command's
// digest (command_id_reused), so the recovery could not record the turn's end, ever.
func TestReplyUnderTheClosesCommandID(t *testing.T) {
	a := newAskApp(t, false)
	ctx := context.Background()
	res, err := a.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-squat"), Prompt: "write a", Cwd: a.workspace, Interactive: true, Suspend: true})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.SessionID
	ans, err := a.app.Commands.AnswerPermission(ctx, meta(commands.CloseAskID(sid, "ask_w1")), sid, "ask_w1", "w1", "once")
	if err == nil {
		err = ans.Err()
	}
	if err != nil {
		if app.CodeOf(err) != domain.CodeInvalidArgument {
			t.Fatalf("refused as %v", err)
		}
		// Refused: nothing recorded, the ask still pending.
		if r := a.record(t, sid); len(r.answered) != 0 || !r.view.Pending {
			t.Fatalf("refused reply (%v), yet %+v", err, r)
		}
	}
	// The suspended turn is cancelled: its end must be recorded whatever the inbox holds.
	if _, err := a.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("recover-squat"), SessionID: sid, Prompt: "go on", Cwd: a.workspace, Recover: true}); err != nil {
		t.Fatalf("the recovery: %v", err)
	}
	r := a.record(t, sid)
	if r.started || r.granted || r.finished == "" || len(r.answered)+len(r.closed) != 1 {
		t.Fatalf("%+v", r)
	}
}

// The same squat in a log written before replies were refused the close's id (appended here
// as that build's handler did, for another ask): the recovery still closes ask_w1.
func TestCloseAfterAnOldSquat(t *testing.T) {
	a := newAskApp(t, false)
	ctx := context.Background()
	res, err := a.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-old-squat"), Prompt: "write a", Cwd: a.workspace, Interactive: true, Suspend: true})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.SessionID
	w := commands.Writer{Store: a.store, Stream: commands.InboxStream(sid), Meta: meta(commands.CloseAskID(sid, "ask_w1")),
		Clock: commands.SystemClock{}, Revision: -1, Digest: "sha256:another-command"}
	if _, err := w.Append(ctx, events.PermissionAnswered{SessionID: sid, AskID: "ask_zz", CallID: "zz", Reply: "once", Source: "user"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("recover-old-squat"), SessionID: sid, Prompt: "go on", Cwd: a.workspace, Recover: true}); err != nil {
		t.Fatalf("the recovery: %v", err)
	}
	r := a.record(t, sid)
	if r.started || r.granted || r.finished == "" || len(r.closed) != 1 || r.view.Pending || !r.view.Closed {
		t.Fatalf("%+v", r)
	}
	// A recovery sent again closes nothing twice.
	in := commands.Inbox{Store: a.store, Registry: a.registry}
	closed := r.closed[0].(events.PermissionClosed)
	if err := in.Close(ctx, commands.Meta{CommandID: commands.CloseAskID(sid, "ask_w1"), Actor: "host"}, closed); err != nil {
		t.Fatal(err)
	}
	if r := a.record(t, sid); len(r.closed) != 1 {
		t.Fatalf("closed twice: %+v", r.closed)
	}
}
