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

// WorkCommands are the work commands as a turn's work tools call them: straight to their
// handlers (a tool call does not travel the bus), through the same metrics decorator as the
// bus's routes.
type WorkCommands struct{ h *Handlers }

// WorkCommands returns the decorated work commands.
func (h *Handlers) WorkCommands() WorkCommands { return WorkCommands{h} }

// UpdatePlan handles UpdatePlan, measured.
func (w WorkCommands) UpdatePlan(ctx context.Context, c *UpdatePlan) (Result, error) {
	return Measured(w.h.metrics, "UpdatePlan", w.h.UpdatePlan)(ctx, c)
}

// UpdateTodos handles UpdateTodos, measured.
func (w WorkCommands) UpdateTodos(ctx context.Context, c *UpdateTodos) (Result, error) {
	return Measured(w.h.metrics, "UpdateTodos", w.h.UpdateTodos)(ctx, c)
}

// Work reads the work state (a read, not a command: not measured here).
func (w WorkCommands) Work(ctx context.Context, sessionID string) (*work.State, error) {
	return w.h.Work(ctx, sessionID)
}
