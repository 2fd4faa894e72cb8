package events

// Goal payloads. A root session's Goal lives in its work stream ("work-<rootSessionId>")
// beside the Plan and the Todo items, so that the completion barrier decides on the plan,
// the todos and the goal at one revision of one stream (docs/goals.md). Like the work
// payloads, each carries the whole Goal as it is after the event and the resulting goal
// revision, so a projector writes the row from the event alone.

const (
	TypeGoalCreated          = "goal.created.1"
	TypeGoalUpdated          = "goal.updated.1"
	TypeGoalInputRequested   = "goal.input_requested.1"
	TypeGoalInputAnswered    = "goal.input_answered.1"
	TypeGoalResumed          = "goal.resumed.1"
	TypeGoalCompleted        = "goal.completed.1"
	TypeGoalProgressObserved = "goal.progress_observed.1"
)

// Goal statuses.
const (
	GoalActive   = "active"
	GoalPaused   = "paused"
	GoalComplete = "complete"
)

// GoalCriterion is one acceptance criterion of a Goal. One that needs evidence is met only
// by the id of an authoritative, passing verification receipt ([verification rcp_…]).
type GoalCriterion struct {
	ID            string `json:"id"`
	Text          string `json:"text"`
	NeedsEvidence bool   `json:"needsEvidence"`
	// Evidence is the receipt id that met the criterion at completion; empty before.
	Evidence string `json:"evidence,omitempty"`
}

// GoalInputRequest is the session wait goal_request_input records: the question, the goal
// revision the model observed, and the request's stable id an answer must name.
type GoalInputRequest struct {
	RequestID        string `json:"requestId"`
	Question         string `json:"question"`
	ObservedRevision uint64 `json:"observedRevision"`
	// TurnID is the turn whose call asked.
	TurnID string `json:"turnId,omitempty"`
}

// Goal is a root session's Goal as it is after the event: one goal row.
type Goal struct {
	GoalID    string          `json:"goalId"`
	Objective string          `json:"objective"`
	Status    string          `json:"status"`
	Criteria  []GoalCriterion `json:"criteria"`
	// OwnerTurnID is the turn (the cycle) that owns the Goal: only that turn continues it on
	// its own after a final answer. Empty when no turn owns it (resumed by a user, or its
	// continuation stopped): the next turn that finishes with it active claims it.
	OwnerTurnID string `json:"ownerTurnId,omitempty"`
	// Waiting is the open input request while the Goal is paused for one.
	Waiting *GoalInputRequest `json:"waiting,omitempty"`
}

// GoalCreated opened the session's Goal (or replaced a completed one).
type GoalCreated struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	Goal
}

func (GoalCreated) EventType() string { return TypeGoalCreated }

// GoalUpdated changed the objective, the criteria or the status (active <-> paused).
type GoalUpdated struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	Goal
}

func (GoalUpdated) EventType() string { return TypeGoalUpdated }

// GoalInputRequested is goal_request_input: the Goal paused and the session's wait for an
// answer to Goal.Waiting, in one event (one append).
type GoalInputRequested struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	Goal
}

func (GoalInputRequested) EventType() string { return TypeGoalInputRequested }

// GoalInputAnswered is a real answer to the exact request RequestID: the wait is satisfied
// and the Goal active again, owned by no turn.
type GoalInputAnswered struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	RequestID string `json:"requestId"`
	Answer    string `json:"answer"`
	Goal
}

func (GoalInputAnswered) EventType() string { return TypeGoalInputAnswered }

// GoalResumed is /goal resume: a paused Goal with no open wait is active again.
type GoalResumed struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	Goal
}

func (GoalResumed) EventType() string { return TypeGoalResumed }

// GoalCompleted is a completion the barrier admitted. JobsRevision is the revision of the
// session's job ledger the barrier read (-1 for none); the criteria carry their evidence.
type GoalCompleted struct {
	SessionID    string `json:"sessionId"`
	Revision     uint64 `json:"revision"`
	JobsRevision int64  `json:"jobsRevision"`
	Goal
}

func (GoalCompleted) EventType() string { return TypeGoalCompleted }

// Outcomes of a progress observation.
const (
	ProgressContinue          = "continue"
	ProgressNoProgress        = "no_progress"
	ProgressWaitingBackground = "waiting_background"
)

// GoalProgressObserved is one observation of the auto-continuation driver after a final
// answer of the turn that owns an active Goal: the fingerprint of the durable work state,
// how many consecutive observations had it, and what the driver did. It leaves the goal
// revision as it is (the model's view of the Goal did not change), so a goal_request_input
// bound to the revision stays valid.
type GoalProgressObserved struct {
	SessionID   string `json:"sessionId"`
	GoalID      string `json:"goalId"`
	TurnID      string `json:"turnId"`
	Fingerprint string `json:"fingerprint"`
	Repeats     int    `json:"repeats"`
	Outcome     string `json:"outcome"`
}

func (GoalProgressObserved) EventType() string { return TypeGoalProgressObserved }

// GoalSnapshot is the Goal part of a WorkSnapshot.
type GoalSnapshot struct {
	Revision    uint64 `json:"revision"`
	Goal        *Goal  `json:"goal,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Repeats     int    `json:"repeats,omitempty"`
	GoalSeq     int    `json:"goalSeq,omitempty"`
}
