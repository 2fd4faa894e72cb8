package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// workExecution prepares a command of a root session's work (plan and todos).
func workExecution(meta Meta, sessionID string, cmd work.Command) execution[*work.State] {
	return execution[*work.State]{
		meta: meta, stream: WorkStream(sessionID),
		newState: func() *work.State { return &work.State{} },
		decide:   func(s *work.State) ([]events.Payload, error) { return work.Decide(s, cmd) },
	}
}

func planView(s *work.State) any { return s.PlanView() }
func todoView(s *work.State) any { return s.TodoView() }

// Work reads the authoritative work state of a root session from its stream (plan_get and
// todo_get read here, not from projections, so a model never sees a lagging plan).
func (h *Handlers) Work(ctx context.Context, sessionID string) (*work.State, error) {
	x := execution[*work.State]{store: h.store, registry: h.registry, stream: WorkStream(sessionID),
		newState: func() *work.State { return &work.State{} }}
	l, err := x.load(ctx)
	return l.state, err
}
