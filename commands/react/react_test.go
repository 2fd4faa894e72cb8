package react_test

import (
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands/react"
	"github.com/zuno-run/zuno/domain/lease"
	"github.com/zuno-run/zuno/events"
)

// Each reaction is a pure function of its trigger: a table of triggers and the commands they
// call for (docs/turns.md, "Reactions").
func TestAnswerResumes(t *testing.T) {
	re := react.AnswerResumes()
	answer := events.PermissionAnswered{SessionID: "ses_1", AskID: "ask_c1", CallID: "c1", Reply: "once", Source: "user"}
	rec := events.Recorded{Event: events.Event{ID: "evt_a", Type: events.TypePermissionAnswered}}
	for _, tc := range []struct {
		name string
		p    events.Payload
		want []react.Command
	}{
		{"an answer resumes its session's turn, under an id derived from the reaction and the answer", answer,
			[]react.Command{{Kind: react.KindResume, ID: "resume-on-answer/evt_a", SessionID: "ses_1", Trigger: "evt_a"}}},
		{"a rejection resumes it too (the call is then blocked, and the turn goes on)",
			events.PermissionAnswered{SessionID: "ses_2", AskID: "ask_c2", Reply: "reject"},
			[]react.Command{{Kind: react.KindResume, ID: "resume-on-answer/evt_a", SessionID: "ses_2", Trigger: "evt_a"}}},
		{"any other event calls for nothing", events.TurnSuspended{SessionID: "ses_1", TurnID: "turn_1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := re.On(rec, tc.p)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("command %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
	if len(re.Types) != 1 || re.Types[0] != events.TypePermissionAnswered {
		t.Errorf("the reaction decodes %v; it reacts to answers only", re.Types)
	}
}

func TestExpired(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	held := lease.State{TurnID: "turn_1", Holder: "vm/42/ab", ExpiresAt: now.Add(-time.Second)}
	for _, tc := range []struct {
		name   string
		l      lease.State
		wantOK bool
	}{
		{"an expired lease of the open turn is settled", held, true},
		{"a live lease binds: nothing", lease.State{TurnID: "turn_1", Holder: "vm/42/ab", ExpiresAt: now.Add(time.Second)}, false},
		{"a lease given back (suspended, finished) is nothing to settle", lease.State{TurnID: "turn_1", Holder: "vm/42/ab", ExpiresAt: now.Add(-time.Second), Released: true}, false},
		{"no lease ever taken: nothing (an older build's turn, settled by the next run)", lease.State{}, false},
		{"a lease that expires exactly now has expired", lease.State{TurnID: "turn_1", Holder: "vm/42/ab", ExpiresAt: now}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := react.Expired("ses_1", tc.l, now)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.wantOK, c)
			}
			if ok && (c.Kind != react.KindSettle || c.SessionID != "ses_1" || c.TurnID != tc.l.TurnID) {
				t.Errorf("command %+v", c)
			}
		})
	}
	// One command per expired lease: the same lease gives the same id at any later sweep; a
	// later lease of the turn (renewed by a taker) another.
	a, _ := react.Expired("ses_1", held, now)
	b, _ := react.Expired("ses_1", held, now.Add(time.Hour))
	if a.ID != b.ID {
		t.Errorf("two sweeps of one expired lease issued %s and %s", a.ID, b.ID)
	}
	later := held
	later.Holder, later.ExpiresAt = "vm/43/cd", now.Add(-time.Millisecond)
	if c, _ := react.Expired("ses_1", later, now); c.ID == a.ID {
		t.Errorf("another lease of the turn has the same settle id %s", c.ID)
	}
}
