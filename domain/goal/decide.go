package goal

import (
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Update is goal_update: create a Goal (when there is none, or the last one is complete),
// or change the current one at ExpectedRevision: its objective, its criteria (replaced
// whole), its status. Status "complete" goes through the completion barrier.
type Update struct {
	SessionID string `json:"-"`
	// TurnID is the turn whose call sends the update (it becomes the Goal's owner); empty
	// from the CLI.
	TurnID           string            `json:"-"`
	ExpectedRevision *uint64           `json:"expected_revision,omitempty"`
	Objective        *string           `json:"objective,omitempty"`
	Criteria         *[]CriterionInput `json:"criteria,omitempty"`
	Status           string            `json:"status,omitempty"`
	// Evidence names, for a completion, the receipt id ("rcp_…") that meets each criterion
	// needing evidence, by criterion id.
	Evidence map[string]string `json:"evidence,omitempty"`
}

// CriterionInput is one criterion as goal_update sends it.
type CriterionInput struct {
	ID            string `json:"id"`
	Text          string `json:"text"`
	NeedsEvidence bool   `json:"needs_evidence,omitempty"`
}

// RequestInput is goal_request_input: pause the Goal observed at ExpectedRevision and wait
// for an answer to RequestID (host-derived from the call).
type RequestInput struct {
	SessionID        string `json:"-"`
	TurnID           string `json:"-"`
	RequestID        string `json:"-"`
	ExpectedRevision uint64 `json:"expected_revision"`
	Question         string `json:"question"`
}

// Answer is a real answer to the input request RequestID.
type Answer struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Answer    string `json:"answer"`
}

// Resume is /goal resume: a paused Goal whose input request (if any) was answered is active
// again. ExpectedRevision is optional (a user acts on what they see).
type Resume struct {
	SessionID        string  `json:"sessionId"`
	ExpectedRevision *uint64 `json:"expectedRevision,omitempty"`
}

// Observe is one observation of the auto-continuation driver (docs/goals.md): the work
// state's fingerprint after a final answer of TurnID, and whether what remains is only
// background work that will wake the session.
type Observe struct {
	SessionID   string
	TurnID      string
	Fingerprint string
	Background  bool
}

// NoProgressRepeats is how many consecutive identical observations end the continuation
// with no_progress (seeds: three).
const NoProgressRepeats = 3

// Decide returns the events cmd produces against s, or a *domain.Error; f is read only by a
// completion. It never changes s.
func Decide(s *State, cmd any, f Facts) ([]events.Payload, error) {
	if s == nil {
		s = &State{}
	}
	switch c := cmd.(type) {
	case Update:
		return s.update(c, f)
	case RequestInput:
		return s.requestInput(c)
	case Answer:
		return s.answer(c)
	case Resume:
		return s.resume(c)
	case Observe:
		return s.observe(c)
	}
	return nil, domain.Invalid("command", fmt.Sprintf("%T is not a goal command", cmd), "send a goal command")
}

func (s *State) open() bool { return s.goal != nil && s.goal.Status != events.GoalComplete }

func noGoal() *domain.Error {
	return domain.NewError(CodeNoGoal, "this session has no open Goal",
		"create one with goal_update (objective and criteria), or zuno goal show to see the last one")
}

func stateError(msg, fix string) *domain.Error { return domain.NewError(CodeGoalState, msg, fix) }

// checkRevision applies the revision rule: every change of an existing Goal names the
// revision it was decided on; only the first Goal of a session may leave it out.
func (s *State) checkRevision(expected *uint64) *domain.Error {
	if expected == nil {
		if s.goal == nil {
			return nil
		}
		e := domain.NewError(domain.CodeExpectedRevisionRequired,
			fmt.Sprintf("the Goal is at revision %d and this change names none", s.revision),
			fmt.Sprintf("call %s and pass its revision as expected_revision", GetTool))
		e.Field, e.Current = "expected_revision", s.revision
		return e
	}
	if *expected != s.revision {
		return domain.StaleRevision("Goal", *expected, s.revision, GetTool)
	}
	return nil
}

func (s *State) update(c Update, f Facts) ([]events.Payload, error) {
	if err := s.checkRevision(c.ExpectedRevision); err != nil {
		return nil, err
	}
	if !s.open() {
		return s.create(c)
	}
	g := clone(*s.goal)
	if c.Objective != nil {
		obj, err := checkText("objective", *c.Objective, MaxObjectiveRunes)
		if err != nil {
			return nil, err
		}
		g.Objective = obj
	}
	if c.Criteria != nil {
		cs, err := criteria(*c.Criteria)
		if err != nil {
			return nil, err
		}
		g.Criteria = cs
	}
	if c.TurnID != "" {
		g.OwnerTurnID = c.TurnID
	}
	rev := s.revision + 1
	switch c.Status {
	case "", g.Status:
	case events.GoalPaused:
		g.Status = events.GoalPaused
	case events.GoalActive:
		return nil, stateError("the Goal is paused; a paused Goal is resumed by the user",
			"ask the user to resume it (/goal resume or zuno goal resume), or leave status out")
	case events.GoalComplete:
		return s.complete(g, rev, c, f)
	default:
		e := domain.Invalid("status", fmt.Sprintf("%q is not a Goal status", c.Status), "use active, paused or complete")
		e.Valid = []string{events.GoalActive, events.GoalPaused, events.GoalComplete}
		return nil, e
	}
	return []events.Payload{events.GoalUpdated{SessionID: c.SessionID, Revision: rev, Goal: g}}, nil
}

func (s *State) create(c Update) ([]events.Payload, error) {
	if c.Objective == nil {
		return nil, domain.Invalid("objective", "is required to create a Goal", "send the objective (and the criteria) of the new Goal")
	}
	obj, err := checkText("objective", *c.Objective, MaxObjectiveRunes)
	if err != nil {
		return nil, err
	}
	var cs []events.GoalCriterion
	if c.Criteria != nil {
		if cs, err = criteria(*c.Criteria); err != nil {
			return nil, err
		}
	}
	switch c.Status {
	case "", events.GoalActive:
	default:
		return nil, stateError(fmt.Sprintf("a new Goal starts active, not %s", c.Status),
			"create it first, then change its status at the revision the creation returns")
	}
	g := clone(events.Goal{GoalID: fmt.Sprintf("goal-%d", s.seq+1), Objective: obj, Status: events.GoalActive,
		Criteria: cs, OwnerTurnID: c.TurnID})
	return []events.Payload{events.GoalCreated{SessionID: c.SessionID, Revision: s.revision + 1, Goal: g}}, nil
}

func criteria(in []CriterionInput) ([]events.GoalCriterion, *domain.Error) {
	if len(in) > MaxCriteria {
		return nil, domain.Invalid("criteria", fmt.Sprintf("has %d criteria, more than the limit of %d", len(in), MaxCriteria),
			"keep the acceptance criteria few and checkable")
	}
	out := make([]events.GoalCriterion, 0, len(in))
	seen := map[string]bool{}
	for i, c := range in {
		field := fmt.Sprintf("criteria[%d]", i)
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("c%d", i+1)
		}
		if err := domain.CheckID(field+".id", id); err != nil {
			return nil, err
		}
		if seen[id] {
			e := domain.Invalid(field+".id", fmt.Sprintf("criterion %s is named twice", id), "give each criterion its own id")
			e.ID = id
			return nil, e
		}
		seen[id] = true
		text, err := checkText(field+".text", c.Text, MaxCriterionRunes)
		if err != nil {
			return nil, err
		}
		out = append(out, events.GoalCriterion{ID: id, Text: text, NeedsEvidence: c.NeedsEvidence})
	}
	return out, nil
}

// complete is the completion barrier (seeds 002 §7.4): the Goal is active, nothing of f
// blocks, and every criterion needing evidence names an authoritative passing receipt.
func (s *State) complete(g events.Goal, rev uint64, c Update, f Facts) ([]events.Payload, error) {
	if s.goal.Status != events.GoalActive {
		return nil, stateError(fmt.Sprintf("the Goal is %s; only an active Goal is completed", s.goal.Status),
			"the user resumes it first (/goal resume or zuno goal resume)")
	}
	var blockers []Blocker
	blockers = append(blockers, Blockers(f)...)
	for i := range g.Criteria {
		cr := &g.Criteria[i]
		if !cr.NeedsEvidence {
			continue
		}
		if b := f.evidence(cr.ID, c.Evidence[cr.ID]); b != nil {
			blockers = append(blockers, *b)
			continue
		}
		cr.Evidence = c.Evidence[cr.ID]
	}
	for id := range c.Evidence {
		if !hasCriterionIn(g.Criteria, id) {
			e := domain.Invalid("evidence", fmt.Sprintf("criterion %s is not a criterion of the Goal", id),
				"name evidence by the ids goal_get lists")
			e.ID = id
			return nil, e
		}
	}
	if len(blockers) > 0 {
		return nil, blocked(blockers)
	}
	g.Status, g.Waiting = events.GoalComplete, nil
	return []events.Payload{events.GoalCompleted{SessionID: c.SessionID, Revision: rev, JobsRevision: f.JobsRevision, Goal: g}}, nil
}

func hasCriterionIn(cs []events.GoalCriterion, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}

func blocked(bs []Blocker) *domain.Error {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.String()
	}
	e := domain.NewError(CodeGoalBlocked, fmt.Sprintf("the Goal cannot complete: %d blocker(s): %s", len(bs), strings.Join(parts, "; ")),
		"finish or cancel the open plan steps and todos, wait for the jobs and consume their reports, reconcile uncertain "+
			"jobs with job_reconcile, and cite an authoritative passing [verification rcp_…] for each criterion that needs evidence")
	e.Valid = parts
	return e
}

func (s *State) requestInput(c RequestInput) ([]events.Payload, error) {
	if !s.open() {
		return nil, noGoal()
	}
	if c.ExpectedRevision != s.revision {
		return nil, domain.StaleRevision("Goal", c.ExpectedRevision, s.revision, GetTool)
	}
	if s.goal.Status != events.GoalActive {
		return nil, stateError(fmt.Sprintf("the Goal is %s; only an active Goal asks for input", s.goal.Status),
			"wait for the answer to the open request, or report what blocks in the final answer")
	}
	q, err := checkText("question", c.Question, MaxQuestionRunes)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckID("request_id", c.RequestID); err != nil {
		return nil, err
	}
	g := clone(*s.goal)
	g.Status = events.GoalPaused
	g.Waiting = &events.GoalInputRequest{RequestID: c.RequestID, Question: q, ObservedRevision: c.ExpectedRevision, TurnID: c.TurnID}
	return []events.Payload{events.GoalInputRequested{SessionID: c.SessionID, Revision: s.revision + 1, Goal: g}}, nil
}

// Satisfies reports whether an answer to requestID satisfies the Goal's wait: only an answer
// to the exact open request does (a skip, a deferral or another request's answer never).
func (s *State) Satisfies(requestID string) bool {
	return s.goal != nil && s.goal.Waiting != nil && requestID != "" && s.goal.Waiting.RequestID == requestID
}

func (s *State) answer(c Answer) ([]events.Payload, error) {
	if !s.Satisfies(c.RequestID) {
		open := "no input request is open"
		if s.goal != nil && s.goal.Waiting != nil {
			open = "the open request is " + s.goal.Waiting.RequestID
		}
		e := domain.NewError(CodeWaitMismatch, fmt.Sprintf("the Goal does not wait on request %q: %s", c.RequestID, open),
			"answer the request zuno goal show names")
		e.ID = c.RequestID
		return nil, e
	}
	a, err := checkText("answer", c.Answer, MaxAnswerRunes)
	if err != nil {
		return nil, err
	}
	g := clone(*s.goal)
	g.Status, g.Waiting, g.OwnerTurnID = events.GoalActive, nil, ""
	return []events.Payload{events.GoalInputAnswered{SessionID: c.SessionID, Revision: s.revision + 1,
		RequestID: c.RequestID, Answer: a, Goal: g}}, nil
}

func (s *State) resume(c Resume) ([]events.Payload, error) {
	if !s.open() {
		return nil, noGoal()
	}
	if c.ExpectedRevision != nil && *c.ExpectedRevision != s.revision {
		return nil, domain.StaleRevision("Goal", *c.ExpectedRevision, s.revision, "zuno goal show")
	}
	switch {
	case s.goal.Waiting != nil:
		e := stateError(fmt.Sprintf("the Goal waits for an answer to %s; resuming does not skip it", s.goal.Waiting.RequestID),
			"answer it: zuno goal answer --request "+s.goal.Waiting.RequestID+" TEXT")
		e.ID = s.goal.Waiting.RequestID
		return nil, e
	case s.goal.Status != events.GoalPaused:
		return nil, stateError("the Goal is "+s.goal.Status+", not paused", "nothing to resume")
	}
	g := clone(*s.goal)
	g.Status, g.OwnerTurnID = events.GoalActive, ""
	return []events.Payload{events.GoalResumed{SessionID: c.SessionID, Revision: s.revision + 1, Goal: g}}, nil
}

// Continues reports whether the Goal continues turnID on its own after a final answer: it is
// active, and owned by that turn or by none (a resumed or answered Goal, claimed by the next
// turn that ends with it active).
func (s *State) Continues(turnID string) bool {
	g := s.goal
	return g != nil && g.Status == events.GoalActive && (g.OwnerTurnID == "" || g.OwnerTurnID == turnID)
}

func (s *State) observe(c Observe) ([]events.Payload, error) {
	if !s.Continues(c.TurnID) {
		return nil, stateError("no active Goal of this turn to continue", "only an active Goal owned by the turn continues")
	}
	repeats := 1
	if c.Fingerprint == s.fingerprint {
		repeats = s.repeats + 1
	}
	outcome := events.ProgressContinue
	switch {
	case c.Background:
		outcome = events.ProgressWaitingBackground
	case repeats >= NoProgressRepeats:
		outcome = events.ProgressNoProgress
	}
	return []events.Payload{events.GoalProgressObserved{SessionID: c.SessionID, GoalID: s.goal.GoalID, TurnID: c.TurnID,
		Fingerprint: c.Fingerprint, Repeats: repeats, Outcome: outcome}}, nil
}
