package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// An abort ends a turn waiting on its ask: the turn closes the ask in the session's inbox,
// GET .../asks shows it closed (neither pending nor answered), and a reply is 404
// ask_not_pending with nothing recorded (docs/server.md, "Permission replies").
func TestAPIReplyAfterAbort(t *testing.T) { dialects(t, testAPIReplyAfterAbort) }

func testAPIReplyAfterAbort(t *testing.T, postgres bool) {
	f := newFixture(t, options{postgres: postgres})
	f.writeScript("default", writeScript)
	a := f.start("cmd-abort-ask", "write a.txt")
	ask := f.pendingAsk(a.SessionID)
	if r := f.do("POST", "/api/sessions/"+a.SessionID+"/abort", ""); r.status != 202 {
		t.Fatalf("abort: %d %s", r.status, r.body)
	}
	if got := f.waitTurn(a.SessionID, a.TurnID); got != "interrupted" {
		t.Fatalf("turn after abort: %s", got)
	}
	for _, reply := range []string{`{"reply":"always"}`, `{"reply":"once","commandId":"late-1"}`, `{"reply":"once","commandId":"late-1"}`} {
		if r := f.do("POST", "/api/sessions/"+a.SessionID+"/asks/"+ask+"/reply", reply); r.status != 404 || r.code() != "ask_not_pending" {
			t.Fatalf("%s: %d %s", reply, r.status, r.body)
		}
	}
	r := f.do("GET", "/api/sessions/"+a.SessionID+"/asks", "")
	var out struct {
		Asks []struct {
			AskID        string `json:"askId"`
			Reply        string `json:"reply"`
			Pending      bool   `json:"pending"`
			Closed       bool   `json:"closed"`
			ClosedReason string `json:"closedReason"`
		} `json:"asks"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || len(out.Asks) != 1 {
		t.Fatalf("asks: %d %s", r.status, r.body)
	}
	if got := out.Asks[0]; got.AskID != ask || got.Pending || !got.Closed || got.Reply != "" || got.ClosedReason != events.AskClosedInterrupted {
		t.Fatalf("the ask reads %+v", got)
	}
	inbox, err := f.app.Queries.Events(context.Background(), commands.InboxStream(a.SessionID), 0, 0)
	if err != nil || len(inbox) != 1 || inbox[0].Type != events.TypePermissionClosed {
		t.Fatalf("the inbox: %+v %v", inbox, err)
	}
}
