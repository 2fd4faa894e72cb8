package turn_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// inboxOf is the session's inbox stream, decoded.
func (s *suspender) inboxOf(t *testing.T) []events.Payload {
	t.Helper()
	var out []events.Payload
	if _, err := commands.Load(context.Background(), s.store, s.registry, commands.InboxStream(s.session), 0,
		func(_ events.Recorded, p events.Payload) error { out = append(out, p); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func (s *suspender) reply(callID, reply string) error {
	res, err := s.handlers.AnswerPermission(context.Background(), &commands.AnswerPermission{
		Meta:   commands.Meta{CommandID: "late/" + callID + "/" + reply, Actor: "user"},
		Answer: answers.Answer{SessionID: s.session, AskID: "ask_" + callID, CallID: callID, Reply: reply, Source: "user"}})
	if err == nil {
		err = res.Err()
	}
	return err
}

// A suspended turn's ask stays open (it is answered later and resumed); cancelling the turn
// (--recover) closes it, recorded as recovered, and a later reply is ask_not_pending.
func TestRecoveryClosesTheAskOfACancelledCall(t *testing.T) {
	ctx := context.Background()
	s := newSuspender(t, tools.Exclusive)
	out, err := s.driver.Run(ctx, s.request(t, turnMeta(), oneLook))
	if err != nil || len(out.Awaiting) != 1 {
		t.Fatal(out, err)
	}
	if in := s.inboxOf(t); len(in) != 0 {
		t.Fatalf("the suspension closed its ask: %v", in)
	}
	req := s.request(t, commands.Meta{CommandID: "run-2", Actor: "user"}, done)
	req.ForceRecover = true
	if _, err := s.driver.Run(ctx, req); err != nil {
		t.Fatal(err)
	}
	in := s.inboxOf(t)
	want := events.PermissionClosed{SessionID: s.session, TurnID: out.TurnID, AskID: "ask_c1", CallID: "c1", Reason: events.AskClosedRecovered}
	if len(in) != 1 || in[0] != events.Payload(want) {
		t.Fatalf("inbox %+v, want %+v", in, want)
	}
	for _, reply := range []string{"once", "always", "reject"} {
		if err := s.reply("c1", reply); domain.CodeOf(err) != answers.CodeAskNotPending {
			t.Fatalf("%s after the close: %v", reply, err)
		}
	}
	if len(s.inboxOf(t)) != 1 || s.probe.calls.Load() != 0 {
		t.Fatal("a late reply was recorded or the call ran")
	}
}

// A run that closed its ask and stopped before it settled the call leaves its turn waiting on
// an ask nobody can answer: the next run recovers it without --recover, and the close is not
// recorded twice.
func TestATurnWaitingOnAClosedAskIsRecovered(t *testing.T) {
	ctx := context.Background()
	s := newSuspender(t, tools.Exclusive)
	out, err := s.driver.Run(ctx, s.request(t, turnMeta(), oneLook))
	if err != nil || len(out.Awaiting) != 1 {
		t.Fatal(out, err)
	}
	inbox := commands.Inbox{Store: s.store, Registry: s.registry}
	closed := events.PermissionClosed{SessionID: s.session, TurnID: out.TurnID, AskID: "ask_c1", CallID: "c1", Reason: events.AskClosedInterrupted}
	if err := inbox.Close(ctx, commands.Meta{CommandID: commands.CloseAskID(s.session, "ask_c1"), Actor: "host"}, closed); err != nil {
		t.Fatal(err)
	}
	// Without the close the same run is refused (turn_suspended); with it, the turn is settled.
	next, err := s.driver.Run(ctx, s.request(t, commands.Meta{CommandID: "run-2", Actor: "user"}, done))
	if err != nil || next.Reason != events.FinishCompleted {
		t.Fatalf("the next run: %+v %v", next, err)
	}
	var settled *events.ToolSettled
	for _, p := range s.events(t) {
		if e, ok := p.(events.ToolSettled); ok && e.CallID == "c1" {
			settled = &e
		}
	}
	if settled == nil || settled.Outcome != string(tools.OutcomeCancelled) || !settled.Recovered {
		t.Fatalf("the asked call settled %+v", settled)
	}
	if in := s.inboxOf(t); len(in) != 1 || in[0] != events.Payload(closed) {
		t.Fatalf("inbox %+v", in)
	}
	if s.probe.calls.Load() != 0 {
		t.Fatal("the closed ask's call ran")
	}
}

// An ask answered before the close wins: the close records nothing, and the answer stays.
func TestACloseAfterTheReplyRecordsNothing(t *testing.T) {
	ctx := context.Background()
	s := newSuspender(t, tools.Exclusive)
	out, err := s.driver.Run(ctx, s.request(t, turnMeta(), oneLook))
	if err != nil || len(out.Awaiting) != 1 {
		t.Fatal(out, err)
	}
	s.answer(t, "c1", "always")
	req := s.request(t, commands.Meta{CommandID: "run-2", Actor: "user"}, done)
	req.ForceRecover = true
	if _, err := s.driver.Run(ctx, req); err != nil {
		t.Fatal(err)
	}
	in := s.inboxOf(t)
	if len(in) != 1 {
		t.Fatalf("inbox %+v: want the answer alone", in)
	}
	if _, ok := in[0].(events.PermissionAnswered); !ok {
		t.Fatalf("inbox %+v", in)
	}
	for _, p := range s.events(t) {
		if _, ok := p.(events.PermissionGranted); ok {
			t.Fatal("a cancelled call's always answer installed a grant")
		}
	}
}

// dyingInbox is an inbox whose wait fails as a process that dies while it waits: the turn
// records nothing more and is left open, waiting on its ask.
type dyingInbox struct{ commands.Inbox }

func (dyingInbox) Wait(context.Context, string, string) (events.PermissionAnswered, error) {
	return events.PermissionAnswered{}, errors.New("the process died")
}

// The reaction to an expired lease records a turn left waiting suspended (it may still be
// answered), unless its ask was closed: then nobody can answer it, and the turn is recovered.
func TestSettleRecoversATurnWaitingOnAClosedAsk(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			ctx := context.Background()
			s := newSuspender(t, tools.Exclusive)
			inbox := commands.Inbox{Store: s.store, Registry: s.registry}
			req := s.request(t, turnMeta(), oneLook)
			req.Suspend, req.Inbox = false, dyingInbox{inbox}
			if _, err := s.driver.Run(ctx, req); err == nil {
				t.Fatal("the dying wait ended the run without an error")
			}
			open, err := s.driver.Open(ctx, s.session)
			if err != nil || open.Suspended || len(open.Awaiting) != 1 {
				t.Fatalf("left waiting: %+v %v", open, err)
			}
			if closed {
				c := events.PermissionClosed{SessionID: s.session, TurnID: open.Started.TurnID, AskID: "ask_c1", CallID: "c1", Reason: events.AskClosedInterrupted}
				if err := inbox.Close(ctx, commands.Meta{CommandID: commands.CloseAskID(s.session, "ask_c1"), Actor: "host"}, c); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.driver.Settle(ctx, commands.Meta{CommandID: "settle/1", Actor: "reaction"}, s.session, open.Started.TurnID, inbox)
			if err != nil {
				t.Fatal(err)
			}
			want := turn.ReasonSuspended
			if closed {
				want = events.FinishInterrupted
			}
			if got.Reason != want {
				t.Fatalf("settled %q, want %q", got.Reason, want)
			}
			if n := len(s.inboxOf(t)); n != map[bool]int{false: 0, true: 1}[closed] {
				t.Fatalf("%d inbox events", n)
			}
			if s.probe.calls.Load() != 0 {
				t.Fatal("the asked call ran")
			}
		})
	}
}
