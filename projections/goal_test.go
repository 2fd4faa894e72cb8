package projections_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/events"
)

const goalRows = `SELECT goal_id, revision, status, owner_turn_id, waiting_request_id, jobs_revision, criteria
	FROM goal WHERE session_id = ? ORDER BY goal_id`

// The goal table follows a Goal through its life, decided by the domain as the handlers do:
// created, paused for input, answered, completed through the barrier (the job ledger empty,
// revision -1); a second Goal is a row of its own. On SQLite and PostgreSQL.
func testGoalRows(t *testing.T, e *env) {
	ctx := context.Background()
	const session = "ses_goal"
	st := &goal.State{}
	var steps []turnStep
	wants := map[string][]string{}
	step := func(name string, cmd any, want ...string) {
		t.Helper()
		ps, err := goal.Decide(st, cmd, goal.Facts{JobsRevision: -1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range ps {
			if err := st.Evolve(p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		steps = append(steps, turnStep{name: name, stream: "work-" + session, payloads: ps})
		wants[name] = want
	}
	rev := func(n uint64) *uint64 { return &n }
	obj, obj2 := "Ship the fix", "Ship the next one"
	crit := []goal.CriterionInput{{ID: "docs", Text: "documented"}}
	const criteria = `[{"id":"docs","text":"documented","needsEvidence":false}]`
	step("create", goal.Update{SessionID: session, TurnID: "turn_1", Objective: &obj, Criteria: &crit},
		"goal-1|1|active|turn_1|NULL|NULL|"+criteria)
	step("request", goal.RequestInput{SessionID: session, TurnID: "turn_1", RequestID: "req_1", ExpectedRevision: 1, Question: "Which DB?"},
		"goal-1|2|paused|turn_1|req_1|NULL|"+criteria)
	step("answer", goal.Answer{SessionID: session, RequestID: "req_1", Answer: "postgres"},
		"goal-1|3|active|NULL|NULL|NULL|"+criteria)
	step("complete", goal.Update{SessionID: session, ExpectedRevision: rev(3), Status: events.GoalComplete},
		"goal-1|4|complete|NULL|NULL|-1|"+criteria)
	step("second goal", goal.Update{SessionID: session, ExpectedRevision: rev(4), Objective: &obj2},
		"goal-1|4|complete|NULL|NULL|-1|"+criteria, "goal-2|5|active|NULL|NULL|NULL|[]")
	writeSteps(t, e.store, session, &turnClock{}, steps, func(name string) {
		if _, err := e.runner.CatchUp(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantRows(t, "goal after "+name, e.query(t, goalRows, session), wants[name])
	})
}

func TestGoalRowsSQLite(t *testing.T)   { testGoalRows(t, sqliteEnv(t)) }
func TestGoalRowsPostgres(t *testing.T) { testGoalRows(t, postgresEnv(t)) }
