package projections

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// Questions is the "question" table: one row per published request, as it is after its last
// event (docs/questions.md, docs/readmodels.md). Each event carries the request's resulting
// revision; an answer carries only the items it answered, which are merged into the row's
// answers, so the row's status is decided here from the items and the answers as the domain
// decides it (question.Request.Status). Every write gives the same row when applied again.
type Questions struct{}

func (Questions) Name() string     { return "question" }
func (Questions) Tables() []string { return []string{"question"} }

func (Questions) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	at := tx.eventTime(ev)
	switch e := p.(type) {
	case events.QuestionPublished:
		return publishQuestion(ctx, tx, at, e)
	case events.QuestionAnswered:
		return answerQuestion(ctx, tx, at, e)
	case events.QuestionDeferred:
		return tx.Exec(ctx, `UPDATE question SET deferred = ?, revision = ?, time_updated = ? WHERE request_id = ?`,
			e.Reason, e.Revision, at, e.RequestID)
	case events.QuestionVoided:
		return tx.Exec(ctx, `UPDATE question SET status = ?, void_reason = ?, revision = ?, time_updated = ? WHERE request_id = ?`,
			question.StatusVoided, e.Reason, e.Revision, at, e.RequestID)
	}
	return nil
}

func publishQuestion(ctx context.Context, tx *Tx, at string, e events.QuestionPublished) error {
	items, err := json.Marshal(e.Items)
	if err != nil {
		return err
	}
	var planExit any
	if e.PlanExit != nil {
		b, err := json.Marshal(e.PlanExit)
		if err != nil {
			return err
		}
		planExit = string(b)
	}
	return tx.Exec(ctx, `INSERT INTO question (request_id, session_id, kind, mode, tool, call_id, turn_id, agent, title,
			items, answers, status, revision, defer_at, countdown_at, plan_exit, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (request_id) DO UPDATE SET session_id = excluded.session_id, kind = excluded.kind, mode = excluded.mode,
			tool = excluded.tool, call_id = excluded.call_id, turn_id = excluded.turn_id, agent = excluded.agent,
			title = excluded.title, items = excluded.items, answers = excluded.answers, status = excluded.status,
			revision = excluded.revision, deferred = NULL, defer_at = excluded.defer_at, countdown_at = excluded.countdown_at,
			void_reason = NULL, plan_exit = excluded.plan_exit, time_updated = excluded.time_updated`,
		e.RequestID, e.SessionID, e.Kind, e.Mode, e.Tool, e.CallID, nullable(e.TurnID), nullable(e.Agent), nullable(e.Title),
		string(items), question.StatusPending, e.Revision, nullable(e.DeferAt), nullable(e.CountdownAt), planExit, at, at)
}

// answerQuestion merges the answered items into the row's answers; the status follows from
// how many of the items have one.
func answerQuestion(ctx context.Context, tx *Tx, at string, e events.QuestionAnswered) error {
	var itemsJSON, answersJSON string
	if err := tx.get(ctx, &itemsJSON, `SELECT items FROM question WHERE request_id = ?`, e.RequestID); errors.Is(err, sql.ErrNoRows) {
		return nil // the publication is not projected (a rebuild from a truncated log)
	} else if err != nil {
		return err
	}
	if err := tx.get(ctx, &answersJSON, `SELECT answers FROM question WHERE request_id = ?`, e.RequestID); err != nil {
		return err
	}
	var items []events.QuestionItem
	answers := map[string]events.QuestionItemAnswer{}
	if err := json.Unmarshal([]byte(itemsJSON), &items); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(answersJSON), &answers); err != nil {
		return err
	}
	for _, a := range e.Answers {
		answers[a.ItemID] = a
	}
	b, err := json.Marshal(answers)
	if err != nil {
		return err
	}
	status := question.StatusPartial
	if len(answers) >= len(items) {
		status = question.StatusAnswered
	}
	return tx.Exec(ctx, `UPDATE question SET answers = ?, status = ?, revision = ?, time_updated = ? WHERE request_id = ?`,
		string(b), status, e.Revision, at, e.RequestID)
}
