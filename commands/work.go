package commands

import (
	"context"
	"fmt"
	"math"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// The work state (plan and todos) belongs to a root session: a child session's plan_update,
// todo_update, plan_get and todo_get act on its root's work stream (docs/turns.md, "Work
// state"). Readers fold that stream from its latest snapshot; a command folds it whole,
// because telling a re-delivered command from a new one needs the command's own events,
// which may lie before the snapshot.

// WorkSnapshotStream holds the snapshots of a root session's work state (events.WorkSnapshot).
func WorkSnapshotStream(rootSessionID string) string { return "work-snapshot-" + rootSessionID }

// workSnapshotEvery is how many work events lie between two snapshots (a variable for tests).
var workSnapshotEvery uint64 = 64

// maxSessionDepth bounds the walk from a session to its root: delegation nests a few levels,
// and a chain longer than this is a log no build wrote (or a cycle of parents).
const maxSessionDepth = 64

// backwardReader is what reading a stream's latest event needs; every event store has it.
type backwardReader interface {
	ReadStreamBackward(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
}

// RootSession follows a session's parents (recorded on its session.created.1) to the root
// session: the session itself when it has no parent, or when its stream holds nothing yet.
func RootSession(ctx context.Context, store StreamReader, registry *events.Registry, sessionID string) (string, error) {
	root, _, err := Ancestry(ctx, store, registry, sessionID)
	return root, err
}

// Ancestry is a session's root and how many parents lie between them (0 for a root).
func Ancestry(ctx context.Context, store StreamReader, registry *events.Registry, sessionID string) (root string, depth int, err error) {
	id := sessionID
	for depth = range maxSessionDepth {
		recs, err := store.ReadStream(ctx, SessionStream(id), 0, 1)
		if err != nil || len(recs) == 0 || recs[0].Type != events.TypeSessionCreated {
			return id, depth, err
		}
		p, err := registry.Decode(recs[0])
		if err != nil {
			return "", 0, err
		}
		parent := p.(events.SessionCreated).ParentSessionID
		if parent == "" {
			return id, depth, nil
		}
		id = parent
	}
	return "", 0, domain.Invalid("parent_session_id", fmt.Sprintf("session %s has more than %d ancestors (or its parents form a cycle)", sessionID, maxSessionDepth),
		"the log was not written by zuno; check the parentSessionId of the sessions' session.created.1 events")
}

// LoadWork folds the work stream of a root session from its latest snapshot, and returns the
// state and the last revision of the work stream folded into it (-1 for none).
func LoadWork(ctx context.Context, store StreamReader, registry *events.Registry, root string) (*work.State, int64, error) {
	st, from := &work.State{}, uint64(0)
	if b, ok := store.(backwardReader); ok {
		recs, err := b.ReadStreamBackward(ctx, WorkSnapshotStream(root), math.MaxUint64, 1)
		if err != nil {
			return nil, -1, fmt.Errorf("read the work snapshot of %s: %w", root, err)
		}
		if len(recs) == 1 {
			p, err := registry.Decode(recs[0])
			if err != nil {
				return nil, -1, err
			}
			if sn, ok := p.(events.WorkSnapshot); ok {
				st, from = work.Restore(sn), sn.WorkRevision+1
			}
		}
	}
	rev, err := Load(ctx, store, registry, WorkStream(root), from, func(_ events.Recorded, p events.Payload) error { return st.Evolve(p) })
	return st, rev, err
}

// updateWork runs a work command on the root session's work stream and, when its events
// cross a multiple of workSnapshotEvery, records a snapshot of the state after them.
func updateWork(ctx context.Context, h *Handlers, name string, meta Meta, root string, cmd work.Command, body any, view func(*work.State) any) Result {
	return h.workAppend(ctx, name, root, workExecution(meta, root, cmd), body, view)
}

// workAppend runs one command of the root's work stream (a plan, todo or Goal command) and,
// when its events cross a multiple of workSnapshotEvery, records a snapshot of the state
// after them.
func (h *Handlers) workAppend(ctx context.Context, name string, root string, x execution[*work.State], body any, view func(*work.State) any) Result {
	var after *work.State
	res := handle(ctx, h, name, x, body, func(s *work.State) any { after = s; return view(s) })
	if res.Error != nil || res.Duplicate || after == nil || res.Revision < 0 {
		return res
	}
	last := uint64(res.Revision)
	first := last + 1 - uint64(res.Events)
	if first/workSnapshotEvery != (last+1)/workSnapshotEvery {
		// Best effort: a snapshot only spares readers a longer fold, and the next one is
		// taken further on.
		_ = h.snapshotWork(ctx, root, last, after)
	}
	return res
}

// snapshotWork records st, the work state at revision rev of root's work stream. Its command
// id names the revision, so a snapshot is recorded once however often it is attempted.
func (h *Handlers) snapshotWork(ctx context.Context, root string, rev uint64, st *work.State) error {
	stream := WorkSnapshotStream(root)
	head := int64(-1)
	if b, ok := h.store.(backwardReader); ok {
		recs, err := b.ReadStreamBackward(ctx, stream, math.MaxUint64, 1)
		if err != nil {
			return err
		}
		if len(recs) == 1 {
			head = int64(recs[0].StreamRevision)
		}
	}
	id := fmt.Sprintf("work-snapshot/%s/%d", root, rev)
	dg, err := Digest("WorkSnapshot", id)
	if err != nil {
		return err
	}
	w := Writer{Store: h.store, Stream: stream, Meta: Meta{CommandID: id, Actor: "host", CorrelationID: root},
		Digest: dg, Clock: h.clock, Revision: head}
	_, err = w.Append(ctx, st.Snapshot(rev))
	return err
}

// workExecution prepares a command of a root session's work (plan and todos).
func workExecution(meta Meta, root string, cmd work.Command) execution[*work.State] {
	return execution[*work.State]{
		meta: meta, stream: WorkStream(root),
		newState: func() *work.State { return &work.State{} },
		decide:   func(s *work.State) ([]events.Payload, error) { return work.Decide(s, cmd) },
	}
}

func planView(s *work.State) any { return s.PlanView() }
func todoView(s *work.State) any { return s.TodoView() }

// Work reads the authoritative work state of a session's root from its stream (plan_get and
// todo_get read here, not from projections, so a model never sees a lagging plan).
func (h *Handlers) Work(ctx context.Context, sessionID string) (*work.State, error) {
	root, err := RootSession(ctx, h.store, h.registry, sessionID)
	if err != nil {
		return nil, err
	}
	st, _, err := LoadWork(ctx, h.store, h.registry, root)
	return st, err
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

// UpdateGoal handles UpdateGoal, measured: the goal tools share the work tools' port, the
// Goal being part of the work stream (docs/goals.md).
func (w WorkCommands) UpdateGoal(ctx context.Context, c *UpdateGoal) (Result, error) {
	return w.h.GoalCommands().UpdateGoal(ctx, c)
}

// RequestGoalInput handles RequestGoalInput, measured.
func (w WorkCommands) RequestGoalInput(ctx context.Context, c *RequestGoalInput) (Result, error) {
	return w.h.GoalCommands().RequestGoalInput(ctx, c)
}
