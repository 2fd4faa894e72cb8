package events

// Work stream ("work-<rootSessionId>") payloads: the durable Plan and Todo items of one root
// session. Every payload carries the resulting state of what it changed (a whole plan, whole
// items) and the resulting domain revision, so a projector writes rows straight from the event
// and never needs the aggregate or earlier events to fill a column.
//
// One plan_update or todo_update decision may emit several events (a replacing create
// supersedes the old plans, then creates); all of them carry the same resulting revision.

const (
	TypeWorkPlanCreated       = "work.plan.created.1"
	TypeWorkPlanPatched       = "work.plan.patched.1"
	TypeWorkPlanStepsAppended = "work.plan.steps_appended.1"
	TypeWorkPlanPushed        = "work.plan.pushed.1"
	TypeWorkPlanPopped        = "work.plan.popped.1"
	TypeWorkPlanSuperseded    = "work.plan.superseded.1"
	TypeWorkTodoUpdated       = "work.todo.updated.1"
)

// WorkPlanStep is one step of a plan; the work_plan.steps column holds an array of these.
type WorkPlanStep struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// WorkPlan is a whole plan as it is after the event: one work_plan row. It is embedded in the
// plan payloads so that its fields sit at the top level of the event data, where forensic
// SQL reads them with json_extract(data, '$.planId').
type WorkPlan struct {
	PlanID string `json:"planId"`
	Title  string `json:"title"`
	Status string `json:"status"`
	// Depth is 0 for the root plan and parent depth + 1 for a pushed sub-plan.
	Depth        int            `json:"depth"`
	ParentPlanID string         `json:"parentPlanId,omitempty"`
	Steps        []WorkPlanStep `json:"steps"`
	// Origin is "host" for a plan the plan classifier seeded before the model's first request
	// (docs/plan-classifier.md), and for the model's refinements of it, which must keep its
	// step ids and completed states; empty for a plan the model created.
	Origin string `json:"origin,omitempty"`
}

// WorkPlanCreated opens a new root plan (depth 0), which becomes the focused plan. When it
// replaces an earlier plan, WorkPlanSuperseded events for the replaced plans precede it in the
// same append.
type WorkPlanCreated struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	WorkPlan
}

func (WorkPlanCreated) EventType() string { return TypeWorkPlanCreated }

// WorkPlanPatched changed the focused plan's title, status or steps; the plan is carried whole.
type WorkPlanPatched struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	WorkPlan
	// PatchedStepIDs lists the steps the patch named, for audit; the plan itself is complete.
	PatchedStepIDs []string `json:"patchedStepIds"`
}

func (WorkPlanPatched) EventType() string { return TypeWorkPlanPatched }

// WorkPlanStepsAppended added host-numbered steps to the focused plan; the plan is carried
// whole, and AppendedStepIDs says which steps are new.
type WorkPlanStepsAppended struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	WorkPlan
	AppendedStepIDs []string `json:"appendedStepIds"`
}

func (WorkPlanStepsAppended) EventType() string { return TypeWorkPlanStepsAppended }

// WorkPlanPushed opened a sub-plan under the focused plan (ParentPlanID), which becomes the
// focused plan. The parent is left untouched and is not carried.
type WorkPlanPushed struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	WorkPlan
}

func (WorkPlanPushed) EventType() string { return TypeWorkPlanPushed }

// WorkPlanPopped closed the focused sub-plan (carried whole, with its final status) and
// focused its parent again, RestoredPlanID, exactly as it was when the sub-plan was pushed.
type WorkPlanPopped struct {
	SessionID string `json:"sessionId"`
	Revision  uint64 `json:"revision"`
	WorkPlan
	RestoredPlanID string `json:"restoredPlanId"`
}

func (WorkPlanPopped) EventType() string { return TypeWorkPlanPopped }

// WorkPlanSuperseded marks a still-open plan replaced by a new root plan. Only its status
// changed (to "superseded"); its steps keep theirs as a record of how far it got.
type WorkPlanSuperseded struct {
	SessionID    string `json:"sessionId"`
	Revision     uint64 `json:"revision"`
	PlanID       string `json:"planId"`
	Status       string `json:"status"`
	SupersededBy string `json:"supersededBy"`
}

func (WorkPlanSuperseded) EventType() string { return TypeWorkPlanSuperseded }

// WorkItem is a Todo item as it is after the event: one work_item row (time_created comes from
// the metadata of the event whose CreatedIDs name the item). Item ids are unique within a root
// session only, so a read model keys items by (session_id, id).
type WorkItem struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Status       string   `json:"status"`
	Owner        string   `json:"owner,omitempty"`
	Dependencies []string `json:"dependencies"`
	PlanStepID   string   `json:"planStepId,omitempty"`
}

// WorkTodoUpdated is one todo_update: every item the call touched, whole, in call order.
type WorkTodoUpdated struct {
	SessionID string     `json:"sessionId"`
	Revision  uint64     `json:"revision"`
	Items     []WorkItem `json:"items"`
	// CreatedIDs names the items this event created, in creation order; the rest existed.
	CreatedIDs []string `json:"createdIds"`
}

func (WorkTodoUpdated) EventType() string { return TypeWorkTodoUpdated }

// TypeWorkSnapshot is the type of WorkSnapshot.
const TypeWorkSnapshot = "work.snapshot.1"

// WorkSnapshot is a root session's work state folded up to a revision of its work stream. It
// is recorded in a stream of its own ("work-snapshot-<rootSessionId>") every so many work
// events, so a reader of the work state (a turn's prompt, plan_get, todo_get, zuno plan show)
// folds only what came after the latest one (docs/turns.md, "Work state"). It is derived: the
// events it folds stay in the log, and folding them gives the same state.
type WorkSnapshot struct {
	SessionID string `json:"sessionId"`
	// WorkRevision is the last revision of the work stream folded in.
	WorkRevision uint64 `json:"workRevision"`
	PlanRevision uint64 `json:"planRevision"`
	TodoRevision uint64 `json:"todoRevision"`
	// The counters behind host-generated ids, so ids handed out after the snapshot are the
	// ones a full fold would hand out.
	PlanSeq int `json:"planSeq"`
	StepSeq int `json:"stepSeq"`
	TodoSeq int `json:"todoSeq"`
	// Plans is the plan stack, root first; Items the todo items in creation order.
	Plans []WorkPlan `json:"plans"`
	Items []WorkItem `json:"items"`
	// Goal is the Goal's state (docs/goals.md); absent when the session never had one.
	Goal *GoalSnapshot `json:"goal,omitempty"`
}

func (WorkSnapshot) EventType() string { return TypeWorkSnapshot }
