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
		{"an unknown reply", &answers.State{}, answers.Answer{SessionID: "s", AskID: "a1", Reply: "yes"}, domain.CodeInvalidArgument, 0},
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
