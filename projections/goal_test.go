package projections_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/events"
)

const goalRows = `SELECT goal_id, revision, status, owner_turn_id, waiting_request_id, jobs_revision, criteria
	FROM goal WHERE session_id = ? ORDER BY goal_id`

// The goal table follows a Goal through its life, written by the real handlers: created,
// paused for input, answered, completed through the barrier; a second Goal is a row of its
// own. On SQLite and PostgreSQL.
func testGoalRows(t *testing.T, e *env) {
	ctx := context.Background()
	const session = "ses_goal"
	h := commands.NewHandlers(e.store, registry, commands.SystemClock{}, nil)
	step := func(name string, res commands.Result, err error, want ...string) {
		t.Helper()
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := e.runner.CatchUp(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantRows(t, "goal after "+name, e.query(t, goalRows, session), want)
	}
	meta := func(id string) commands.Meta { return commands.Meta{CommandID: id, Actor: "user"} }
	rev := func(n uint64) *uint64 { return &n }
	obj := "Ship the fix"
	crit := []goal.CriterionInput{{ID: "docs", Text: "documented"}}
	res, err := h.UpdateGoal(ctx, &commands.UpdateGoal{Meta: meta("g1"), SessionID: session,
		Update: goal.Update{TurnID: "turn_1", Objective: &obj, Criteria: &crit}})
	const criteria = `[{"id":"docs","text":"documented","needsEvidence":false}]`
	step("create", res, err, "goal-1|1|active|turn_1|NULL|NULL|"+criteria)
	res, err = h.RequestGoalInput(ctx, &commands.RequestGoalInput{Meta: meta("g2"), SessionID: session,
		Request: goal.RequestInput{TurnID: "turn_1", RequestID: "req_1", ExpectedRevision: 1, Question: "Which DB?"}})
	step("request", res, err, "goal-1|2|paused|turn_1|req_1|NULL|"+criteria)
	res, err = h.AnswerGoalInput(ctx, &commands.AnswerGoalInput{Meta: meta("g3"), SessionID: session,
		Answer: goal.Answer{RequestID: "req_1", Answer: "postgres"}})
	step("answer", res, err, "goal-1|3|active|NULL|NULL|NULL|"+criteria)
	res, err = h.UpdateGoal(ctx, &commands.UpdateGoal{Meta: meta("g4"), SessionID: session,
		Update: goal.Update{ExpectedRevision: rev(3), Status: events.GoalComplete}})
	step("complete", res, err, "goal-1|4|complete|NULL|NULL|-1|"+criteria)
	obj2 := "Ship the next one"
	res, err = h.UpdateGoal(ctx, &commands.UpdateGoal{Meta: meta("g5"), SessionID: session,
		Update: goal.Update{ExpectedRevision: rev(4), Objective: &obj2}})
	step("second goal", res, err, "goal-1|4|complete|NULL|NULL|-1|"+criteria, "goal-2|5|active|NULL|NULL|NULL|[]")
}

func TestGoalRowsSQLite(t *testing.T)   { testGoalRows(t, sqliteEnv(t)) }
func TestGoalRowsPostgres(t *testing.T) { testGoalRows(t, postgresEnv(t)) }
