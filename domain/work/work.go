// Package work is the durable work aggregate of one root session (stream
// "work-<rootSessionId>"): the strategic Plan, with its stack of focused sub-plans, and the
// Todo items under it. Goals, jobs and the inbox will join it, because the completion barrier
// and job admission must read and write all of them atomically.
//
// Host-generated ids ("plan-2", "step-7", "todo-3") come from counters kept in State and
// advanced only by Evolve, so replaying the log reproduces every id.
package work

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/events"
)

// Statuses of plans, plan steps and todo items. Plans and steps use pending, in_progress,
// blocked, completed and superseded; todo items use cancelled instead of superseded.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusBlocked    = "blocked"
	StatusCompleted  = "completed"
	StatusSuperseded = "superseded"
	StatusCancelled  = "cancelled"
)

var (
	planStatuses = []string{StatusPending, StatusInProgress, StatusBlocked, StatusCompleted, StatusSuperseded}
	todoStatuses = []string{StatusPending, StatusInProgress, StatusBlocked, StatusCompleted, StatusCancelled}
)

// PlanStatuses and TodoStatuses list the accepted statuses, for tool schemas.
func PlanStatuses() []string { return slices.Clone(planStatuses) }
func TodoStatuses() []string { return slices.Clone(todoStatuses) }

// Terminal reports whether a plan, step or item status admits no further change.
func Terminal(status string) bool {
	return status == StatusCompleted || status == StatusSuperseded || status == StatusCancelled
}

// Limits keep the plan and todo list small enough to be re-injected into every prompt.
const (
	MaxPlanSteps        = 64
	MaxPlanDepth        = 8
	MaxTodoItemsPerCall = 64
	MaxTodoItems        = 256
	// MaxDependencies bounds one item's dependencies: an item can only depend on items of
	// its session, of which there are at most MaxTodoItems.
	MaxDependencies = MaxTodoItems
)

// State is the work of one root session. The zero value is a session with no plan and no
// todo items; Evolve it with the stream's events in order. Decide never changes it.
type State struct {
	sessionID    string
	planRevision uint64
	todoRevision uint64

	// Counters behind host-generated ids; they only grow, so an id is never handed out twice.
	planSeq, stepSeq, todoSeq int

	// stack[0] is the root plan, the last element the focused plan plan_get shows.
	stack []events.WorkPlan

	items     []events.WorkItem // creation order
	itemIndex map[string]int

	// goal is the root session's Goal (docs/goals.md), in this stream so that the
	// completion barrier reads it, the plan and the todos at one revision.
	goal goal.State
}

// Goal is the Goal part of the state; read it, never change it.
func (s *State) Goal() *goal.State { return &s.goal }

// SessionID is the root session the state belongs to, empty before the first event.
func (s *State) SessionID() string { return s.sessionID }

// Plans is the plan stack, root first, as the runtime.work_state prompt section shows it. The
// slice is the state's own: read it, never change it.
func (s *State) Plans() []events.WorkPlan { return s.stack }

// Items is the todo items in creation order; read it, never change it.
func (s *State) Items() []events.WorkItem { return s.items }

// PlanRevision is the revision plan_get reports and plan_update's expected_revision names.
func (s *State) PlanRevision() uint64 { return s.planRevision }

// TodoRevision is the revision todo_get reports and todo_update's expected_revision names.
func (s *State) TodoRevision() uint64 { return s.todoRevision }

// Evolve applies one event of the work stream. A payload of another aggregate is an error,
// never skipped; an event that does not fit the state (which Decide never produces) is
// applied as far as it can be rather than panicking, because a reader must never die on the
// log.
func (s *State) Evolve(p events.Payload) error {
	if goal.Handles(p) {
		return s.goal.Evolve(p)
	}
	switch e := p.(type) {
	case events.WorkPlanCreated:
		s.sessionID, s.planRevision = e.SessionID, e.Revision
		s.stack = []events.WorkPlan{clonePlan(e.WorkPlan)}
		s.planSeq++
		s.stepSeq += len(e.Steps)
	case events.WorkPlanPatched:
		s.sessionID, s.planRevision = e.SessionID, e.Revision
		s.replacePlan(e.WorkPlan)
	case events.WorkPlanStepsAppended:
		s.sessionID, s.planRevision = e.SessionID, e.Revision
		s.replacePlan(e.WorkPlan)
		s.stepSeq += len(e.AppendedStepIDs)
	case events.WorkPlanPushed:
		s.sessionID, s.planRevision = e.SessionID, e.Revision
		s.stack = append(s.stack, clonePlan(e.WorkPlan))
		s.planSeq++
		s.stepSeq += len(e.Steps)
	case events.WorkPlanPopped:
		s.sessionID, s.planRevision = e.SessionID, e.Revision
		if i := s.planIndex(e.PlanID); i > 0 {
			s.stack = s.stack[:i]
		}
	case events.WorkPlanSuperseded:
		s.sessionID, s.planRevision = e.SessionID, e.Revision
		if i := s.planIndex(e.PlanID); i >= 0 {
			s.stack[i].Status = e.Status
		}
	case events.WorkTodoUpdated:
		s.sessionID, s.todoRevision = e.SessionID, e.Revision
		if s.itemIndex == nil {
			s.itemIndex = map[string]int{}
		}
		for _, it := range e.Items {
			it = cloneItem(it)
			if i, ok := s.itemIndex[it.ID]; ok {
				s.items[i] = it
			} else {
				s.itemIndex[it.ID] = len(s.items)
				s.items = append(s.items, it)
			}
		}
		s.todoSeq += len(e.CreatedIDs)
	default:
		return domain.UnexpectedEvent("work", p)
	}
	return nil
}

func (s *State) planIndex(id string) int {
	for i := range s.stack {
		if s.stack[i].PlanID == id {
			return i
		}
	}
	return -1
}

func (s *State) replacePlan(p events.WorkPlan) {
	if i := s.planIndex(p.PlanID); i >= 0 {
		s.stack[i] = clonePlan(p)
	}
}

// focused returns the plan plan_get shows, or nil when no plan was ever created.
func (s *State) focused() *events.WorkPlan {
	if len(s.stack) == 0 {
		return nil
	}
	return &s.stack[len(s.stack)-1]
}

func clonePlan(p events.WorkPlan) events.WorkPlan {
	p.Steps = slices.Clone(p.Steps)
	if p.Steps == nil {
		p.Steps = []events.WorkPlanStep{}
	}
	return p
}

func cloneItem(it events.WorkItem) events.WorkItem {
	it.Dependencies = slices.Clone(it.Dependencies)
	if it.Dependencies == nil {
		it.Dependencies = []string{}
	}
	return it
}

// PlanView is what plan_get returns: the focused plan.
type PlanView struct {
	PlanID   string `json:"plan_id"`
	Revision uint64 `json:"revision"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Depth    int    `json:"depth"`
	// ParentPlanID is empty for the root plan.
	ParentPlanID string     `json:"parent_plan_id"`
	Steps        []StepView `json:"steps"`
	// Origin is "host" for a plan the host seeded, whose step ids and completed states a
	// refinement keeps; absent for the model's own plan.
	Origin string `json:"origin,omitempty"`
}

// StepView is one step of a PlanView.
type StepView struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// PlanView returns the focused plan, or nil (JSON null) when no plan was ever created. A
// completed or superseded plan is still shown: it is the model's record of what was done.
func (s *State) PlanView() *PlanView {
	p := s.focused()
	if p == nil {
		return nil
	}
	v := &PlanView{
		PlanID: p.PlanID, Revision: s.planRevision, Title: p.Title, Status: p.Status,
		Depth: p.Depth, ParentPlanID: p.ParentPlanID, Steps: make([]StepView, len(p.Steps)), Origin: p.Origin,
	}
	for i, st := range p.Steps {
		v.Steps[i] = StepView(st)
	}
	return v
}

// TodoView is what todo_get returns.
type TodoView struct {
	Revision uint64         `json:"revision"`
	Items    []TodoItemView `json:"items"`
}

// TodoItemView is one item of a TodoView; Owner and PlanStepID are empty when unset.
type TodoItemView struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Status       string   `json:"status"`
	Owner        string   `json:"owner"`
	Dependencies []string `json:"dependencies"`
	PlanStepID   string   `json:"plan_step_id"`
}

// TodoView returns every item in creation order.
func (s *State) TodoView() TodoView {
	v := TodoView{Revision: s.todoRevision, Items: make([]TodoItemView, len(s.items))}
	for i, it := range s.items {
		v.Items[i] = TodoItemView{
			ID: it.ID, Title: it.Title, Status: it.Status, Owner: it.Owner,
			Dependencies: cloneItem(it).Dependencies, PlanStepID: it.PlanStepID,
		}
	}
	return v
}

// Command is a PlanUpdate or a TodoUpdate.
type Command interface{ isWorkCommand() }

func (PlanUpdate) isWorkCommand() {}
func (TodoUpdate) isWorkCommand() {}

// Decide returns the events a command produces against s, or a *domain.Error. It never
// changes s; a nil s is a session with no work yet. Every successful decision raises the
// revision it concerns (plan or todo) by exactly one.
func Decide(s *State, cmd Command) ([]events.Payload, error) {
	if s == nil {
		s = &State{}
	}
	switch c := cmd.(type) {
	case PlanUpdate:
		if err := s.checkSession(c.SessionID); err != nil {
			return nil, err
		}
		return decidePlan(s, c)
	case TodoUpdate:
		if err := s.checkSession(c.SessionID); err != nil {
			return nil, err
		}
		return decideTodo(s, c)
	default:
		return nil, domain.Invalid("command", fmt.Sprintf("%T is not a work command", cmd),
			"send a PlanUpdate or a TodoUpdate")
	}
}

// checkSession guards against a handler deciding against another session's stream; the model
// never sets the session id, the host does.
func (s *State) checkSession(id string) *domain.Error {
	if err := domain.CheckID("session_id", id); err != nil {
		return err
	}
	if s.sessionID != "" && s.sessionID != id {
		e := domain.Invalid("session_id", fmt.Sprintf("%s is not the root session of this work stream (%s)", id, s.sessionID),
			"load the work stream of the command's root session")
		e.ID = id
		return e
	}
	return nil
}

func checkStatus(field, status string, valid []string) *domain.Error {
	if slices.Contains(valid, status) {
		return nil
	}
	e := domain.Invalid(field, fmt.Sprintf("%q is not a valid status", status), "use one of: "+strings.Join(valid, ", "))
	e.Valid = slices.Clone(valid)
	return e
}

// nextID returns the first "<prefix>-<n>" after *seq that is not taken, and advances *seq past
// it. Skipping taken ids keeps host ids from colliding with ids the model chose.
func nextID(prefix string, seq *int, taken func(string) bool) string {
	for {
		*seq++
		id := fmt.Sprintf("%s-%d", prefix, *seq)
		if !taken(id) {
			return id
		}
	}
}
