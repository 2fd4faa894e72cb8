package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/taskcontext"
	"github.com/zuno-run/zuno/events"
)

// TaskContextStream holds the task context of a root session (docs/task-context.md).
func TaskContextStream(rootSessionID string) string { return "task-context-" + rootSessionID }

// UpdateTaskContext is task_context action=update|replace for the session SessionID (the
// caller's session: a child's is refused, its root owns the context).
type UpdateTaskContext struct {
	Meta
	SessionID string             `json:"sessionId"`
	Update    taskcontext.Update `json:"update"`
}

// UpdateTaskContext handles UpdateTaskContext; the view is the task context after it. The
// sources are checked against the root session's durable messages, read from its log here,
// so the domain decides on what the user actually sent.
func (h *Handlers) UpdateTaskContext(ctx context.Context, c *UpdateTaskContext) (Result, error) {
	root, depth, err := Ancestry(ctx, h.store, h.registry, c.SessionID)
	if err != nil {
		return Result{CommandID: c.CommandID, Stream: TaskContextStream(c.SessionID), Revision: -1, Error: NewErrorReply(err)}, nil
	}
	log, err := SessionMessages(ctx, h.store, h.registry, root)
	if err != nil {
		return Result{CommandID: c.CommandID, Stream: TaskContextStream(root), Revision: -1, Error: NewErrorReply(err)}, nil
	}
	u := c.Update
	u.SessionID, u.Child, u.Messages = root, depth > 0, make(map[string]taskcontext.Message, len(log))
	for _, m := range log {
		u.Messages[m.ID] = m
	}
	x := execution[*taskcontext.State]{meta: c.Meta, stream: TaskContextStream(root),
		newState: func() *taskcontext.State { return &taskcontext.State{} },
		decide:   func(s *taskcontext.State) ([]events.Payload, error) { return taskcontext.Decide(s, u) }}
	return handle(ctx, h, "UpdateTaskContext", x, c, func(s *taskcontext.State) any { return taskcontext.Describe(s, log) }), nil
}

// TaskContext reads the task context of a session's root from its stream, with the root's
// durable user messages (what a source may cite, and whether a newer one makes it stale).
func (h *Handlers) TaskContext(ctx context.Context, sessionID string) (taskcontext.View, error) {
	return LoadTaskContext(ctx, h.store, h.registry, sessionID)
}

// LoadTaskContext is the task context view of a session's root, read from its streams (the
// tool's get, zuno task-context show).
func LoadTaskContext(ctx context.Context, store StreamReader, registry *events.Registry, sessionID string) (taskcontext.View, error) {
	root, err := RootSession(ctx, store, registry, sessionID)
	if err != nil {
		return taskcontext.View{}, err
	}
	st := &taskcontext.State{}
	if _, err := Load(ctx, store, registry, TaskContextStream(root), 0, func(_ events.Recorded, p events.Payload) error {
		return st.Evolve(p)
	}); err != nil {
		return taskcontext.View{}, err
	}
	log, err := SessionMessages(ctx, store, registry, root)
	if err != nil {
		return taskcontext.View{}, err
	}
	return taskcontext.Describe(st, log), nil
}

// SessionMessages lists a session's durable messages in log order, each with what it is: the
// user's own input (typed, or a steering input), a job's report, or a peer session's message.
// Only the first kind can authorise a task context.
func SessionMessages(ctx context.Context, store StreamReader, registry *events.Registry, sessionID string) ([]taskcontext.Message, error) {
	var out []taskcontext.Message
	_, err := Load(ctx, store, registry, SessionStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error {
		if m, ok := p.(events.UserMessageAppended); ok {
			kind := taskcontext.MessageUser
			switch {
			case m.TaskReport != nil:
				kind = taskcontext.MessageTaskReport
			case m.PeerMessage != nil:
				kind = taskcontext.MessagePeer
			}
			out = append(out, taskcontext.Message{ID: m.MessageID, Kind: kind, Summary: taskcontext.Summarize(m.Text)})
		}
		return nil
	})
	return out, err
}

// UpdateTaskContext handles UpdateTaskContext, measured.
func (w WorkCommands) UpdateTaskContext(ctx context.Context, c *UpdateTaskContext) (Result, error) {
	return Measured(w.h.metrics, "UpdateTaskContext", w.h.UpdateTaskContext)(ctx, c)
}

// TaskContext reads the task context (a read, not measured).
func (w WorkCommands) TaskContext(ctx context.Context, sessionID string) (taskcontext.View, error) {
	return w.h.TaskContext(ctx, sessionID)
}
