package goal_test

import (
	"errors"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/events"
)

func apply(t *testing.T, s *goal.State, cmd any) {
	t.Helper()
	ps, err := goal.Decide(s, cmd, goal.Facts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
}

func code(t *testing.T, s *goal.State, cmd any) string {
	t.Helper()
	_, err := goal.Decide(s, cmd, goal.Facts{})
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("%T decided: %v", cmd, err)
	}
	return de.Code()
}

func ptr[T any](v T) *T { return &v }

// The revision rule: only the session's first Goal may be created without a revision; every
// other change names the revision it was decided on.
func TestRevisionRule(t *testing.T) {
	s := &goal.State{}
	apply(t, s, goal.Update{Objective: ptr("first")})
	if c := code(t, s, goal.Update{Objective: ptr("again")}); c != domain.CodeExpectedRevisionRequired {
		t.Fatalf("no revision: %s", c)
	}
	if c := code(t, s, goal.Update{ExpectedRevision: ptr(uint64(7)), Objective: ptr("x")}); c != domain.CodeStaleRevision {
		t.Fatalf("stale: %s", c)
	}
	apply(t, s, goal.Update{ExpectedRevision: ptr(uint64(1)), Status: events.GoalComplete})
	// A completed Goal is replaced by a new one, at the current revision.
	if c := code(t, s, goal.Update{Objective: ptr("second")}); c != domain.CodeExpectedRevisionRequired {
		t.Fatalf("replacing without a revision: %s", c)
	}
	apply(t, s, goal.Update{ExpectedRevision: ptr(uint64(2)), Objective: ptr("second")})
	if g := s.Goal(); g.GoalID != "goal-2" || g.Status != events.GoalActive || s.Revision() != 3 {
		t.Fatalf("second goal %+v at %d", g, s.Revision())
	}
	if c := code(t, s, goal.Update{ExpectedRevision: ptr(uint64(3)), Objective: ptr(" ")}); c != domain.CodeInvalidArgument {
		t.Fatalf("empty objective: %s", c)
	}
}

// The model pauses a Goal; only the user resumes it, and a resumed Goal belongs to no turn.
func TestPauseAndResume(t *testing.T) {
	s := &goal.State{}
	apply(t, s, goal.Update{TurnID: "turn_1", Objective: ptr("o")})
	apply(t, s, goal.Update{ExpectedRevision: ptr(uint64(1)), Status: events.GoalPaused})
	if c := code(t, s, goal.Update{ExpectedRevision: ptr(uint64(2)), Status: events.GoalActive}); c != goal.CodeGoalState {
		t.Fatalf("model resuming: %s", c)
	}
	if s.Continues("turn_1") {
		t.Fatal("a paused Goal continues")
	}
	apply(t, s, goal.Resume{})
	if g := s.Goal(); g.Status != events.GoalActive || g.OwnerTurnID != "" || !s.Continues("turn_any") {
		t.Fatalf("resumed %+v", g)
	}
	if c := code(t, s, goal.Resume{}); c != goal.CodeGoalState {
		t.Fatalf("resuming an active Goal: %s", c)
	}
}

// Observations: the owner continues; a repeated fingerprint counts up to no_progress, which
// releases the Goal; another fingerprint starts over; background work is waiting_background.
func TestObservations(t *testing.T) {
	s := &goal.State{}
	apply(t, s, goal.Update{TurnID: "turn_1", Objective: ptr("o")})
	if c := code(t, s, goal.Observe{TurnID: "turn_2", Fingerprint: "a"}); c != goal.CodeGoalState {
		t.Fatalf("another turn observes: %s", c)
	}
	observe := func(fp string, bg bool) events.GoalProgressObserved {
		t.Helper()
		ps, err := goal.Decide(s, goal.Observe{TurnID: "turn_1", Fingerprint: fp, Background: bg}, goal.Facts{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Evolve(ps[0]); err != nil {
			t.Fatal(err)
		}
		return ps[0].(events.GoalProgressObserved)
	}
	if o := observe("a", false); o.Repeats != 1 || o.Outcome != events.ProgressContinue {
		t.Fatalf("%+v", o)
	}
	if o := observe("b", false); o.Repeats != 1 {
		t.Fatalf("a new fingerprint: %+v", o)
	}
	if o := observe("b", true); o.Repeats != 2 || o.Outcome != events.ProgressWaitingBackground {
		t.Fatalf("background: %+v", o)
	}
	if o := observe("b", false); o.Repeats != 3 || o.Outcome != events.ProgressNoProgress {
		t.Fatalf("third: %+v", o)
	}
	if s.Goal().OwnerTurnID != "" || s.Revision() != 1 {
		t.Fatalf("after no_progress: owner %q revision %d", s.Goal().OwnerTurnID, s.Revision())
	}
}

// A snapshot restores the Goal, its revision, its id counter and the last observation.
func TestSnapshotRoundTrip(t *testing.T) {
	s := &goal.State{}
	apply(t, s, goal.Update{TurnID: "turn_1", Objective: ptr("o"), Criteria: &[]goal.CriterionInput{{Text: "c", NeedsEvidence: true}}})
	apply(t, s, goal.Observe{TurnID: "turn_1", Fingerprint: "f"})
	r := goal.Restore(s.Snapshot())
	fp, n := r.Progress()
	if r.Revision() != s.Revision() || r.Goal().GoalID != "goal-1" || r.Goal().Criteria[0].ID != "c1" || fp != "f" || n != 1 {
		t.Fatalf("restored %+v", r.View())
	}
	// The restored Goal is decided on as the original: its criterion still needs evidence.
	if c := code(t, &r, goal.Update{ExpectedRevision: ptr(uint64(1)), Status: events.GoalComplete}); c != goal.CodeGoalBlocked {
		t.Fatalf("completion without evidence: %s", c)
	}
}
