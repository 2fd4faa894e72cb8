package queries_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/events"
)

// A session's asks, in the order asked, each pending until its inbox records a reply; another
// session's asks and answers are not its own.
func TestComponentAsks(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(r.handlers, "ses_q", "asks", "")
	r.create(r.handlers, "ses_other", "other", "")
	ask := func(session, askID string) {
		b, _ := json.Marshal(events.PermissionAsked{SessionID: session, TurnID: "turn_1", CallID: "call_" + askID, AskID: askID,
			Tool: "write", Key: "edit", Mode: "standard"})
		if _, err := r.store.Append(ctx, commands.SessionStream(session), events.Any,
			events.Event{ID: uuid.NewString(), Type: events.TypePermissionAsked, Data: b}); err != nil {
			t.Fatal(err)
		}
	}
	ask("ses_q", "ask_1")
	ask("ses_q", "ask_2")
	ask("ses_other", "ask_3")
	res, err := r.handlers.AnswerPermission(ctx, &commands.AnswerPermission{Meta: commands.Meta{CommandID: "a1"},
		Answer: answers.Answer{SessionID: "ses_q", AskID: "ask_1", CallID: "call_ask_1", Reply: "always"}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	asks, err := r.q.Asks(ctx, "ses_q")
	if err != nil {
		t.Fatal(err)
	}
	if len(asks) != 2 || asks[0].AskID != "ask_1" || asks[0].Pending || asks[0].Reply != "always" ||
		asks[1].AskID != "ask_2" || !asks[1].Pending || asks[1].Reply != "" || asks[0].Position >= asks[1].Position {
		t.Fatalf("asks: %+v", asks)
	}
	if _, err := r.q.Asks(ctx, "ses_none"); err == nil {
		t.Fatal("asks of a session that does not exist")
	} else {
		code(t, err, "session_not_found")
	}
}
