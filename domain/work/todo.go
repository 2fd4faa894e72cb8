package work

import (
	"fmt"
	"github.com/zuno-run/zuno/domain/tools"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// TodoUpdate is the todo_update tool's arguments: an upsert of items. SessionID is the root
// session, set by the host.
type TodoUpdate struct {
	SessionID string `json:"-"`
	// ExpectedRevision, when given, must be the revision todo_get returned. Unlike plans it is
	// optional, because an upsert names the items it touches and cannot erase another's work.
	ExpectedRevision *uint64     `json:"expected_revision,omitempty"`
	Items            []TodoInput `json:"items"`
}

// TodoInput patches the item with ID when it exists (only the fields given), and otherwise
// creates an item (with ID, or a host id when ID is empty; Title is then required).
type TodoInput struct {
	ID     string  `json:"id,omitempty"`
	Title  *string `json:"title,omitempty"`
	Status *string `json:"status,omitempty"`
	// Owner is who works on the item (an agent or job name); "" clears it.
	Owner *string `json:"owner,omitempty"`
	// Dependencies replaces the item's dependencies; [] clears them.
	Dependencies *[]string `json:"dependencies,omitempty"`
	// PlanStepID links the item to a step of the focused plan; "" clears the link.
	PlanStepID *string `json:"plan_step_id,omitempty"`
}

func decideTodo(s *State, c TodoUpdate) ([]events.Payload, error) {
	if err := checkTodoCall(s, c); err != nil {
		return nil, err
	}
	inCall, err := callItemIDs(c)
	if err != nil {
		return nil, err
	}
	d := &todoDecision{s: s, c: c, byID: map[string]int{}}
	if err := d.touch(inCall); err != nil {
		return nil, err
	}
	if n := len(s.items) + len(d.created); n > MaxTodoItems {
		return nil, domain.Invalid("items", fmt.Sprintf("would make %d items, more than the limit of %d per session", n, MaxTodoItems),
			"update existing items (todo_get lists them) instead of creating new ones")
	}
	for _, check := range []func() error{d.checkReferences, d.checkCycles, d.checkUnmet} {
		if err := check(); err != nil {
			return nil, err
		}
	}
	if d.created == nil {
		d.created = []string{}
	}
	return []events.Payload{events.WorkTodoUpdated{
		SessionID: c.SessionID, Revision: s.todoRevision + 1, Items: d.touched, CreatedIDs: d.created,
	}}, nil
}

// checkTodoCall refuses a stale revision and an empty or oversized call.
func checkTodoCall(s *State, c TodoUpdate) error {
	if c.ExpectedRevision != nil && *c.ExpectedRevision != s.todoRevision {
		return domain.StaleRevision("todo list", *c.ExpectedRevision, s.todoRevision, tools.NameTodoGet)
	}
	switch n := len(c.Items); {
	case n == 0:
		return domain.Invalid("items", "is empty", "give at least one item to create or update")
	case n > MaxTodoItemsPerCall:
		return domain.Invalid("items", fmt.Sprintf("has %d items, more than the limit of %d per call", n, MaxTodoItemsPerCall),
			"split the update into several calls")
	}
	return nil
}

// callItemIDs collects the ids the call names for its items. They come first, so that host ids
// can avoid them and dependencies can name items created later in the same call.
func callItemIDs(c TodoUpdate) (map[string]int, error) {
	inCall := map[string]int{}
	for i, in := range c.Items {
		if in.ID == "" {
			continue
		}
		field := fmt.Sprintf("items[%d].id", i)
		if err := domain.CheckID(field, in.ID); err != nil {
			return nil, err
		}
		if j, dup := inCall[in.ID]; dup {
			return nil, domain.Invalid(field, fmt.Sprintf("item %s also appears as items[%d]", in.ID, j),
				"list each item once, with all its changes")
		}
		inCall[in.ID] = i
	}
	return inCall, nil
}

// todoDecision is one todo_update being decided: the items it touches, as they will be.
type todoDecision struct {
	s       *State
	c       TodoUpdate
	touched []events.WorkItem
	byID    map[string]int
	created []string
}

// touch builds every item of the call as it will be: an existing one changed, or a new one
// with the call's id or a host id. A terminal item cannot change.
func (d *todoDecision) touch(inCall map[string]int) error {
	s := d.s
	// Host ids also avoid ids the call names as dependencies, so that a dependency on an item
	// that does not exist is reported instead of being bound to a host-numbered new item.
	mentioned := map[string]bool{}
	for _, in := range d.c.Items {
		if in.Dependencies != nil {
			for _, dep := range *in.Dependencies {
				mentioned[dep] = true
			}
		}
	}
	seq := s.todoSeq
	taken := func(id string) bool {
		_, stored := s.itemIndex[id]
		_, named := inCall[id]
		return stored || named || mentioned[id]
	}
	d.touched = make([]events.WorkItem, len(d.c.Items))
	for i, in := range d.c.Items {
		field := fmt.Sprintf("items[%d]", i)
		var it events.WorkItem
		j, exists := s.itemIndex[in.ID]
		if in.ID != "" && exists {
			it = cloneItem(s.items[j])
		} else {
			if in.Title == nil {
				return domain.Invalid(field+".title", "is required for a new item",
					"give a title, or the id of an existing item to update it (todo_get lists them)")
			}
			it = events.WorkItem{ID: in.ID, Status: StatusPending, Dependencies: []string{}}
			if it.ID == "" {
				it.ID = nextID("todo", &seq, taken)
			}
			d.created = append(d.created, it.ID)
		}
		before := cloneItem(it)
		if err := applyTodoInput(&it, in, field); err != nil {
			return err
		}
		if exists && Terminal(before.Status) && !sameItem(before, it) {
			e := domain.NewError(domain.CodeTerminalState, fmt.Sprintf("item %s is %s and cannot change", it.ID, before.Status),
				"leave it as it is, and create a new item for further work")
			e.Field, e.ID = field, it.ID
			return e
		}
		d.touched[i] = it
		d.byID[it.ID] = i
	}
	return nil
}

// lookup finds an item as it will be after the call.
func (d *todoDecision) lookup(id string) (events.WorkItem, bool) {
	if i, ok := d.byID[id]; ok {
		return d.touched[i], true
	}
	if i, ok := d.s.itemIndex[id]; ok {
		return d.s.items[i], true
	}
	return events.WorkItem{}, false
}

// checkReferences refuses a dependency on the item itself or on an item that does not exist,
// and a link to a step the current plan does not have. A link is checked when it is made: the
// step of an older plan stays a valid record.
func (d *todoDecision) checkReferences() error {
	focused := d.s.focused()
	for i, it := range d.touched {
		field := fmt.Sprintf("items[%d]", i)
		in := d.c.Items[i]
		if in.Dependencies != nil {
			for _, dep := range it.Dependencies {
				if dep == it.ID {
					e := domain.NewError(domain.CodeDependencyCycle, fmt.Sprintf("item %s depends on itself", it.ID),
						"remove "+it.ID+" from its own dependencies")
					e.Field, e.ID = field+".dependencies", it.ID
					return e
				}
				if _, ok := d.lookup(dep); !ok {
					e := domain.NewError(domain.CodeDependencyNotFound, fmt.Sprintf("item %s depends on %s, which does not exist", it.ID, dep),
						"name existing items (todo_get lists them) or items created with an explicit id in the same call")
					e.Field, e.ID = field+".dependencies", dep
					return e
				}
			}
		}
		if in.PlanStepID != nil && it.PlanStepID != "" && !d.s.hasLink(it.ID, it.PlanStepID) {
			if focused == nil || !slices.ContainsFunc(focused.Steps, func(st events.WorkPlanStep) bool { return st.ID == it.PlanStepID }) {
				msg := fmt.Sprintf("the current plan has no step %s", it.PlanStepID)
				if focused == nil {
					msg = fmt.Sprintf("there is no plan, so no step %s", it.PlanStepID)
				}
				e := domain.NewError(domain.CodeStepNotFound, msg, "call plan_get for the step ids, or omit plan_step_id")
				e.Field, e.ID = field+".plan_step_id", it.PlanStepID
				return e
			}
		}
	}
	return nil
}

// checkCycles refuses a dependency cycle. Only the touched items' edges changed and the old
// graph had no cycle, so any new cycle runs through a touched item.
func (d *todoDecision) checkCycles() error {
	for i, it := range d.touched {
		if path := cyclePath(it.ID, d.lookup); path != nil {
			e := domain.NewError(domain.CodeDependencyCycle, "dependencies form a cycle: "+strings.Join(path, " -> "),
				"remove one of these dependencies")
			e.Field, e.ID = fmt.Sprintf("items[%d].dependencies", i), it.ID
			return e
		}
	}
	return nil
}

// checkUnmet refuses starting or completing an item whose dependencies are not completed.
func (d *todoDecision) checkUnmet() error {
	for i, it := range d.touched {
		if it.Status != StatusInProgress && it.Status != StatusCompleted {
			continue
		}
		for _, dep := range it.Dependencies {
			if dd, _ := d.lookup(dep); dd.Status != StatusCompleted {
				e := domain.NewError(domain.CodeDependencyUnmet,
					fmt.Sprintf("item %s cannot be %s while its dependency %s is %s", it.ID, it.Status, dep, dd.Status),
					fmt.Sprintf("complete %s first (it may be completed in this same call), or remove it from the dependencies of %s", dep, it.ID))
				e.Field, e.ID = fmt.Sprintf("items[%d].status", i), dep
				return e
			}
		}
	}
	return nil
}

func (s *State) hasLink(itemID, stepID string) bool {
	i, ok := s.itemIndex[itemID]
	return ok && s.items[i].PlanStepID == stepID
}

func applyTodoInput(it *events.WorkItem, in TodoInput, field string) *domain.Error {
	if in.Title != nil {
		title, err := domain.CheckTitle(field+".title", *in.Title)
		if err != nil {
			return err
		}
		it.Title = title
	}
	if in.Status != nil {
		if err := checkStatus(field+".status", *in.Status, todoStatuses); err != nil {
			return err
		}
		it.Status = *in.Status
	}
	if in.Owner != nil {
		owner, err := checkOwner(field+".owner", *in.Owner)
		if err != nil {
			return err
		}
		it.Owner = owner
	}
	if in.Dependencies != nil {
		if n := len(*in.Dependencies); n > MaxDependencies {
			return domain.Invalid(field+".dependencies", fmt.Sprintf("lists %d items, more than the limit of %d", n, MaxDependencies),
				"depend only on the items this one really waits for")
		}
		deps, seen := []string{}, map[string]bool{}
		for k, dep := range *in.Dependencies {
			if err := domain.CheckID(fmt.Sprintf("%s.dependencies[%d]", field, k), dep); err != nil {
				return err
			}
			if !seen[dep] {
				seen[dep] = true
				deps = append(deps, dep)
			}
		}
		it.Dependencies = deps
	}
	if in.PlanStepID != nil {
		if *in.PlanStepID != "" {
			if err := domain.CheckID(field+".plan_step_id", *in.PlanStepID); err != nil {
				return err
			}
		}
		it.PlanStepID = *in.PlanStepID
	}
	return nil
}

func checkOwner(field, owner string) (string, *domain.Error) {
	owner = strings.TrimSpace(owner)
	switch {
	case !utf8.ValidString(owner) || strings.IndexFunc(owner, unicode.IsControl) >= 0:
		return "", domain.Invalid(field, "contains control characters or invalid UTF-8", "name the owner on one line, e.g. an agent name")
	case utf8.RuneCountInString(owner) > domain.MaxIDRunes:
		return "", domain.Invalid(field, fmt.Sprintf("is longer than %d characters", domain.MaxIDRunes), "use the agent or job name")
	}
	return owner, nil
}

func sameItem(a, b events.WorkItem) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Status == b.Status && a.Owner == b.Owner &&
		a.PlanStepID == b.PlanStepID && slices.Equal(a.Dependencies, b.Dependencies)
}

// cyclePath returns a dependency path from start back to start, or nil.
func cyclePath(start string, lookup func(string) (events.WorkItem, bool)) []string {
	visited := map[string]bool{}
	var walk func(id string, path []string) []string
	walk = func(id string, path []string) []string {
		it, _ := lookup(id)
		for _, dep := range it.Dependencies {
			if dep == start {
				return append(slices.Clone(path), dep)
			}
			if visited[dep] {
				continue
			}
			visited[dep] = true
			if p := walk(dep, append(path, dep)); p != nil {
				return p
			}
		}
		return nil
	}
	return walk(start, []string{start})
}
