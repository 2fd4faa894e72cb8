package projections_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/domain/taskcontext"
)

// taskContextSteps are a session's task context as the aggregate decides it: a delivery task
// created from a user message, a constraint merged in, a check reported passed, then a
// replace that starts an inspection task.
func taskContextSteps(t *testing.T, sid string) []turnStep {
	t.Helper()
	msgs := map[string]taskcontext.Message{"msg_1": {ID: "msg_1", Kind: taskcontext.MessageUser, Summary: "Fix the login bug"}}
	rev := func(n uint64) *uint64 { return &n }
	s := &taskcontext.State{}
	var steps []turnStep
	for _, u := range []taskcontext.Update{
		{Action: "update", Objective: "Fix login", TaskKind: "delivery", SourceMessageIDs: []string{"msg_1"},
			Checks: []taskcontext.CheckInput{{ID: "tests", Kind: "delivery", Title: "login tests pass"}}},
		{Action: "update", ExpectedRevision: rev(1), Constraints: []string{"no announcement"}, DecisionOwner: "user"},
		{Action: "update", ExpectedRevision: rev(2), Checks: []taskcontext.CheckInput{{ID: "tests", Status: "passed", Evidence: "rcp_1"}}},
		{Action: "replace", ExpectedRevision: rev(3), Objective: "Audit logout", TaskKind: "inspection", SourceMessageIDs: []string{"msg_1"}},
	} {
		u.SessionID, u.Messages = sid, msgs
		ps, err := taskcontext.Decide(s, u)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if err := s.Evolve(p); err != nil {
				t.Fatal(err)
			}
		}
		steps = append(steps, turnStep{stream: "task-context-" + sid, payloads: ps})
	}
	return steps
}

// The task_context table: one row per task, the replaced one kept with its last state; its
// JSON columns read with json_extract alike on both databases, through zuno db's reader.
func testTaskContextRows(t *testing.T, e *env) {
	ctx := context.Background()
	writeSteps(t, e.store, "ses_t", &turnClock{}, taskContextSteps(t, "ses_t"), nil)
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := userRows(e.rm, ctx, `SELECT task_id, revision, task_kind, status, objective, decision_owner,
		json_extract(constraints, '$[0]') AS c, json_extract(checks, '$[0].status') AS s, json_extract(sources, '$[0].messageId') AS m
		FROM task_context WHERE session_id = 'ses_t' ORDER BY task_id`, readmodel.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "task_context", rowsText(res.Rows), []string{
		"task-1|3|delivery|replaced|Fix login|user|no announcement|passed|msg_1",
		"task-2|4|inspection|active|Audit logout|NULL|NULL|NULL|msg_1",
	})
}

func TestTaskContextRowsSQLite(t *testing.T)   { testTaskContextRows(t, sqliteEnv(t)) }
func TestTaskContextRowsPostgres(t *testing.T) { testTaskContextRows(t, postgresEnv(t)) }
