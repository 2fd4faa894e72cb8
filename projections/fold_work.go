package projections

import (
	"context"

	"github.com/zuno-run/zuno/events"
)

// rowKey is a row key of two text columns: (session_id, plan_id) or (session_id, id).
type rowKey struct{ session, id string }

// planRow is a work_plan row held by a rebuild's fold, typed as upsertPlan binds it.
type planRow struct {
	sessionID, planID string
	revision          int64
	title, status     string
	depth             int
	parent            any             // NULL or text
	plan              events.WorkPlan // the steps column is planSteps(plan), encoded when written
	steps             string
	created, updated  string
}

var planColumns = []string{"session_id", "plan_id", "revision", "title", "status", "depth", "parent_plan_id", "steps",
	"time_created", "time_updated"}

func planValues(r *planRow, args []any) []any {
	return append(args, r.sessionID, r.planID, r.revision, r.title, r.status, int64(r.depth), r.parent, r.steps, r.created, r.updated)
}

// planRefused: the steps column is JSON, which writes a NUL as an escape; revision and depth
// are INTEGERs.
func planRefused(r planRow) bool {
	return pastInt32(r.revision, int64(r.depth)) || anyNUL(r.sessionID, r.planID, r.title, r.status, r.created, r.updated) || hasNUL(r.parent)
}

// planFold is WorkPlans' rebuild-only mode (fold.go).
type planFold struct{ rows *rowFold[rowKey, planRow] }

func (WorkPlans) fold() fold {
	rows := newRowFold[rowKey](`work_plan`, planColumns, planValues, planRefused)
	rows.finish = func(r *planRow) (err error) {
		r.steps, err = planSteps(r.plan)
		return err
	}
	return &planFold{rows: rows}
}

func (f *planFold) flush(ctx context.Context, tx *Tx) error { return f.rows.flush(ctx, tx) }

func (f *planFold) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.WorkPlanCreated:
		return f.upsert(ctx, tx, ev, p, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanPatched:
		return f.upsert(ctx, tx, ev, p, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanStepsAppended:
		return f.upsert(ctx, tx, ev, p, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanPushed:
		return f.upsert(ctx, tx, ev, p, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanPopped:
		return f.upsert(ctx, tx, ev, p, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanSuperseded:
		// UPDATE work_plan SET status, revision, time_updated WHERE the key.
		switch r, state := f.rows.row(rowKey{e.SessionID, e.PlanID}); state {
		case rowAbsent:
			// The statement's UPDATE finds no row; it binds the values all the same.
			probe := planRow{sessionID: e.SessionID, planID: e.PlanID, status: e.Status, revision: int64(e.Revision)}
			if !f.rows.unheldable(&probe) {
				return nil
			}
		case rowHeld:
			next := *r
			next.status, next.revision, next.updated = e.Status, int64(e.Revision), tx.eventTime(ev)
			if !f.rows.unheldable(&next) {
				*r = next
				return nil
			}
			if err := f.rows.flush(ctx, tx); err != nil {
				return err
			}
		}
		return WorkPlans{}.Apply(ctx, tx, ev, p)
	}
	return nil
}

// upsert is upsertPlan's INSERT ... ON CONFLICT DO UPDATE on a held row: every column but the
// key and time_created takes the event's value. The steps are encoded once, when the row is
// written (a plan is revised several times).
func (f *planFold) upsert(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload, sessionID string,
	revision uint64, plan events.WorkPlan) error {
	k := rowKey{sessionID, plan.PlanID}
	r, state := f.rows.row(k)
	if state == rowWritten {
		return WorkPlans{}.Apply(ctx, tx, ev, p)
	}
	at := tx.eventTime(ev)
	next := planRow{sessionID: sessionID, planID: plan.PlanID, revision: int64(revision), title: plan.Title,
		status: plan.Status, depth: plan.Depth, parent: nullable(plan.ParentPlanID), plan: plan, created: at, updated: at}
	if f.rows.unheldable(&next) {
		if err := f.rows.flush(ctx, tx); err != nil {
			return err
		}
		if err := (WorkPlans{}).Apply(ctx, tx, ev, p); err != nil {
			return err
		}
		f.rows.wrote(k)
		return nil
	}
	if state == rowAbsent {
		return f.rows.create(ctx, tx, k, next)
	}
	next.created = r.created
	*r = next
	return nil
}

// itemRow is a work_item row held by a rebuild's fold, typed as upsertItem binds it.
type itemRow struct {
	id, sessionID, title, status string
	owner                        any // NULL or text
	dependencies                 string
	planStepID                   any // NULL or text
	created, updated             string
}

var itemColumns = []string{"id", "session_id", "title", "status", "owner", "dependencies", "plan_step_id",
	"time_created", "time_updated"}

func itemValues(r *itemRow, args []any) []any {
	return append(args, r.id, r.sessionID, r.title, r.status, r.owner, r.dependencies, r.planStepID, r.created, r.updated)
}

// itemRefused: the dependencies column is JSON, which writes a NUL as an escape.
func itemRefused(r itemRow) bool {
	return anyNUL(r.id, r.sessionID, r.title, r.status, r.created, r.updated) || hasNUL(r.owner, r.planStepID)
}

// itemFold is WorkItems' rebuild-only mode (fold.go).
type itemFold struct{ rows *rowFold[rowKey, itemRow] }

func (WorkItems) fold() fold {
	return &itemFold{rows: newRowFold[rowKey](`work_item`, itemColumns, itemValues, itemRefused)}
}

func (f *itemFold) flush(ctx context.Context, tx *Tx) error { return f.rows.flush(ctx, tx) }

// Apply is WorkItems.Apply's upsert of each item, on held rows: every column but the key and
// time_created takes the item's value.
func (f *itemFold) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	e, ok := p.(events.WorkTodoUpdated)
	if !ok {
		return nil
	}
	at := tx.eventTime(ev)
	for _, it := range e.Items {
		deps, err := itemDependencies(it)
		if err != nil {
			return err
		}
		k := rowKey{e.SessionID, it.ID}
		r, state := f.rows.row(k)
		next := itemRow{id: it.ID, sessionID: e.SessionID, title: it.Title, status: it.Status, owner: nullable(it.Owner),
			dependencies: deps, planStepID: nullable(it.PlanStepID), created: at, updated: at}
		if state != rowWritten && f.rows.unheldable(&next) {
			if err := f.rows.flush(ctx, tx); err != nil {
				return err
			}
			state = rowWritten
		}
		if state == rowWritten {
			if err := upsertItem(ctx, tx, e.SessionID, it, deps, at); err != nil {
				return err
			}
			f.rows.wrote(k)
			continue
		}
		if state == rowAbsent {
			if err := f.rows.create(ctx, tx, k, next); err != nil {
				return err
			}
			continue
		}
		next.created = r.created
		*r = next
	}
	return nil
}
