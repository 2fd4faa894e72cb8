package app

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/goal"
)

// The user's Goal commands (docs/goals.md): `zuno goal complete|resume|answer`, and the
// /goal lines of zuno run. A completion goes through the same barrier as goal_update.

// CompleteGoal completes the session's Goal through the completion barrier. With expected
// nil the revision is the one read just before: a user acts on the Goal as it is.
// evidence names, by criterion id, the receipt that meets each criterion needing evidence.
func (c *Commands) CompleteGoal(ctx context.Context, meta commands.Meta, sessionID string, expected *uint64, evidence map[string]string) (commands.Result, error) {
	if err := c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.Result{}, err
	}
	if expected == nil {
		v, err := c.queries.Goal(ctx, sessionID)
		if err != nil {
			return commands.Result{}, err
		}
		if v != nil {
			rev := v.Revision
			expected = &rev
		}
	}
	return c.send(ctx, &commands.UpdateGoal{Meta: meta, SessionID: sessionID,
		Update: goal.Update{ExpectedRevision: expected, Status: "complete", Evidence: evidence}})
}

// ResumeGoal resumes the session's paused Goal; it never skips an open input request.
func (c *Commands) ResumeGoal(ctx context.Context, meta commands.Meta, sessionID string, expected *uint64) (commands.Result, error) {
	if err := c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.Result{}, err
	}
	return c.send(ctx, &commands.ResumeGoal{Meta: meta, SessionID: sessionID, Resume: goal.Resume{ExpectedRevision: expected}})
}

// AnswerGoalInput answers the Goal's open input request requestID; only that exact request
// is satisfied (docs/goals.md, "Input requests").
func (c *Commands) AnswerGoalInput(ctx context.Context, meta commands.Meta, sessionID, requestID, text string) (commands.Result, error) {
	if err := c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.Result{}, err
	}
	return c.send(ctx, &commands.AnswerGoalInput{Meta: meta, SessionID: sessionID, Answer: goal.Answer{RequestID: requestID, Answer: text}})
}
