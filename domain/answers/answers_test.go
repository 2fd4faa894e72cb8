package answers_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/events"
)

func TestDecide(t *testing.T) {
	answered := &answers.State{}
	if err := answered.Evolve(events.PermissionAnswered{SessionID: "s", AskID: "a1", Reply: "once"}); err != nil {
		t.Fatal(err)
	}
	closed := &answers.State{}
	if err := closed.Evolve(events.PermissionClosed{SessionID: "s", AskID: "a1", Reason: events.AskClosedInterrupted}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		state *answers.State
		in    answers.Answer
		code  string // "" when accepted
		n     int    // events recorded
	}{
		{"first answer recorded", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "always"}, "", 1},
		{"reject is an answer", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "reject"}, "", 1},
		{"the same answer again records nothing", answered, answers.Answer{SessionID: "s", AskID: "a1", Reply: "once"}, "", 0},
		{"a recorded reply is final", answered, answers.Answer{SessionID: "s", AskID: "a1", Reply: "reject"}, answers.CodeAlreadyAnswered, 0},
		{"a reply after the close is ask_not_pending", closed, answers.Answer{SessionID: "s", AskID: "a1", Reply: "once"}, answers.CodeAskNotPending, 0},
		{"always after the close is ask_not_pending", closed, answers.Answer{SessionID: "s", AskID: "a1", Reply: "always"}, answers.CodeAskNotPending, 0},
		{"reject after the close is ask_not_pending", closed, answers.Answer{SessionID: "s", AskID: "a1", Reply: "reject"}, answers.CodeAskNotPending, 0},
		{"another ask of a session with a closed one is answered", closed, answers.Answer{SessionID: "s", AskID: "a2", Reply: "once"}, "", 1},
		{"an unknown reply", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "yes"}, domain.CodeInvalidArgument, 0},
		// Review: replies spelled otherwise are not replies (the faces pass the text through).
		{"ONCE is not once", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "ONCE"}, domain.CodeInvalidArgument, 0},
		{"Always is not always", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "Always"}, domain.CodeInvalidArgument, 0},
		{"once with a space", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: " once"}, domain.CodeInvalidArgument, 0},
		{"once with a line feed", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "once\n"}, domain.CodeInvalidArgument, 0},
		{"the short o", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "o"}, domain.CodeInvalidArgument, 0},
		{"ALWAYS after the close is still invalid, not a close's answer", closed, answers.Answer{SessionID: "s", AskID: "a1", Reply: "ALWAYS"}, domain.CodeInvalidArgument, 0},
		{"no ask id", &answers.State{}, answers.Answer{SessionID: "s", Reply: "once"}, domain.CodeInvalidArgument, 0},
		{"no session", &answers.State{}, answers.Answer{AskID: "a", Reply: "once"}, domain.CodeInvalidArgument, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := answers.Decide(tc.state, tc.in)
			if got := domain.CodeOf(err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			if len(evs) != tc.n {
				t.Fatalf("%d events, want %d", len(evs), tc.n)
			}
			if tc.n == 1 {
				e := evs[0].(events.PermissionAnswered)
				if e.Reply != tc.in.Reply || e.Source != "user" || e.AskID != tc.in.AskID {
					t.Fatalf("recorded %+v", e)
				}
			}
		})
	}
}

func TestEvolveRefusesOtherEvents(t *testing.T) {
	var s answers.State
	if err := s.Evolve(events.SessionTitled{}); domain.CodeOf(err) != domain.CodeUnexpectedEvent {
		t.Fatalf("got %v", err)
	}
}

// Close decides at the inbox's revision: the first of a reply and a close is the one recorded.
func TestClose(t *testing.T) {
	answered := &answers.State{}
	if err := answered.Evolve(events.PermissionAnswered{SessionID: "s", AskID: "a1", Reply: "always"}); err != nil {
		t.Fatal(err)
	}
	closed := &answers.State{}
	if err := closed.Evolve(events.PermissionClosed{SessionID: "s", AskID: "a1", Reason: events.AskClosedRecovered}); err != nil {
		t.Fatal(err)
	}
	c := events.PermissionClosed{SessionID: "s", TurnID: "t", AskID: "a1", CallID: "c1", Reason: events.AskClosedInterrupted}
	for _, tc := range []struct {
		name  string
		state *answers.State
		in    events.PermissionClosed
		code  string
		n     int
	}{
		{"an ask nobody answered is closed", &answers.State{}, c, "", 1},
		{"an answered ask is not closed: the reply came first", answered, c, "", 0},
		{"a closed ask is not closed again (a recovery after a stopped close)", closed, c, "", 0},
		{"another ask of the session is closed", answered, events.PermissionClosed{SessionID: "s", AskID: "a2", Reason: "recovered"}, "", 1},
		{"no session", &answers.State{}, events.PermissionClosed{AskID: "a1"}, domain.CodeInvalidArgument, 0},
		{"no ask", &answers.State{}, events.PermissionClosed{SessionID: "s"}, domain.CodeInvalidArgument, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := answers.Close(tc.state, tc.in)
			if got := domain.CodeOf(err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			if len(evs) != tc.n {
				t.Fatalf("%d events, want %d", len(evs), tc.n)
			}
			if tc.n == 1 && evs[0] != events.Payload(tc.in) {
				t.Fatalf("recorded %+v", evs[0])
			}
		})
	}
	if got, ok := closed.Closed("a1"); !ok || got.Reason != events.AskClosedRecovered {
		t.Fatalf("Closed: %+v %v", got, ok)
	}
	if _, ok := answered.Closed("a1"); ok {
		t.Fatal("an answered ask reads closed")
	}
}
