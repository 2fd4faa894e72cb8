package app

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/goal"
)

// CodeGoalTurnOpen: a user's completion while the session's latest turn is open. The barrier
// reads the job ledger before it writes the work stream (two streams: docs/goals.md), and a
// task call of the open turn could admit a job in between; the model's own goal_update runs
// inside that turn, after its task calls, and is not refused.
const CodeGoalTurnOpen = "goal_turn_open"

// The user's Goal commands (docs/goals.md): `zuno goal complete|resume|answer`, and the
// /goal lines of zuno run. A completion goes through the same barrier as goal_update.

// CompleteGoal completes the session's Goal through the completion barrier. With expected
// nil the revision is the one read just before: a user acts on the Goal as it is.
// evidence names, by criterion id, the receipt that meets each criterion needing evidence.
func (c *Commands) CompleteGoal(ctx context.Context, meta commands.Meta, sessionID string, expected *uint64, evidence map[string]string) (commands.Result, error) {
	if err := c.queries.RequireSession(ctx, sessionID); err != nil {
		return commands.Result{}, err
	}
	info, err := c.queries.Session(ctx, sessionID)
	if err != nil {
		return commands.Result{}, err
	}
	if n := len(info.Turns); n > 0 && info.Turns[n-1].Status == queries.TurnOpen {
		e := domain.NewError(CodeGoalTurnOpen, fmt.Sprintf("turn %s of session %s is open: a task call of it may admit a job the completion barrier would not see",
			info.Turns[n-1].TurnID, sessionID),
			"wait for the turn to finish, or recover it with zuno run --session; then complete the Goal")
		e.ID = sessionID
		return commands.Result{}, e
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
