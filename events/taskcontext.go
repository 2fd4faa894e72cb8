package events

// Task context stream ("task-context-<rootSessionId>") payloads: the bounded managed context of
// a long task (docs/task-context.md) — its objective, kind, the user sources that authorise
// it, what is understood as authorised and what is forbidden, who owns decisions, and its
// delivery and safety checks. Each payload carries the whole task after the event and the
// resulting revision, so the task_context read model writes rows straight from it.

const (
	TypeTaskContextStarted = "task_context.started.1"
	TypeTaskContextUpdated = "task_context.updated.1"
)

// TaskContextSource is one durable user message the task cites as its authority: its id and
// the host's summary of every part of it (never the model's paraphrase).
type TaskContextSource struct {
	MessageID string `json:"messageId"`
	Summary   string `json:"summary"`
}

// TaskContextCheck is one acceptance check: a delivery check (the work is done) or a safety
// check (something that must not happen did not). Evidence is cleared whenever a check's
// definition is revised.
type TaskContextCheck struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Evidence string `json:"evidence,omitempty"`
}

// TaskContext is a task as it is after an event: one task_context row.
type TaskContext struct {
	TaskID            string              `json:"taskId"`
	Objective         string              `json:"objective"`
	TaskKind          string              `json:"taskKind"`
	Status            string              `json:"status"`
	Sources           []TaskContextSource `json:"sources"`
	AuthorizedActions []string            `json:"authorizedActions"`
	Constraints       []string            `json:"constraints"`
	DecisionOwner     string              `json:"decisionOwner,omitempty"`
	Checks            []TaskContextCheck  `json:"checks"`
}

// TaskContextStarted opens a task: the first one of the session, or a replace that explicitly
// starts a new task (ReplacedTaskID names the task it ended, whose row keeps its last state
// with status "replaced").
type TaskContextStarted struct {
	SessionID      string `json:"sessionId"`
	Revision       uint64 `json:"revision"`
	ReplacedTaskID string `json:"replacedTaskId,omitempty"`
	TaskContext
}

func (TaskContextStarted) EventType() string { return TypeTaskContextStarted }

// TaskContextUpdated is one partial update of the current task, carried whole.
// RevisedCheckIDs names the checks whose definition an explicit revise_checks changed (reset
// to pending, evidence cleared).
type TaskContextUpdated struct {
	SessionID       string   `json:"sessionId"`
	Revision        uint64   `json:"revision"`
	RevisedCheckIDs []string `json:"revisedCheckIds,omitempty"`
	TaskContext
}

func (TaskContextUpdated) EventType() string { return TypeTaskContextUpdated }
