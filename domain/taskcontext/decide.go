package taskcontext

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// GetTool is how the refusals name the read that shows the current revision.
const GetTool = "task_context action=get"

// Update is the task_context tool's update or replace. SessionID, Child and Messages are set
// by the host, never by the model: the root session whose context this is, whether the caller
// is a delegated child, and the session's durable messages by id.
type Update struct {
	SessionID string `json:"-"`
	Child     bool   `json:"-"`
	// Messages are the session's durable messages by id, resolved from its log by the host.
	Messages map[string]Message `json:"-"`

	Action string `json:"action"`
	// ExpectedRevision is the revision get returned; only the first task may omit it.
	ExpectedRevision  *uint64      `json:"expected_revision,omitempty"`
	Objective         string       `json:"objective,omitempty"`
	TaskKind          string       `json:"task_kind,omitempty"`
	SourceMessageIDs  []string     `json:"source_message_ids,omitempty"`
	AuthorizedActions []string     `json:"authorized_actions,omitempty"`
	Constraints       []string     `json:"constraints,omitempty"`
	DecisionOwner     string       `json:"decision_owner,omitempty"`
	Checks            []CheckInput `json:"checks,omitempty"`
	// ReviseChecks allows this update to change the definition (title, kind) of existing
	// checks; it needs a user source in the same call.
	ReviseChecks bool   `json:"revise_checks,omitempty"`
	Status       string `json:"status,omitempty"`
}

// CheckInput adds a check (a new or empty id), reports on one (status, evidence), or, with
// revise_checks, redefines one (title, kind).
type CheckInput struct {
	ID       string `json:"id,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Title    string `json:"title,omitempty"`
	Status   string `json:"status,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// Decide returns the events u produces against s, or a *domain.Error. It never changes s.
func Decide(s *State, u Update) ([]events.Payload, error) {
	if s == nil {
		s = &State{}
	}
	if err := checkAction(u.Action); err != nil {
		return nil, err
	}
	if u.Child {
		return nil, domain.NewError(CodeChildContext,
			"a delegated child cannot change the task context: its root session owns it",
			"report what you found and what needs deciding to your parent in your final answer; the parent updates the task context")
	}
	if err := domain.CheckID("session_id", u.SessionID); err != nil {
		return nil, err
	}
	if err := s.checkRevision(u); err != nil {
		return nil, err
	}
	sources, err := resolveSources(u)
	if err != nil {
		return nil, err
	}
	if s.current == nil || u.Action == ActionReplace {
		return s.start(u, sources)
	}
	return s.update(u, sources)
}

func checkAction(a string) *domain.Error {
	if a == ActionUpdate || a == ActionReplace {
		return nil
	}
	msg := fmt.Sprintf("action %q does not change the task context", a)
	if a == "" {
		msg = "action is missing"
	}
	e := domain.NewError(domain.CodeInvalidAction, msg,
		"use action=get to read, update to change the current task, replace to start a new task")
	e.Field, e.Valid = "action", slices.Clone(actions)
	return e
}

func (s *State) checkRevision(u Update) *domain.Error {
	if u.ExpectedRevision == nil {
		if s.current == nil {
			return nil
		}
		e := domain.NewError(domain.CodeExpectedRevisionRequired,
			"expected_revision is missing; only the first task of a session may omit it",
			"call task_context action=get and pass the revision it returns as expected_revision")
		e.Field, e.Current = "expected_revision", s.revision
		return e
	}
	if *u.ExpectedRevision != s.revision {
		return domain.StaleRevision("task context", *u.ExpectedRevision, s.revision, GetTool)
	}
	return nil
}

// resolveSources checks every source id names a durable user message of the session, and
// returns them with the host's summaries, in the order given, without repeats.
func resolveSources(u Update) ([]events.TaskContextSource, error) {
	if len(u.SourceMessageIDs) > MaxItems {
		return nil, tooMany("source_message_ids", len(u.SourceMessageIDs))
	}
	var out []events.TaskContextSource
	for i, id := range u.SourceMessageIDs {
		field := fmt.Sprintf("source_message_ids[%d]", i)
		if err := domain.CheckID(field, id); err != nil {
			return nil, err
		}
		m, ok := u.Messages[id]
		if !ok || m.Kind != MessageUser {
			what := "is not a message of this session"
			if ok {
				what = fmt.Sprintf("is a %s, not the user's own input", m.Kind)
			}
			e := domain.NewError(CodeSourceNotUser, fmt.Sprintf("source %s %s; only durable user messages authorise a task", id, what),
				"cite the ids of the user's messages that ask for this work (task_context action=get lists them as user_messages)")
			e.Field, e.ID = field, id
			return nil, e
		}
		if !slices.ContainsFunc(out, func(s events.TaskContextSource) bool { return s.MessageID == id }) {
			out = append(out, events.TaskContextSource{MessageID: id, Summary: m.Summary})
		}
	}
	return out, nil
}

// start opens a new task: the session's first, or an explicit replace.
func (s *State) start(u Update, sources []events.TaskContextSource) ([]events.Payload, error) {
	if u.ReviseChecks {
		return nil, domain.Invalid("revise_checks", "is only for action=update of an existing task",
			"leave it out: a new task's checks are all new")
	}
	if u.Status != "" && u.Status != StatusActive {
		return nil, domain.Invalid("status", fmt.Sprintf("a new task starts active, not %s", u.Status),
			"leave status out, and complete the task with a later update once its checks pass")
	}
	objective, err := checkText("objective", u.Objective, MaxObjectiveRunes)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(kinds, u.TaskKind) {
		e := domain.Invalid("task_kind", fmt.Sprintf("%q is not a task kind", u.TaskKind),
			"set task_kind to delivery (the task changes something) or inspection (it only looks)")
		e.Valid = slices.Clone(kinds)
		return nil, e
	}
	if len(sources) == 0 {
		return nil, sourceRequired("a new task")
	}
	t := events.TaskContext{TaskID: fmt.Sprintf("task-%d", s.taskSeq+1), Objective: objective, TaskKind: u.TaskKind,
		Status: StatusActive, Sources: sources, AuthorizedActions: []string{}, Constraints: []string{}, Checks: []events.TaskContextCheck{}}
	if err := mergeTask(&t, u, nil); err != nil {
		return nil, err
	}
	started := events.TaskContextStarted{SessionID: u.SessionID, Revision: s.revision + 1, TaskContext: t}
	if s.current != nil {
		started.ReplacedTaskID = s.current.TaskID
	}
	return []events.Payload{started}, nil
}

// update changes the current task: what u omits is kept, lists and checks are merged.
func (s *State) update(u Update, sources []events.TaskContextSource) ([]events.Payload, error) {
	if s.current.Status == StatusCompleted {
		e := domain.NewError(domain.CodeTerminalState, fmt.Sprintf("task %s is completed and cannot change", s.current.TaskID),
			"start the next task with action=replace, citing the user message that asks for it")
		e.ID = s.current.TaskID
		return nil, e
	}
	t := clone(*s.current)
	if u.TaskKind != "" && u.TaskKind != t.TaskKind {
		return nil, domain.Invalid("task_kind", fmt.Sprintf("the task is %s; an update cannot change its kind", t.TaskKind),
			"a different kind of task is a new task: use action=replace")
	}
	if u.Objective != "" {
		objective, err := checkText("objective", u.Objective, MaxObjectiveRunes)
		if err != nil {
			return nil, err
		}
		if objective != t.Objective && len(sources) == 0 {
			return nil, sourceRequired("a new objective")
		}
		t.Objective = objective
	}
	if u.ReviseChecks && len(sources) == 0 {
		return nil, sourceRequired("revise_checks")
	}
	for _, src := range sources {
		if !slices.ContainsFunc(t.Sources, func(x events.TaskContextSource) bool { return x.MessageID == src.MessageID }) {
			t.Sources = append(t.Sources, src)
		}
	}
	if len(t.Sources) > MaxItems {
		return nil, tooMany("source_message_ids", len(t.Sources))
	}
	var revised []string
	if err := mergeTask(&t, u, &revised); err != nil {
		return nil, err
	}
	return []events.Payload{events.TaskContextUpdated{SessionID: u.SessionID, Revision: s.revision + 1,
		RevisedCheckIDs: revised, TaskContext: t}}, nil
}

// mergeTask applies the fields both actions share: lists merged, checks merged by id, the
// decision owner and the status. revised is nil for a new task (no definition to revise).
func mergeTask(t *events.TaskContext, u Update, revised *[]string) error {
	var err error
	if t.AuthorizedActions, err = mergeList("authorized_actions", t.AuthorizedActions, u.AuthorizedActions); err != nil {
		return err
	}
	if t.Constraints, err = mergeList("constraints", t.Constraints, u.Constraints); err != nil {
		return err
	}
	if u.DecisionOwner != "" {
		if !slices.Contains(owners, u.DecisionOwner) {
			e := domain.Invalid("decision_owner", fmt.Sprintf("%q is not a decision owner", u.DecisionOwner),
				"use user (ask before deciding), agent (decide within the authorised actions) or parent (a delegating agent decides)")
			e.Valid = slices.Clone(owners)
			return e
		}
		t.DecisionOwner = u.DecisionOwner
	}
	for i, in := range u.Checks {
		if err := mergeCheck(t, fmt.Sprintf("checks[%d]", i), in, u.ReviseChecks, revised); err != nil {
			return err
		}
	}
	if len(t.Checks) > MaxItems {
		return tooMany("checks", len(t.Checks))
	}
	switch u.Status {
	case "", StatusActive:
	case StatusCompleted:
		if err := completable(*t); err != nil {
			return err
		}
		t.Status = StatusCompleted
	default:
		e := domain.Invalid("status", fmt.Sprintf("%q is not a status an update sets", u.Status), "use active or completed")
		e.Valid = slices.Clone(statuses)
		return e
	}
	return nil
}

// mergeList adds the new entries of add to have, in order, without repeats.
func mergeList(field string, have, add []string) ([]string, error) {
	for i, v := range add {
		v, err := checkText(fmt.Sprintf("%s[%d]", field, i), v, MaxItemRunes)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(have, v) {
			have = append(have, v)
		}
	}
	if len(have) > MaxItems {
		return nil, tooMany(field, len(have))
	}
	return have, nil
}

// mergeCheck applies one check input: a new check, a report on an existing one, or (with
// revise) a new definition of an existing one, which restarts it.
func mergeCheck(t *events.TaskContext, field string, in CheckInput, revise bool, revised *[]string) error {
	i := slices.IndexFunc(t.Checks, func(c events.TaskContextCheck) bool { return c.ID == in.ID })
	if in.ID == "" || i < 0 {
		return addCheck(t, field, in)
	}
	c := &t.Checks[i]
	redefines := (in.Title != "" && strings.TrimSpace(in.Title) != c.Title) || (in.Kind != "" && in.Kind != c.Kind)
	if redefines {
		if !revise || revised == nil {
			e := domain.NewError(CodeCheckDefinitionLocked,
				fmt.Sprintf("check %s is defined as %q (%s); an ordinary update cannot change that", c.ID, c.Title, c.Kind),
				"report its status and evidence only; to change what it checks, send revise_checks: true with the user message that asks for it in source_message_ids")
			e.Field, e.ID = field, c.ID
			return e
		}
		return reviseCheck(c, field, in, revised)
	}
	return reportCheck(c, field, in.Status, in.Evidence)
}

func addCheck(t *events.TaskContext, field string, in CheckInput) error {
	if !slices.Contains(checkKinds, in.Kind) {
		e := domain.Invalid(field+".kind", fmt.Sprintf("%q is not a check kind", in.Kind),
			"a new check needs kind delivery (the work is done) or safety (something that must not happen did not)")
		e.Valid = slices.Clone(checkKinds)
		return e
	}
	title, err := checkText(field+".title", in.Title, MaxItemRunes)
	if err != nil {
		return err
	}
	id := in.ID
	if id == "" {
		id = nextCheckID(t.Checks)
	} else if err := domain.CheckID(field+".id", id); err != nil {
		return err
	}
	c := events.TaskContextCheck{ID: id, Kind: in.Kind, Title: title, Status: CheckPending}
	if err := reportCheck(&c, field, in.Status, in.Evidence); err != nil {
		return err
	}
	t.Checks = append(t.Checks, c)
	return nil
}

// reviseCheck gives an existing check a new definition: pending again, old evidence gone,
// because evidence for the old definition proves nothing about the new one.
func reviseCheck(c *events.TaskContextCheck, field string, in CheckInput, revised *[]string) error {
	if in.Status != "" && in.Status != CheckPending || in.Evidence != "" {
		return domain.Invalid(field+".status", "a revised check restarts pending with no evidence",
			"revise it in this call and report its result in a later update")
	}
	if in.Kind != "" {
		if !slices.Contains(checkKinds, in.Kind) {
			e := domain.Invalid(field+".kind", fmt.Sprintf("%q is not a check kind", in.Kind), "use delivery or safety")
			e.Valid = slices.Clone(checkKinds)
			return e
		}
		c.Kind = in.Kind
	}
	if in.Title != "" {
		title, err := checkText(field+".title", in.Title, MaxItemRunes)
		if err != nil {
			return err
		}
		c.Title = title
	}
	c.Status, c.Evidence = CheckPending, ""
	*revised = append(*revised, c.ID)
	return nil
}

// reportCheck sets a check's status and evidence; a passed check needs its evidence.
func reportCheck(c *events.TaskContextCheck, field, status, evidence string) error {
	if evidence != "" {
		ev, err := checkText(field+".evidence", evidence, MaxItemRunes)
		if err != nil {
			return err
		}
		c.Evidence = ev
	}
	if status != "" {
		if !slices.Contains(checkStatuses, status) {
			e := domain.Invalid(field+".status", fmt.Sprintf("%q is not a check status", status), "use pending, passed or failed")
			e.Valid = slices.Clone(checkStatuses)
			return e
		}
		c.Status = status
	}
	if c.Status == CheckPassed && c.Evidence == "" {
		e := domain.Invalid(field+".evidence", fmt.Sprintf("check %s is passed without evidence", c.ID),
			"give the evidence that it passed (a [verification rcp_…] id, a command and its result, the files inspected)")
		e.ID = c.ID
		return e
	}
	return nil
}

// completable is the completion rule: every check passed, and a delivery task has at least
// one passed delivery check, because negative safety checks alone prove nothing was delivered.
func completable(t events.TaskContext) *domain.Error {
	var open []string
	delivered := false
	for _, c := range t.Checks {
		if c.Status != CheckPassed {
			open = append(open, fmt.Sprintf("%s (%s)", c.ID, c.Status))
		}
		delivered = delivered || (c.Kind == CheckDelivery && c.Status == CheckPassed)
	}
	var msg, fix string
	switch {
	case len(open) > 0:
		msg = "not every check passed: " + strings.Join(open, ", ")
		fix = "finish the work and report each check passed with its evidence, then complete the task"
	case len(t.Checks) == 0:
		msg = "the task has no checks, so nothing shows it is done"
		fix = "add the checks that prove the task done and report them passed with evidence"
	case t.TaskKind == KindDelivery && !delivered:
		msg = "a delivery task is not complete on negative safety checks alone"
		fix = "add a delivery check that proves the work was delivered and report it passed with evidence"
	default:
		return nil
	}
	e := domain.NewError(CodeTaskIncomplete, msg, fix)
	e.Field, e.ID = "status", t.TaskID
	return e
}

func nextCheckID(checks []events.TaskContextCheck) string {
	for n := len(checks) + 1; ; n++ {
		id := fmt.Sprintf("check-%d", n)
		if !slices.ContainsFunc(checks, func(c events.TaskContextCheck) bool { return c.ID == id }) {
			return id
		}
	}
}

func sourceRequired(what string) *domain.Error {
	e := domain.NewError(CodeSourceRequired, what+" needs the user message that asks for it",
		"put the id of that durable user message in source_message_ids (task_context action=get lists them as user_messages)")
	e.Field = "source_message_ids"
	return e
}

func tooMany(field string, n int) *domain.Error {
	return domain.Invalid(field, fmt.Sprintf("has %d entries, more than the limit of %d", n, MaxItems),
		"keep the task context short: merge entries, or start a new task with action=replace")
}

// checkText validates one text field: UTF-8, not blank, within max runes, no control
// characters other than line breaks and tabs. It returns the text trimmed.
func checkText(field, v string, max int) (string, *domain.Error) {
	if !utf8.ValidString(v) {
		return "", domain.Invalid(field, "is not valid UTF-8", "send it as UTF-8 text")
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", domain.Invalid(field, "is empty", "give a short non-empty text")
	}
	if n := utf8.RuneCountInString(v); n > max {
		return "", domain.Invalid(field, fmt.Sprintf("has %d characters, more than the limit of %d", n, max),
			fmt.Sprintf("shorten it to at most %d characters", max))
	}
	if strings.IndexFunc(v, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) >= 0 {
		return "", domain.Invalid(field, "contains a control character", "remove it")
	}
	return v, nil
}
