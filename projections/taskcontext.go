package projections

import (
	"context"
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// TaskContexts is the "task_context" table: one row per task of a root session's task
// context (docs/task-context.md), as it is after the task's last event. A replace marks the
// replaced task's row replaced, keeping its last state as the record of how far it got.
type TaskContexts struct{}

func (TaskContexts) Name() string     { return "task_context" }
func (TaskContexts) Tables() []string { return []string{"task_context"} }

func (TaskContexts) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.TaskContextStarted:
		if e.ReplacedTaskID != "" {
			if err := tx.Exec(ctx, `UPDATE task_context SET status = 'replaced', time_updated = ? WHERE session_id = ? AND task_id = ?`,
				tx.eventTime(ev), e.SessionID, e.ReplacedTaskID); err != nil {
				return err
			}
		}
		return upsertTask(ctx, tx, ev, e.SessionID, e.Revision, e.TaskContext)
	case events.TaskContextUpdated:
		return upsertTask(ctx, tx, ev, e.SessionID, e.Revision, e.TaskContext)
	}
	return nil
}

func upsertTask(ctx context.Context, tx *Tx, ev events.Recorded, sessionID string, revision uint64, t events.TaskContext) error {
	cols := make([]string, 4)
	for i, v := range []any{emptyList(t.Sources), emptyList(t.AuthorizedActions), emptyList(t.Constraints), emptyList(t.Checks)} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		cols[i] = string(b)
	}
	at := tx.eventTime(ev)
	return tx.Exec(ctx, `INSERT INTO task_context (session_id, task_id, revision, objective, task_kind, status, sources,
			authorized_actions, constraints, decision_owner, checks, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, task_id) DO UPDATE SET revision = excluded.revision, objective = excluded.objective,
			task_kind = excluded.task_kind, status = excluded.status, sources = excluded.sources,
			authorized_actions = excluded.authorized_actions, constraints = excluded.constraints,
			decision_owner = excluded.decision_owner, checks = excluded.checks, time_updated = excluded.time_updated`,
		sessionID, t.TaskID, int64(revision), t.Objective, t.TaskKind, t.Status, cols[0], cols[1], cols[2],
		nullable(t.DecisionOwner), cols[3], at, at)
}

// emptyList writes a nil slice as [] rather than null: the columns are JSON arrays.
func emptyList[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
