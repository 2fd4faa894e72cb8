package httpapi_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// The HTTP face of the QuestionPort, on real HTTP over loopback: the open requests are listed,
// a reply names the revision it answers (stale: 409), the same commandId is idempotent, later
// defers without answering, and a request answered by another face is 404, as asks are.
func TestAPIQuestions(t *testing.T) { dialects(t, testAPIQuestions) }

func testAPIQuestions(t *testing.T, postgres bool) {
	f := newFixture(t, options{tokens: tokenCI, postgres: postgres})
	f.writeScript("default", `{"turns":[{"text":"hello"}]}`)
	a := f.start("q-start", "hi")
	if f.waitTurn(a.SessionID, a.TurnID) != "completed" {
		t.Fatal("the turn did not complete")
	}
	s := a.SessionID
	for _, id := range []string{"qst_h1", "qst_h2"} {
		res, _ := f.handlers.HandleQuestion(context.Background(), &commands.QuestionCommand{Meta: commands.Meta{CommandID: "pub-" + id},
			SessionID: s, RequestID: id, Cmd: question.Publish{QuestionPublished: events.QuestionPublished{SessionID: s, RequestID: id,
				Kind: events.QuestionKindQuestion, Mode: events.QuestionModeReceipt, Tool: "question", CallID: "call_" + id,
				Items: []events.QuestionItem{{ID: "db", Question: "Which database?", Options: []events.QuestionOption{{Label: "SQLite"}, {Label: "Postgres"}}},
					{ID: "name", Question: "Its name?", Custom: true}}}}})
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
	}
	var list struct {
		Questions []struct {
			RequestID string   `json:"requestId"`
			Revision  uint64   `json:"revision"`
			Status    string   `json:"status"`
			Pending   []string `json:"pending"`
		} `json:"questions"`
	}
	f.do("GET", "/api/session/questions?sessionId="+s, "").decode(t, &list)
	if len(list.Questions) != 2 || list.Questions[0].Revision != 1 || len(list.Questions[0].Pending) != 2 {
		t.Fatalf("list: %+v", list)
	}
	reply := func(body string) response { return f.do("POST", "/api/session/question/reply", body) }
	partial := `{"sessionId":"` + s + `","requestId":"qst_h1","expectedRevision":1,"commandId":"r1","answers":[{"itemId":"db","selected":["Postgres"]}]}`
	for i := range 2 { // the same command twice: one answer
		if r := reply(partial); r.status != 200 {
			t.Fatalf("partial answer %d: %d %s", i, r.status, r.body)
		}
	}
	if r := reply(`{"sessionId":"` + s + `","requestId":"qst_h1","expectedRevision":1,"commandId":"r2","answers":[{"itemId":"name","text":"ledger"}]}`); r.status != 409 || r.code() != "stale_revision" {
		t.Fatalf("stale: %d %s", r.status, r.body)
	}
	if r := reply(`{"sessionId":"` + s + `","requestId":"qst_h1","expectedRevision":2,"commandId":"r1","answers":[{"itemId":"name","text":"x"}]}`); r.status != 409 || r.code() != "command_id_reused" {
		t.Fatalf("reused id: %d %s", r.status, r.body)
	}
	if r := reply(`{"sessionId":"` + s + `","requestId":"qst_h2","expectedRevision":1,"commandId":"l1","later":true}`); r.status != 200 {
		t.Fatalf("later: %d %s", r.status, r.body)
	}
	// Another face (the CLI's port) answers the rest of qst_h1 first: the API's reply is 404.
	if _, err := f.app.Commands.Questions().Answer(context.Background(), commands.Meta{CommandID: "cli-1", Actor: "user"}, s, "qst_h1", 2,
		[]events.QuestionItemAnswer{{ItemID: "name", Text: "ledger"}}, "cli"); err != nil {
		t.Fatal(err)
	}
	if r := reply(`{"sessionId":"` + s + `","requestId":"qst_h1","expectedRevision":3,"commandId":"r3","answers":[{"itemId":"name","text":"other"}]}`); r.status != 404 || r.code() != "question_not_pending" {
		t.Fatalf("answered by another face: %d %s", r.status, r.body)
	}
	if r := reply(`{"sessionId":"` + s + `","requestId":"qst_never","expectedRevision":1,"commandId":"r4","later":true}`); r.status != 404 {
		t.Fatalf("never published: %d %s", r.status, r.body)
	}
	if r := reply(`{"sessionId":"` + s + `","requestId":"qst_h2","expectedRevision":2,"commandId":"r5"}`); r.status != 400 {
		t.Fatalf("neither answers nor later: %d %s", r.status, r.body)
	}
	f.do("GET", "/api/session/questions?sessionId="+s, "").decode(t, &list)
	if len(list.Questions) != 1 || list.Questions[0].RequestID != "qst_h2" || list.Questions[0].Revision != 2 || list.Questions[0].Status != "pending" {
		t.Fatalf("open after: %+v", list)
	}
	inputs := 0
	for _, rec := range f.streamEvents(commands.JobStream(s)) {
		if rec.Type == events.TypeInboxMessageAdmitted {
			inputs++
		}
	}
	if inputs != 2 {
		t.Fatalf("%d inbox inputs, want one per real answer (2)", inputs)
	}
}
