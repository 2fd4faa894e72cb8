package projections

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/zuno-run/zuno/events"
)

// TimeFormat is how read models store times: fixed width, so text order is time order.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// eventTime is ev's time as read models store it, spelt once per event: most projectors write
// it, several for the same event, and two spelt it for every event whatever its type.
func (t *Tx) eventTime(ev events.Recorded) string {
	// The same time.Time value (==, not only the same instant) is the same text.
	if t.time == "" || t.timeOf != ev.Metadata.Time {
		t.timeOf, t.time = ev.Metadata.Time, formatTime(ev.Metadata.Time)
	}
	return t.time
}

// AggregateID is the aggregate's own id, the stream name without its "<kind>-" prefix:
// forensic SQL selects a session's events by its session id (event.aggregate_id).
func AggregateID(stream string) string {
	if _, id, ok := strings.Cut(stream, "-"); ok {
		return id
	}
	return stream
}

// All returns the standard projectors, in the order they are applied.
func All() []Projector {
	return []Projector{EventLog{}, Sessions{}, WorkPlans{}, WorkItems{},
		Parts{}, PromptReceipts{}, ProviderRequests{}, Permissions{}, VerificationReceipts{}, Jobs{}, Inbox{}, TaskContexts{}, Goals{},
		Questions{}, PromptCheckpoints{}}
}

// EventLog is the "event" table: every event, queryable with json_extract. Where the read
// models share the log's database, "event" is a view over event_log with these same columns
// (adapters/readmodel), and the projector writes nothing.
type EventLog struct{}

func (EventLog) Name() string     { return "event" }
func (EventLog) Tables() []string { return []string{"event"} }

func (EventLog) Apply(ctx context.Context, tx *Tx, ev events.Recorded, _ events.Payload) error {
	if tx.IsView("event") {
		return nil
	}
	md, err := json.Marshal(ev.Metadata)
	if err != nil {
		return err
	}
	return tx.Exec(ctx, `INSERT INTO event (id, position, aggregate_id, stream, revision, type, data, metadata, time)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.ID, int64(ev.Position), AggregateID(ev.Stream), ev.Stream, int64(ev.StreamRevision), ev.Type,
		string(ev.Data), string(md), tx.eventTime(ev))
}

// Sessions is the "session" table. time_updated is the time of the session's last change: its
// title, a message, a turn started or finished.
type Sessions struct{}

func (Sessions) Name() string     { return "session" }
func (Sessions) Tables() []string { return []string{"session"} }

func (Sessions) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	at := tx.eventTime(ev)
	switch e := p.(type) {
	case events.SessionCreated:
		return tx.Exec(ctx, `INSERT INTO session (id, title, agent, parent_session_id, directory, message_count, time_created, time_updated)
			VALUES (?, ?, ?, ?, ?, 0, ?, ?)`, e.SessionID, e.Title, e.Agent, nullable(e.ParentSessionID), nullable(e.Directory), at, at)
	case events.SessionForked:
		return tx.Exec(ctx, `INSERT INTO session (id, title, agent, parent_session_id, directory, message_count, time_created, time_updated)
			VALUES (?, ?, ?, NULL, ?, ?, ?, ?)`, e.SessionID, e.Title, e.Agent, nullable(e.Directory), e.MessageCount, at, at)
	case events.SessionTitled:
		return tx.Exec(ctx, `UPDATE session SET title = ?, time_updated = ? WHERE id = ?`, e.Title, at, e.SessionID)
	case events.DirectoryChanged:
		return tx.Exec(ctx, `UPDATE session SET directory = ?, time_updated = ? WHERE id = ?`, e.Directory, at, e.SessionID)
	case events.UserMessageAppended:
		return tx.Exec(ctx, `UPDATE session SET message_count = message_count + 1, time_updated = ? WHERE id = ?`, at, e.SessionID)
	case events.TurnStarted:
		return tx.Exec(ctx, `UPDATE session SET status = 'open', time_updated = ? WHERE id = ?`, at, e.SessionID)
	case events.TurnSuspended:
		return tx.Exec(ctx, `UPDATE session SET status = 'suspended', time_updated = ? WHERE id = ?`, at, e.SessionID)
	case events.TurnResumed:
		return tx.Exec(ctx, `UPDATE session SET status = 'open', time_updated = ? WHERE id = ?`, at, e.SessionID)
	case events.TurnFinished:
		return tx.Exec(ctx, `UPDATE session SET status = ?, time_updated = ? WHERE id = ?`, e.Reason, at, e.SessionID)
	case events.SessionPruned:
		// A pruned session takes no turn again, so nothing sets its status after this.
		return tx.Exec(ctx, `UPDATE session SET status = ?, time_updated = ? WHERE id = ?`, PrunedStatus(e.Mode), at, e.SessionID)
	}
	return nil
}

// Statuses of a pruned session (session.status): lists leave these out unless asked.
const (
	StatusArchived = "archived"
	StatusDeleted  = "deleted"
)

// PrunedStatus is the session status a prune mode leaves.
func PrunedStatus(mode string) string {
	if mode == events.PruneDelete {
		return StatusDeleted
	}
	return StatusArchived
}

// WorkPlans is the "work_plan" table: one row per plan of a root session (superseded and
// popped sub-plans stay, with their status), revision being the plan revision of its last
// change.
type WorkPlans struct{}

func (WorkPlans) Name() string     { return "work_plan" }
func (WorkPlans) Tables() []string { return []string{"work_plan"} }

func (WorkPlans) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.WorkPlanCreated:
		return upsertPlan(ctx, tx, ev, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanPatched:
		return upsertPlan(ctx, tx, ev, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanStepsAppended:
		return upsertPlan(ctx, tx, ev, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanPushed:
		return upsertPlan(ctx, tx, ev, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanPopped:
		return upsertPlan(ctx, tx, ev, e.SessionID, e.Revision, e.WorkPlan)
	case events.WorkPlanSuperseded:
		return tx.Exec(ctx, `UPDATE work_plan SET status = ?, revision = ?, time_updated = ? WHERE session_id = ? AND plan_id = ?`,
			e.Status, int64(e.Revision), tx.eventTime(ev), e.SessionID, e.PlanID)
	}
	return nil
}

func upsertPlan(ctx context.Context, tx *Tx, ev events.Recorded, sessionID string, revision uint64, p events.WorkPlan) error {
	stepsJSON, err := planSteps(p)
	if err != nil {
		return err
	}
	at := tx.eventTime(ev)
	return tx.Exec(ctx, `INSERT INTO work_plan (session_id, plan_id, revision, title, status, depth, parent_plan_id, steps, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, plan_id) DO UPDATE SET revision = excluded.revision, title = excluded.title,
			status = excluded.status, depth = excluded.depth, parent_plan_id = excluded.parent_plan_id,
			steps = excluded.steps, time_updated = excluded.time_updated`,
		sessionID, p.PlanID, int64(revision), p.Title, p.Status, p.Depth, nullable(p.ParentPlanID), stepsJSON, at, at)
}

// planSteps is the steps column of a plan: a JSON array, never null.
func planSteps(p events.WorkPlan) (string, error) {
	steps := p.Steps
	if steps == nil {
		steps = []events.WorkPlanStep{}
	}
	stepsJSON, err := json.Marshal(steps)
	return string(stepsJSON), err
}

// WorkItems is the "work_item" table: the Todo items of a root session.
type WorkItems struct{}

func (WorkItems) Name() string     { return "work_item" }
func (WorkItems) Tables() []string { return []string{"work_item"} }

func (WorkItems) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	e, ok := p.(events.WorkTodoUpdated)
	if !ok {
		return nil
	}
	at := tx.eventTime(ev)
	for _, it := range e.Items {
		depsJSON, err := itemDependencies(it)
		if err != nil {
			return err
		}
		if err := upsertItem(ctx, tx, e.SessionID, it, depsJSON, at); err != nil {
			return err
		}
	}
	return nil
}

// itemDependencies is the dependencies column of an item: a JSON array, never null.
func itemDependencies(it events.WorkItem) (string, error) {
	deps := it.Dependencies
	if deps == nil {
		deps = []string{}
	}
	depsJSON, err := json.Marshal(deps)
	return string(depsJSON), err
}

func upsertItem(ctx context.Context, tx *Tx, sessionID string, it events.WorkItem, depsJSON, at string) error {
	// time_created is set by the first event that names the item and never changed.
	return tx.Exec(ctx, `INSERT INTO work_item (id, session_id, title, status, owner, dependencies, plan_step_id, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, id) DO UPDATE SET title = excluded.title, status = excluded.status,
			owner = excluded.owner, dependencies = excluded.dependencies, plan_step_id = excluded.plan_step_id,
			time_updated = excluded.time_updated`,
		it.ID, sessionID, it.Title, it.Status, nullable(it.Owner), depsJSON, nullable(it.PlanStepID), at, at)
}

// nullable stores "" as NULL, so "IS NULL" means "not set" in SQL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
