// Package taskcontext is the managed context of a long task (docs/task-context.md): its
// objective, its kind (delivery or inspection), the durable user messages that authorise it,
// what is understood as authorised and what is forbidden, who owns decisions, and its
// delivery and safety checks. One stream per root session ("task-context-<rootSessionId>").
//
// It is bounded application context and nothing more: it grants no permission, resumes no
// goal and triggers no continuation. The rules that make it trustworthy live here:
//   - an update keeps what it omits and merges constraints and checks, so a later "do not
//     announce it" never erases the earlier fix objective;
//   - only durable user messages of the session authorise it (never a background report,
//     a peer session's message or a compaction marker);
//   - an ordinary update cannot rewrite a check's definition; an explicit revise_checks with
//     a user source can, and resets the revised checks to pending with their evidence cleared;
//   - a delivery task is not complete on negative safety checks alone;
//   - a delegated child hands decisions to its parent and never rewrites the root's context.
//
// Like every aggregate it is pure: Decide reads the state and the host-resolved messages the
// command carries, never the store.
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

// Actions of the task_context tool; get is a read, the other two are commands.
const (
	ActionGet     = "get"
	ActionUpdate  = "update"
	ActionReplace = "replace"
)

// Task kinds: a delivery task changes something and is judged by its delivery checks; an
// inspection task only looks. The tools' generic intent argument is a UI label, never a kind.
const (
	KindDelivery   = "delivery"
	KindInspection = "inspection"
)

// Check kinds and statuses. A safety check is negative ("nothing was published"): passing it
// proves harm was avoided, not that the work was delivered.
const (
	CheckDelivery = "delivery"
	CheckSafety   = "safety"

	CheckPending = "pending"
	CheckPassed  = "passed"
	CheckFailed  = "failed"
)

// Task statuses: replaced is set by a later replace, never by the model.
const (
	StatusActive    = "active"
	StatusCompleted = "completed"
	StatusReplaced  = "replaced"
)

// Decision owners: who decides what the task leaves open.
const (
	OwnerUser   = "user"
	OwnerAgent  = "agent"
	OwnerParent = "parent"
)

// Stable error codes of the task context.
const (
	// CodeSourceRequired: a new task, an objective change or a check revision names no durable
	// user message as its source.
	CodeSourceRequired = "source_required"
	// CodeSourceNotUser: a source id is not a durable user message of this session (unknown, a
	// background report, a peer session's message, a compaction marker).
	CodeSourceNotUser = "source_not_user"
	// CodeCheckDefinitionLocked: an ordinary update tried to change a check's definition.
	CodeCheckDefinitionLocked = "check_definition_locked"
	// CodeTaskIncomplete: status completed was refused (a check is not passed, or a delivery
	// task has only negative safety checks passed).
	CodeTaskIncomplete = "task_incomplete"
	// CodeChildContext: a delegated child tried to write the task context, which its root owns.
	CodeChildContext = "child_context"
)

// Limits keep the context small enough to sit in a prompt and to be read whole.
const (
	MaxObjectiveRunes = 2000
	MaxItemRunes      = 500
	MaxItems          = 32 // sources, authorized actions, constraints, checks: each
	MaxSummaryRunes   = 200
)

var (
	actions       = []string{ActionGet, ActionUpdate, ActionReplace}
	kinds         = []string{KindDelivery, KindInspection}
	checkKinds    = []string{CheckDelivery, CheckSafety}
	checkStatuses = []string{CheckPending, CheckPassed, CheckFailed}
	owners        = []string{OwnerUser, OwnerAgent, OwnerParent}
	statuses      = []string{StatusActive, StatusCompleted}
)

// Enumerations for tool schemas.
func Actions() []string       { return slices.Clone(actions) }
func Kinds() []string         { return slices.Clone(kinds) }
func CheckKinds() []string    { return slices.Clone(checkKinds) }
func CheckStatuses() []string { return slices.Clone(checkStatuses) }
func Owners() []string        { return slices.Clone(owners) }
func Statuses() []string      { return slices.Clone(statuses) }

// Message is a durable message of the session as the host resolved it from the log: the only
// thing a source id can name. Kind is MessageUser for the user's own input (a typed message
// or a steering input); everything else is never an authorising source.
type Message struct {
	ID      string
	Kind    string
	Summary string
}

// Message kinds.
const (
	MessageUser       = "user"
	MessageTaskReport = "task_report"
	MessagePeer       = "peer_message"
)

// Summarize is the host's summary of a message text: whitespace collapsed, cut at
// MaxSummaryRunes with the count of what was left out, so the summary always says the
// message had more.
func Summarize(text string) string {
	s := strings.Join(strings.FieldsFunc(text, unicode.IsSpace), " ")
	if n := utf8.RuneCountInString(s); n > MaxSummaryRunes {
		r := []rune(s)
		return fmt.Sprintf("%s… (+%d characters)", string(r[:MaxSummaryRunes]), n-MaxSummaryRunes)
	}
	return s
}

// State is the task context of one root session. The zero value has no task.
type State struct {
	sessionID string
	revision  uint64
	taskSeq   int
	current   *events.TaskContext
}

// Revision is what get reports and update's expected_revision names.
func (s *State) Revision() uint64 { return s.revision }

// Current is the current task, nil before the first; read it, never change it.
func (s *State) Current() *events.TaskContext { return s.current }

// Evolve applies one event of the task context stream.
func (s *State) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.TaskContextStarted:
		s.sessionID, s.revision = e.SessionID, e.Revision
		t := clone(e.TaskContext)
		s.current = &t
		s.taskSeq++
	case events.TaskContextUpdated:
		s.sessionID, s.revision = e.SessionID, e.Revision
		t := clone(e.TaskContext)
		s.current = &t
	default:
		return domain.UnexpectedEvent("task_context", p)
	}
	return nil
}

func clone(t events.TaskContext) events.TaskContext {
	t.Sources = nonNil(slices.Clone(t.Sources))
	t.AuthorizedActions = nonNil(slices.Clone(t.AuthorizedActions))
	t.Constraints = nonNil(slices.Clone(t.Constraints))
	t.Checks = nonNil(slices.Clone(t.Checks))
	return t
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
