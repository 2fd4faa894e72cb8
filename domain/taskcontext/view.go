package taskcontext

import "github.com/zuno-run/zuno/events"

// MaxListedMessages bounds the user messages a view lists: the latest ones, which are the
// ones a task is likely to cite.
const MaxListedMessages = 20

// View is what task_context action=get returns (and every successful change).
type View struct {
	Revision uint64    `json:"revision"`
	Task     *TaskView `json:"task"`
	// Stale is set when a durable user message came after the task's newest source: the
	// current user instruction takes precedence over the recorded context.
	Stale bool `json:"stale"`
	// UserMessages are the session's latest durable user messages, the ids a source may cite.
	UserMessages []MessageView `json:"user_messages"`
}

// TaskView is a task as the model reads it.
type TaskView struct {
	TaskID            string       `json:"task_id"`
	Objective         string       `json:"objective"`
	TaskKind          string       `json:"task_kind"`
	Status            string       `json:"status"`
	Sources           []SourceView `json:"sources"`
	AuthorizedActions []string     `json:"authorized_actions"`
	Constraints       []string     `json:"constraints"`
	DecisionOwner     string       `json:"decision_owner,omitempty"`
	Checks            []CheckView  `json:"checks"`
}

// SourceView is one cited user message; MessageView one citable one.
type SourceView struct {
	MessageID string `json:"message_id"`
	Summary   string `json:"summary"`
}

type MessageView = SourceView

// CheckView is one check.
type CheckView struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Evidence string `json:"evidence,omitempty"`
}

// Describe returns the view of s given the session's durable messages in log order.
func Describe(s *State, messages []Message) View {
	v := View{Revision: s.revision, UserMessages: []MessageView{}}
	var user []Message
	for _, m := range messages {
		if m.Kind == MessageUser {
			user = append(user, m)
		}
	}
	for _, m := range user[max(0, len(user)-MaxListedMessages):] {
		v.UserMessages = append(v.UserMessages, MessageView{MessageID: m.ID, Summary: m.Summary})
	}
	if t := s.current; t != nil {
		v.Task = taskView(*t)
		v.Stale = t.Status == StatusActive && newerUserMessage(*t, user)
	}
	return v
}

// newerUserMessage reports whether a user message follows the task's newest source.
func newerUserMessage(t events.TaskContext, user []Message) bool {
	last := -1
	for i, m := range user {
		for _, src := range t.Sources {
			if src.MessageID == m.ID {
				last = max(last, i)
			}
		}
	}
	return last >= 0 && last < len(user)-1
}

func taskView(t events.TaskContext) *TaskView {
	v := &TaskView{TaskID: t.TaskID, Objective: t.Objective, TaskKind: t.TaskKind, Status: t.Status,
		Sources: make([]SourceView, len(t.Sources)), AuthorizedActions: nonNil(t.AuthorizedActions),
		Constraints: nonNil(t.Constraints), DecisionOwner: t.DecisionOwner, Checks: make([]CheckView, len(t.Checks))}
	for i, s := range t.Sources {
		v.Sources[i] = SourceView{MessageID: s.MessageID, Summary: s.Summary}
	}
	for i, c := range t.Checks {
		v.Checks[i] = CheckView(c)
	}
	return v
}
