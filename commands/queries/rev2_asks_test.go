package queries_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// An ask whose call settled without a reply (a cancelled wait) is no longer pending: a late
// reply from any face is ask_not_pending (docs/acp.md, docs/server.md), not a dangling record.
func TestReviewSettledAskNotPending(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(r.handlers, "ses_s", "settled", "")
	app := func(typ string, p any) {
		b, _ := json.Marshal(p)
		if _, err := r.store.Append(ctx, commands.SessionStream("ses_s"), events.Any,
			events.Event{ID: uuid.NewString(), Type: typ, Data: b}); err != nil {
			t.Fatal(err)
		}
	}
	app(events.TypePermissionAsked, events.PermissionAsked{SessionID: "ses_s", TurnID: "turn_1", CallID: "call_1", AskID: "ask_call_1",
		Tool: "write", Key: "edit", Mode: "standard"})
	app(events.TypePermissionAsked, events.PermissionAsked{SessionID: "ses_s", TurnID: "turn_1", CallID: "call_2", AskID: "ask_call_2",
		Tool: "write", Key: "edit", Mode: "standard"})
	app(events.TypeToolSettled, events.ToolSettled{SessionID: "ses_s", TurnID: "turn_1", CallID: "call_1", Tool: "write",
		Outcome: "cancelled", Output: "cancelled"})
	asks, err := r.q.Asks(ctx, "ses_s")
	if err != nil {
		t.Fatal(err)
	}
	if len(asks) != 2 || asks[0].Pending || !asks[1].Pending {
		t.Fatalf("asks: %+v", asks)
	}
}
