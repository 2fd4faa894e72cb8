// Package goal is the Goal of a root session (docs/goals.md): its objective, its status
// (active, paused, complete), its revision, the turn that owns it, and the acceptance
// criteria that may need evidence. It lives in the root's work stream beside the Plan and the
// Todo items (domain/work folds it), so the completion barrier decides on the goal, the plan
// and the todos at one revision of one stream; the jobs, which live in the session's job
// ledger, are handed to Decide as facts read just before (the handler records the ledger
// revision it read on the completion).
//
// Like every aggregate here it is pure: no I/O, no clock; ids come from a counter the fold
// advances.
package goal

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Stable error codes of the Goal's refusals.
const (
	// CodeNoGoal: the command needs a Goal and the session has none (or only a completed one).
	CodeNoGoal = "no_goal"
	// CodeGoalState: the Goal's status does not admit the command (a paused Goal completed,
	// an active one resumed, a resume while an input request still waits).
	CodeGoalState = "goal_state"
	// CodeGoalBlocked: the completion barrier refused; the error's message lists every blocker.
	CodeGoalBlocked = "goal_blocked"
	// CodeWaitMismatch: an answer names a request the Goal does not wait on.
	CodeWaitMismatch = "wait_mismatch"
)

// Limits keep the Goal small enough to be re-injected into every prompt.
const (
	MaxObjectiveRunes = 2000
	MaxCriteria       = 16
	MaxCriterionRunes = 500
	MaxQuestionRunes  = 2000
	MaxAnswerRunes    = 8000
)

// GetTool is the read tool the refusals point at.
const GetTool = "goal_get"

// State is the Goal part of a root session's work state. The zero value has no Goal.
type State struct {
	revision uint64
	goal     *events.Goal
	// seq numbers the goals of the session (goal-1, goal-2, ...).
	seq int
	// fingerprint and repeats are the auto-continuation's last observation of the work
	// state and how many consecutive observations had it.
	fingerprint string
	repeats     int
}

// Goal returns the current Goal (nil when none was ever created); read it, never change it.
func (s *State) Goal() *events.Goal { return s.goal }

// Revision is the revision goal_get reports and goal_update's expected_revision names.
func (s *State) Revision() uint64 { return s.revision }

// Progress is the last progress observation: its fingerprint and how many consecutive
// observations had it.
func (s *State) Progress() (string, int) { return s.fingerprint, s.repeats }

// Handles reports whether p is a Goal payload, which Evolve applies.
func Handles(p events.Payload) bool {
	switch p.(type) {
	case events.GoalCreated, events.GoalUpdated, events.GoalInputRequested, events.GoalInputAnswered,
		events.GoalResumed, events.GoalCompleted, events.GoalProgressObserved:
		return true
	}
	return false
}

// Evolve applies one Goal event.
func (s *State) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.GoalCreated:
		s.set(e.Revision, e.Goal)
		s.seq++
		s.fingerprint, s.repeats = "", 0
	case events.GoalUpdated:
		s.set(e.Revision, e.Goal)
	case events.GoalInputRequested:
		s.set(e.Revision, e.Goal)
	case events.GoalInputAnswered:
		s.set(e.Revision, e.Goal)
		s.fingerprint, s.repeats = "", 0 // a user's answer is progress of its own
	case events.GoalResumed:
		s.set(e.Revision, e.Goal)
		s.fingerprint, s.repeats = "", 0
	case events.GoalCompleted:
		s.set(e.Revision, e.Goal)
	case events.GoalProgressObserved:
		s.fingerprint, s.repeats = e.Fingerprint, e.Repeats
		if s.goal != nil && e.GoalID == s.goal.GoalID {
			g := clone(*s.goal)
			g.OwnerTurnID = e.TurnID
			if e.Outcome == events.ProgressNoProgress {
				g.OwnerTurnID = "" // its cycle ended; only a new turn or a resume continues it
			}
			s.goal = &g
		}
	default:
		return domain.UnexpectedEvent("goal", p)
	}
	return nil
}

func (s *State) set(rev uint64, g events.Goal) {
	g = clone(g)
	s.revision, s.goal = rev, &g
}

func clone(g events.Goal) events.Goal {
	g.Criteria = slices.Clone(g.Criteria)
	if g.Criteria == nil {
		g.Criteria = []events.GoalCriterion{}
	}
	if g.Waiting != nil {
		w := *g.Waiting
		g.Waiting = &w
	}
	return g
}

// Snapshot is the state for a work snapshot; Restore is its inverse.
func (s *State) Snapshot() *events.GoalSnapshot {
	if s.goal == nil && s.seq == 0 {
		return nil
	}
	sn := &events.GoalSnapshot{Revision: s.revision, Fingerprint: s.fingerprint, Repeats: s.repeats, GoalSeq: s.seq}
	if s.goal != nil {
		g := clone(*s.goal)
		sn.Goal = &g
	}
	return sn
}

// Restore is the state a snapshot records.
func Restore(sn *events.GoalSnapshot) State {
	if sn == nil {
		return State{}
	}
	s := State{revision: sn.Revision, fingerprint: sn.Fingerprint, repeats: sn.Repeats, seq: sn.GoalSeq}
	if sn.Goal != nil {
		g := clone(*sn.Goal)
		s.goal = &g
	}
	return s
}

// View is what goal_get, zuno goal show and GET /api/session/goal return.
type View struct {
	GoalID      string          `json:"goal_id"`
	Revision    uint64          `json:"revision"`
	Objective   string          `json:"objective"`
	Status      string          `json:"status"`
	OwnerTurnID string          `json:"owner_turn_id"`
	Criteria    []CriterionView `json:"criteria"`
	Waiting     *WaitView       `json:"waiting"`
}

// CriterionView is one criterion of a View.
type CriterionView struct {
	ID            string `json:"id"`
	Text          string `json:"text"`
	NeedsEvidence bool   `json:"needs_evidence"`
	Evidence      string `json:"evidence"`
}

// WaitView is the open input request of a paused Goal.
type WaitView struct {
	RequestID        string `json:"request_id"`
	Question         string `json:"question"`
	ObservedRevision uint64 `json:"observed_revision"`
}

// View returns the Goal, or nil (JSON null) when the session never had one. A completed Goal
// is still shown: it is the record of what was finished.
func (s *State) View() *View {
	g := s.goal
	if g == nil {
		return nil
	}
	v := &View{GoalID: g.GoalID, Revision: s.revision, Objective: g.Objective, Status: g.Status,
		OwnerTurnID: g.OwnerTurnID, Criteria: make([]CriterionView, len(g.Criteria))}
	for i, c := range g.Criteria {
		v.Criteria[i] = CriterionView{ID: c.ID, Text: c.Text, NeedsEvidence: c.NeedsEvidence, Evidence: c.Evidence}
	}
	if w := g.Waiting; w != nil {
		v.Waiting = &WaitView{RequestID: w.RequestID, Question: w.Question, ObservedRevision: w.ObservedRevision}
	}
	return v
}

// checkText validates free text that may span lines (an objective, a question, an answer).
func checkText(field, s string, maxRunes int) (string, *domain.Error) {
	if !utf8.ValidString(s) {
		return "", domain.Invalid(field, "is not valid UTF-8", "send it as UTF-8 text")
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", domain.Invalid(field, "is empty", "give a non-empty text")
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return "", domain.Invalid(field, fmt.Sprintf("has %d characters, more than the limit of %d", n, maxRunes),
			fmt.Sprintf("shorten it to at most %d characters", maxRunes))
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) >= 0 {
		return "", domain.Invalid(field, "contains a control character", "send plain text; line breaks and tabs are allowed")
	}
	return s, nil
}
