package projections

import (
	"context"
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// Goals is the "goal" table: one row per Goal of a root session, as it is after its last
// event (docs/readmodels.md, docs/goals.md). Every goal event but the progress observation
// carries the whole Goal and its revision, so it writes the row's columns whole; an
// observation sets the owner and the progress columns. Every write gives the same row when
// applied again.
type Goals struct{}

func (Goals) Name() string     { return "goal" }
func (Goals) Tables() []string { return []string{"goal"} }

func (Goals) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.GoalCreated:
		return upsertGoal(ctx, tx, ev, e.SessionID, e.Revision, e.Goal, nil)
	case events.GoalUpdated:
		return upsertGoal(ctx, tx, ev, e.SessionID, e.Revision, e.Goal, nil)
	case events.GoalInputRequested:
		return upsertGoal(ctx, tx, ev, e.SessionID, e.Revision, e.Goal, nil)
	case events.GoalInputAnswered:
		return upsertGoal(ctx, tx, ev, e.SessionID, e.Revision, e.Goal, nil)
	case events.GoalResumed:
		return upsertGoal(ctx, tx, ev, e.SessionID, e.Revision, e.Goal, nil)
	case events.GoalCompleted:
		return upsertGoal(ctx, tx, ev, e.SessionID, e.Revision, e.Goal, &e.JobsRevision)
	case events.GoalProgressObserved:
		owner := nullable(e.TurnID)
		if e.Outcome == events.ProgressNoProgress {
			owner = nil // the cycle ended (domain/goal)
		}
		return tx.Exec(ctx, `UPDATE goal SET owner_turn_id = ?, progress_fingerprint = ?, progress_repeats = ?, progress_outcome = ?,
			time_updated = ? WHERE session_id = ? AND goal_id = ?`,
			owner, e.Fingerprint, e.Repeats, e.Outcome, tx.eventTime(ev), e.SessionID, e.GoalID)
	}
	return nil
}

func upsertGoal(ctx context.Context, tx *Tx, ev events.Recorded, sessionID string, revision uint64, g events.Goal, jobsRevision *int64) error {
	criteria := g.Criteria
	if criteria == nil {
		criteria = []events.GoalCriterion{}
	}
	cj, err := json.Marshal(criteria)
	if err != nil {
		return err
	}
	var reqID, question, completed, jobs any
	if w := g.Waiting; w != nil {
		reqID, question = w.RequestID, w.Question
	}
	at := tx.eventTime(ev)
	if jobsRevision != nil {
		completed, jobs = at, *jobsRevision
	}
	return tx.Exec(ctx, `INSERT INTO goal (session_id, goal_id, revision, objective, status, owner_turn_id, criteria,
			waiting_request_id, waiting_question, jobs_revision, time_created, time_updated, time_completed)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, goal_id) DO UPDATE SET revision = excluded.revision, objective = excluded.objective,
			status = excluded.status, owner_turn_id = excluded.owner_turn_id, criteria = excluded.criteria,
			waiting_request_id = excluded.waiting_request_id, waiting_question = excluded.waiting_question,
			jobs_revision = excluded.jobs_revision, time_updated = excluded.time_updated, time_completed = excluded.time_completed`,
		sessionID, g.GoalID, int64(revision), g.Objective, g.Status, nullable(g.OwnerTurnID), string(cj),
		reqID, question, jobs, at, at, completed)
}
