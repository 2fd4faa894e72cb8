package app

import (
	"errors"
	"testing"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
)

// The hand-off between a deliverer that failed on the session's running turn and that turn's
// end (docs/delegation.md, "Delivery"): whichever of the two decides first under the lock, the
// input is delivered after the turn: by the deliverer looking again, or by the wake of the
// turn's end. The interleavings are forced here one decision at a time; each row ends in a
// state where someone delivers. The first row lost the input before afterTurn asked an
// in-flight deliverer to look again (TestAPISteer's "when the turn ends first" failed now
// and then: a steer admitted while a deliverer from the previous turn's end was still
// retrying, the turn aborted during its retries).
func TestWakeHandOffAtTurnEnd(t *testing.T) {
	busy := domain.NewError(turn.CodeSessionBusy, "session busy", "wait")
	for _, tc := range []struct {
		name string
		// missed: what the turn's run had marked before it ended (a steer's wake found it
		// running, or the inbox watch saw the admission); passFirst: the deliverer's failed
		// pass decides before the turn's end.
		missed, passFirst bool
		err               error
	}{
		{name: "the turn ends, then the failed pass decides", missed: true, err: busy},
		{name: "the turn ends unmarked, then the failed pass decides", missed: false, err: busy},
		{name: "the failed pass decides, then the turn ends", missed: false, passFirst: true, err: busy},
		{name: "the pass fails on the store, then the turn ends", missed: true, passFirst: true, err: errors.New("i/o timeout")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &Jobs{comps: map[string]composition{}, missed: map[string]bool{}, delivering: map[string]bool{}}
			const s = "ses_1"
			j.comps[s] = composition{} // the session's turn runs here
			j.delivering[s] = false    // a deliverer of s is in flight, failing on that turn
			j.missed[s] = tc.missed    // what the turn's run marked
			var again bool
			turnEnds := func() (woken bool) { // composed's done, without its inbox watch
				j.mu.Lock()
				delete(j.comps, s)
				_, delivering := j.delivering[s]
				missed := j.missed[s]
				j.mu.Unlock()
				// afterTurn wakes (starts a deliverer) only when missed and none is in flight:
				// its wake is not run here, what it would do is asserted.
				woken = missed && !delivering
				if !woken {
					j.afterTurn(s)
				}
				return woken
			}
			var woken bool
			if tc.passFirst {
				again = j.passEnded(s, tc.err)
				woken = turnEnds()
			} else {
				woken = turnEnds()
				again = j.passEnded(s, tc.err)
			}
			if !again && !woken {
				t.Fatalf("nobody delivers after the turn: again %v, woken %v, state %+v %+v", again, woken, j.delivering, j.missed)
			}
			if again && woken {
				t.Fatalf("two deliverers: the looking-again one and the woken one")
			}
		})
	}
}
