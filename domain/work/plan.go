package work

import (
	"fmt"
	"github.com/zuno-run/zuno/domain/tools"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Plan actions, the required enum of plan_update.
const (
	ActionCreate = "create"
	ActionPatch  = "patch"
	ActionAppend = "append"
	ActionPush   = "push"
	ActionPop    = "pop"
)

var planActions = []string{ActionCreate, ActionPatch, ActionAppend, ActionPush, ActionPop}

// PlanActions lists the plan_update actions, for tool schemas.
func PlanActions() []string { return slices.Clone(planActions) }

// PlanUpdate is the plan_update tool's arguments. SessionID is the root session, set by the
// host from the tool call's context, never by the model.
type PlanUpdate struct {
	SessionID string `json:"-"`
	Action    string `json:"action"`
	// ExpectedRevision is the revision plan_get returned. Only the first create, when plan_get
	// returned null, may omit it.
	ExpectedRevision *uint64 `json:"expected_revision,omitempty"`
	// Title names a new plan (create, push) or renames the focused plan (patch).
	Title string `json:"title,omitempty"`
	// Steps are the steps of a new plan (create, push; ids optional) or the steps to add
	// (append; no ids, the host assigns them).
	Steps []StepInput `json:"steps,omitempty"`
	// Patches change steps of the focused plan by id (patch).
	Patches []StepPatch `json:"patches,omitempty"`
	// Status sets the focused plan's own status (patch) or the closing status of the sub-plan
	// (pop: completed, the default, or superseded).
	Status string `json:"status,omitempty"`
	// Origin is OriginHost when the plan classifier seeds the plan (create only); the model
	// never sets it (no JSON name).
	Origin string `json:"-"`
}

// OriginHost marks a plan the host seeded (docs/plan-classifier.md).
const OriginHost = "host"

// CodeHostStepDropped: a create that replaces a host-seeded plan would drop one of its steps or
// reopen a completed one. Refinement keeps the host's step ids and completed states.
const CodeHostStepDropped = "host_step_dropped"

// StepInput is a step of a new plan or an appended step; Status defaults to pending.
type StepInput struct {
	ID     string `json:"id,omitempty"`
	Title  string `json:"title"`
	Status string `json:"status,omitempty"`
}

// StepPatch changes the fields it gives of the step with this id.
type StepPatch struct {
	ID     string  `json:"id"`
	Title  *string `json:"title,omitempty"`
	Status *string `json:"status,omitempty"`
}

// fieldsByAction says which optional arguments each action reads. Arguments that an action
// would ignore are refused, so that a model that confuses two actions learns it at once
// instead of believing its change was applied.
var fieldsByAction = map[string][]string{
	ActionCreate: {"title", "steps"},
	ActionPatch:  {"title", "patches", "status"},
	ActionAppend: {"steps"},
	ActionPush:   {"title", "steps"},
	ActionPop:    {"status"},
}

// PlanActionFields returns the optional arguments action reads besides expected_revision (nil
// for an unknown action): the table Decide enforces, for tool schemas that list each action's
// fields.
func PlanActionFields(action string) []string { return slices.Clone(fieldsByAction[action]) }

// CheckShape refuses what no state can make right: a missing or unknown action, and arguments
// the action does not read. It is part of Decide; a tool calls it to refuse such a call
// before it runs.
func (c PlanUpdate) CheckShape() error {
	if err := checkAction(c.Action); err != nil {
		return err
	}
	if err := c.rejectUnusedFields(); err != nil {
		return err
	}
	return nil
}

func checkAction(action string) *domain.Error {
	if slices.Contains(planActions, action) {
		return nil
	}
	msg := fmt.Sprintf("action %q is not a plan_update action", action)
	if action == "" {
		msg = "action is missing"
	}
	e := domain.NewError(domain.CodeInvalidAction, msg,
		"set action to one of: create (first or replacing plan), patch (change steps, the title or the plan status), "+
			"append (add steps), push (open a focused sub-plan), pop (close the sub-plan and return to its parent)")
	e.Field, e.Valid = "action", slices.Clone(planActions)
	return e
}

func decidePlan(s *State, c PlanUpdate) ([]events.Payload, error) {
	if err := checkAction(c.Action); err != nil {
		return nil, err
	}
	if err := s.checkPlanRevision(c); err != nil {
		return nil, err
	}
	if err := c.rejectUnusedFields(); err != nil {
		return nil, err
	}
	switch c.Action {
	case ActionCreate:
		return decideCreate(s, c)
	case ActionPatch:
		return decidePatch(s, c)
	case ActionAppend:
		return decideAppend(s, c)
	case ActionPush:
		return decidePush(s, c)
	default:
		return decidePop(s, c)
	}
}

func (s *State) checkPlanRevision(c PlanUpdate) *domain.Error {
	if c.ExpectedRevision == nil {
		if c.Action == ActionCreate && s.focused() == nil {
			return nil
		}
		e := domain.NewError(domain.CodeExpectedRevisionRequired,
			fmt.Sprintf("expected_revision is missing; only the first create, before any plan exists, may omit it (action=%s)", c.Action),
			"call plan_get and pass the revision it returns as expected_revision")
		e.Field, e.Current = "expected_revision", s.planRevision
		return e
	}
	if *c.ExpectedRevision != s.planRevision {
		return domain.StaleRevision("plan", *c.ExpectedRevision, s.planRevision, tools.NamePlanGet)
	}
	return nil
}

func (c PlanUpdate) rejectUnusedFields() *domain.Error {
	given := []struct {
		name    string
		present bool
	}{
		{"title", c.Title != ""},
		{"steps", len(c.Steps) > 0},
		{"patches", len(c.Patches) > 0},
		{"status", c.Status != ""},
	}
	allowed := fieldsByAction[c.Action]
	for _, f := range given {
		if f.present && !slices.Contains(allowed, f.name) {
			var users []string
			for _, a := range planActions {
				if slices.Contains(fieldsByAction[a], f.name) {
					users = append(users, a)
				}
			}
			return domain.Invalid(f.name, fmt.Sprintf("is not used by action=%s", c.Action),
				fmt.Sprintf("remove %s, or use it with action=%s", f.name, strings.Join(users, " or action=")))
		}
	}
	return nil
}

// openFocused returns the focused plan for an action that changes it or builds on it.
func (s *State) openFocused(action string) (*events.WorkPlan, *domain.Error) {
	p := s.focused()
	if p == nil {
		return nil, domain.NewError(domain.CodeNoPlan,
			fmt.Sprintf("there is no plan to %s", action), "create one with plan_update action=create")
	}
	if Terminal(p.Status) {
		fix := "start new work with action=create (keep completed steps by listing them with their ids and status)"
		if p.Depth > 0 {
			fix = "close this sub-plan with action=pop, or " + fix
		}
		e := domain.NewError(domain.CodeTerminalState,
			fmt.Sprintf("plan %s is %s and cannot change", p.PlanID, p.Status), fix)
		e.ID = p.PlanID
		return nil, e
	}
	return p, nil
}

func decideCreate(s *State, c PlanUpdate) ([]events.Payload, error) {
	title, err := domain.CheckTitle("title", c.Title)
	if err != nil {
		return nil, err
	}
	seq := s.stepSeq
	steps, err := buildSteps(c.Steps, nil, true, &seq)
	if err != nil {
		return nil, err
	}
	if err := s.keepsHostSteps(steps); err != nil {
		return nil, err
	}
	rev := s.planRevision + 1
	plan := events.WorkPlan{
		PlanID: fmt.Sprintf("plan-%d", s.planSeq+1), Title: title, Status: StatusInProgress, Steps: steps, Origin: c.Origin,
	}
	if root := s.hostRoot(); root != nil {
		plan.Origin = OriginHost // a refinement of the host's plan is held to the same rule
	}
	var out []events.Payload
	// Innermost first, so that a projector replaying in order never sees an open sub-plan under
	// a superseded parent.
	for i := len(s.stack) - 1; i >= 0; i-- {
		if old := s.stack[i]; !Terminal(old.Status) {
			out = append(out, events.WorkPlanSuperseded{
				SessionID: c.SessionID, Revision: rev, PlanID: old.PlanID, Status: StatusSuperseded, SupersededBy: plan.PlanID,
			})
		}
	}
	return append(out, events.WorkPlanCreated{SessionID: c.SessionID, Revision: rev, WorkPlan: plan}), nil
}

func decidePush(s *State, c PlanUpdate) ([]events.Payload, error) {
	parent, err := s.openFocused("push a sub-plan under")
	if err != nil {
		return nil, err
	}
	if parent.Depth+1 > MaxPlanDepth {
		return nil, domain.Invalid("action", fmt.Sprintf("sub-plans are nested %d deep, the limit", MaxPlanDepth),
			"pop a sub-plan first, or add steps to the focused plan with action=append")
	}
	title, err := domain.CheckTitle("title", c.Title)
	if err != nil {
		return nil, err
	}
	seq := s.stepSeq
	steps, err := buildSteps(c.Steps, nil, true, &seq)
	if err != nil {
		return nil, err
	}
	plan := events.WorkPlan{
		PlanID: fmt.Sprintf("plan-%d", s.planSeq+1), Title: title, Status: StatusInProgress,
		Depth: parent.Depth + 1, ParentPlanID: parent.PlanID, Steps: steps,
	}
	return []events.Payload{events.WorkPlanPushed{SessionID: c.SessionID, Revision: s.planRevision + 1, WorkPlan: plan}}, nil
}

func decideAppend(s *State, c PlanUpdate) ([]events.Payload, error) {
	cur, err := s.openFocused("append steps to")
	if err != nil {
		return nil, err
	}
	taken := map[string]bool{}
	for _, st := range cur.Steps {
		taken[st.ID] = true
	}
	for i, in := range c.Steps {
		if in.ID != "" {
			return nil, domain.Invalid(fmt.Sprintf("steps[%d].id", i), "is set, but the host assigns the ids of appended steps",
				"remove id from appended steps; to change an existing step use action=patch")
		}
	}
	if len(c.Steps) == 0 {
		return nil, domain.Invalid("steps", "is empty", "give at least one step to append")
	}
	if n := len(cur.Steps) + len(c.Steps); n > MaxPlanSteps {
		return nil, domain.Invalid("steps", fmt.Sprintf("would give the plan %d steps, more than the limit of %d", n, MaxPlanSteps),
			"merge small steps, or push a sub-plan for a detailed phase")
	}
	seq := s.stepSeq
	added, err := buildSteps(c.Steps, taken, false, &seq)
	if err != nil {
		return nil, err
	}
	plan := clonePlan(*cur)
	plan.Steps = append(plan.Steps, added...)
	ids := make([]string, len(added))
	for i, st := range added {
		ids[i] = st.ID
	}
	return []events.Payload{events.WorkPlanStepsAppended{
		SessionID: c.SessionID, Revision: s.planRevision + 1, WorkPlan: plan, AppendedStepIDs: ids,
	}}, nil
}

func decidePatch(s *State, c PlanUpdate) ([]events.Payload, error) {
	cur, err := s.openFocused("patch")
	if err != nil {
		return nil, err
	}
	if c.Title == "" && c.Status == "" && len(c.Patches) == 0 {
		return nil, domain.Invalid("patches", "is empty and neither title nor status is given",
			"give patches [{id, title?, status?}], a new title, or a new plan status")
	}
	plan := clonePlan(*cur)
	if c.Title != "" {
		if plan.Title, err = domain.CheckTitle("title", c.Title); err != nil {
			return nil, err
		}
	}
	if c.Status != "" {
		if err := checkStatus("status", c.Status, planStatuses); err != nil {
			return nil, err
		}
		plan.Status = c.Status
	}
	patched := make([]string, 0, len(c.Patches))
	for i, p := range c.Patches {
		field := fmt.Sprintf("patches[%d]", i)
		if err := domain.CheckID(field+".id", p.ID); err != nil {
			return nil, err
		}
		if slices.Contains(patched, p.ID) {
			return nil, domain.Invalid(field+".id", fmt.Sprintf("step %s is patched twice", p.ID), "patch each step once")
		}
		j := slices.IndexFunc(plan.Steps, func(st events.WorkPlanStep) bool { return st.ID == p.ID })
		if j < 0 {
			e := domain.NewError(domain.CodeStepNotFound, fmt.Sprintf("plan %s has no step %s", plan.PlanID, p.ID),
				"call plan_get for the step ids, or add a step with action=append")
			e.Field, e.ID = field+".id", p.ID
			return nil, e
		}
		if p.Title == nil && p.Status == nil {
			return nil, domain.Invalid(field, "changes nothing", "give a title or a status for step "+p.ID)
		}
		next := plan.Steps[j]
		if p.Title != nil {
			if next.Title, err = domain.CheckTitle(field+".title", *p.Title); err != nil {
				return nil, err
			}
		}
		if p.Status != nil {
			if err := checkStatus(field+".status", *p.Status, planStatuses); err != nil {
				return nil, err
			}
			next.Status = *p.Status
		}
		// Re-sending a finished step unchanged is harmless and common; only a real change is refused.
		if old := plan.Steps[j]; Terminal(old.Status) && next != old {
			e := domain.NewError(domain.CodeTerminalState, fmt.Sprintf("step %s is %s and cannot change", old.ID, old.Status),
				"leave it as it is, and append a new step for further work")
			e.Field, e.ID = field, old.ID
			return nil, e
		}
		plan.Steps[j] = next
		patched = append(patched, p.ID)
	}
	return []events.Payload{events.WorkPlanPatched{
		SessionID: c.SessionID, Revision: s.planRevision + 1, WorkPlan: plan, PatchedStepIDs: patched,
	}}, nil
}

func decidePop(s *State, c PlanUpdate) ([]events.Payload, error) {
	if len(s.stack) < 2 {
		return nil, domain.NewError(domain.CodeNoSubPlan, "there is no sub-plan to pop; the focused plan is the root plan",
			"use action=patch with status=completed to finish the root plan, or action=push to open a sub-plan")
	}
	status := StatusCompleted
	if c.Status != "" {
		if c.Status != StatusCompleted && c.Status != StatusSuperseded {
			e := domain.Invalid("status", fmt.Sprintf("%q cannot close a sub-plan", c.Status),
				"use status=completed (the default) or status=superseded")
			e.Valid = []string{StatusCompleted, StatusSuperseded}
			return nil, e
		}
		status = c.Status
	}
	sub := clonePlan(s.stack[len(s.stack)-1])
	if Terminal(sub.Status) {
		if c.Status != "" && c.Status != sub.Status {
			e := domain.NewError(domain.CodeTerminalState,
				fmt.Sprintf("sub-plan %s is already %s and cannot become %s", sub.PlanID, sub.Status, c.Status),
				"pop without status to close it as it is")
			e.Field, e.ID = "status", sub.PlanID
			return nil, e
		}
		status = sub.Status
	}
	sub.Status = status
	return []events.Payload{events.WorkPlanPopped{
		SessionID: c.SessionID, Revision: s.planRevision + 1, WorkPlan: sub,
		RestoredPlanID: s.stack[len(s.stack)-2].PlanID,
	}}, nil
}

// buildSteps validates new steps and assigns host ids to those without one. taken holds the
// ids already in the plan. With explicitIDs false, every id is host-assigned.
func buildSteps(in []StepInput, taken map[string]bool, explicitIDs bool, seq *int) ([]events.WorkPlanStep, *domain.Error) {
	if len(in) == 0 {
		return nil, domain.Invalid("steps", "is empty", "give the plan at least one step")
	}
	if len(in) > MaxPlanSteps {
		return nil, domain.Invalid("steps", fmt.Sprintf("has %d steps, more than the limit of %d", len(in), MaxPlanSteps),
			"merge small steps, or push a sub-plan for a detailed phase")
	}
	used := map[string]bool{}
	for id := range taken {
		used[id] = true
	}
	steps := make([]events.WorkPlanStep, len(in))
	for i, st := range in {
		field := fmt.Sprintf("steps[%d]", i)
		if explicitIDs && st.ID != "" {
			if err := domain.CheckID(field+".id", st.ID); err != nil {
				return nil, err
			}
			if used[st.ID] {
				return nil, domain.Invalid(field+".id", fmt.Sprintf("step id %s is used twice", st.ID),
					"give every step a different id, or omit ids and let the host assign them")
			}
			used[st.ID] = true
			steps[i].ID = st.ID
		}
		title, err := domain.CheckTitle(field+".title", st.Title)
		if err != nil {
			return nil, err
		}
		steps[i].Title = title
		steps[i].Status = StatusPending
		if st.Status != "" {
			if err := checkStatus(field+".status", st.Status, planStatuses); err != nil {
				return nil, err
			}
			steps[i].Status = st.Status
		}
	}
	for i := range steps {
		if steps[i].ID == "" {
			steps[i].ID = nextID("step", seq, func(id string) bool { return used[id] })
			used[steps[i].ID] = true
		}
	}
	return steps, nil
}

// hostRoot returns the open root plan when the host seeded it, else nil.
func (s *State) hostRoot() *events.WorkPlan {
	if len(s.stack) == 0 || s.stack[0].Origin != OriginHost || Terminal(s.stack[0].Status) {
		return nil
	}
	return &s.stack[0]
}

// keepsHostSteps holds a create that replaces an open host-seeded plan to refinement: every
// step of the host's plan keeps its id, and a completed one stays completed (it may be marked
// superseded if no longer needed, never dropped), so the model cannot treat the seed as a
// stateless draft (docs/plan-classifier.md).
func (s *State) keepsHostSteps(steps []events.WorkPlanStep) *domain.Error {
	root := s.hostRoot()
	if root == nil {
		return nil
	}
	for _, old := range root.Steps {
		i := slices.IndexFunc(steps, func(st events.WorkPlanStep) bool { return st.ID == old.ID })
		var msg string
		switch {
		case i < 0:
			msg = fmt.Sprintf("the new plan drops step %s (%q) of the host-seeded plan %s", old.ID, old.Title, root.PlanID)
		case old.Status == StatusCompleted && steps[i].Status != StatusCompleted:
			msg = fmt.Sprintf("the new plan reopens step %s, which is completed in the host-seeded plan %s", old.ID, root.PlanID)
		default:
			continue
		}
		e := domain.NewError(CodeHostStepDropped, msg,
			"refine the host's plan instead of replacing it: keep every host step with its id (completed ones completed; mark one you no longer need superseded), "+
				"or change it with action=patch and add steps with action=append")
		e.Field, e.ID = "steps", old.ID
		return e
	}
	return nil
}
