package projections_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// questionSteps are one session's questions as the domain decides them (domain/question), so
// every event is one the runtime could append: a waiting question answered in two parts, a
// receipt question deferred and answered later, and a plan_exit voided.
func questionSteps(t *testing.T, sid string) []turnStep {
	t.Helper()
	b := &question.Book{}
	stream := "jobs-" + sid
	var steps []turnStep
	decide := func(name string, ps []events.Payload, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range ps {
			if err := b.Evolve(p); err != nil {
				t.Fatal(err)
			}
		}
		steps = append(steps, turnStep{name: name, payloads: ps, stream: stream})
	}
	db := events.QuestionItem{ID: "db", Question: "Which database?", Options: []events.QuestionOption{{Label: "SQLite"}, {Label: "Postgres"}}}
	name := events.QuestionItem{ID: "name", Question: "Its name?", Custom: true}
	pub := func(id, mode, deferAt string, items ...events.QuestionItem) question.Publish {
		return question.Publish{QuestionPublished: events.QuestionPublished{SessionID: sid, RequestID: id, Kind: events.QuestionKindQuestion,
			Mode: mode, Tool: "question", CallID: "call_" + id, TurnID: "turn_1", Agent: "plan", Items: items, DeferAt: deferAt}}
	}
	ps, err := question.DecidePublish(b, pub("qst_a", events.QuestionModeWait, "2026-12-01T09:02:00Z", db, name))
	decide("publish-a", ps, err)
	ps, err = question.DecideAnswer(b, question.Answer{SessionID: sid, RequestID: "qst_a", ExpectedRevision: 1, InputID: "in_1",
		Answers: []events.QuestionItemAnswer{{ItemID: "db", Selected: []string{"Postgres"}}}})
	decide("answer-a1", ps, err)
	ps, err = question.DecidePublish(b, pub("qst_b", events.QuestionModeReceipt, "", db))
	decide("publish-b", ps, err)
	ps, err = question.DecideDefer(b, question.Defer{SessionID: sid, RequestID: "qst_b", ExpectedRevision: 1, Reason: events.DeferLater})
	decide("later-b", ps, err)
	ps, err = question.DecideAnswer(b, question.Answer{SessionID: sid, RequestID: "qst_a", ExpectedRevision: 2, InputID: "in_2",
		Answers: []events.QuestionItemAnswer{{ItemID: "name", Text: "ledger"}}})
	decide("answer-a2", ps, err)
	pe := question.Publish{QuestionPublished: events.QuestionPublished{SessionID: sid, RequestID: "qst_c", Kind: events.QuestionKindPlanExit,
		Mode: events.QuestionModeReceipt, Tool: "plan_exit", CallID: "call_c", Items: []events.QuestionItem{{ID: question.PlanExitItem,
			Question: "Ship it?", Options: []events.QuestionOption{{Label: question.Approve}, {Label: question.Reject}}}},
		PlanExit: &events.PlanExitBinding{PlanID: "plan_1", PlanRevision: 4, Agent: "plan", Model: "scripted/x", TurnID: "turn_1"}}}
	ps, err = question.DecidePublish(b, pe)
	decide("publish-c", ps, err)
	ps, err = question.DecideVoid(b, question.Void{SessionID: sid, RequestID: "qst_c", Reason: "plan_changed"})
	decide("void-c", ps, err)
	return steps
}

const questionRows = `SELECT request_id, kind, mode, status, revision, COALESCE(deferred, '-'), COALESCE(defer_at, '-'),
	COALESCE(void_reason, '-'), answers FROM question WHERE session_id = ? ORDER BY time_created, request_id`

func testQuestionReadModel(t *testing.T, e *env) {
	ctx := context.Background()
	const sid = "ses_q"
	a1 := `{"db":{"itemId":"db","selected":["Postgres"]}}`
	a2 := `{"db":{"itemId":"db","selected":["Postgres"]},"name":{"itemId":"name","text":"ledger"}}`
	aPending := "qst_a|question|wait|pending|1|-|2026-12-01T09:02:00Z|-|{}"
	aPartial := "qst_a|question|wait|partial|2|-|2026-12-01T09:02:00Z|-|" + a1
	aDone := "qst_a|question|wait|answered|3|-|2026-12-01T09:02:00Z|-|" + a2
	bPending := "qst_b|question|receipt|pending|1|-|-|-|{}"
	bLater := "qst_b|question|receipt|pending|2|later|-|-|{}"
	cPending := "qst_c|plan_exit|receipt|pending|1|-|-|-|{}"
	cVoid := "qst_c|plan_exit|receipt|voided|2|-|-|plan_changed|{}"
	want := map[string][]string{
		"publish-a": {aPending}, "answer-a1": {aPartial}, "publish-b": {aPartial, bPending}, "later-b": {aPartial, bLater},
		"answer-a2": {aDone, bLater}, "publish-c": {aDone, bLater, cPending}, "void-c": {aDone, bLater, cVoid},
	}
	checked := 0
	writeSteps(t, e.store, sid, &turnClock{}, questionSteps(t, sid), func(step string) {
		if _, err := e.runner.CatchUp(ctx); err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
		checked++
		wantRows(t, "questions after "+step, e.query(t, questionRows, sid), want[step])
	})
	if checked != len(want) {
		t.Fatalf("checked %d of %d steps", checked, len(want))
	}
	// zuno db reads it (on Postgres as the reader role), json_extract alike on both.
	res, err := userRows(e.rm, ctx, `SELECT request_id, json_extract(answers, '$.name.text') AS name,
		json_extract(plan_exit, '$.planRevision') AS rev FROM question WHERE session_id = 'ses_q' ORDER BY request_id`, readmodel.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "zuno db", rowsText(res.Rows), []string{"qst_a|ledger|NULL", "qst_b|NULL|NULL", "qst_c|NULL|4"})
}

func TestQuestionReadModelSQLite(t *testing.T)   { testQuestionReadModel(t, sqliteEnv(t)) }
func TestQuestionReadModelPostgres(t *testing.T) { testQuestionReadModel(t, postgresEnv(t)) }
