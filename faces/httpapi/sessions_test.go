package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/events"
)

// tokenCI is the token of the tests whose writes must carry its name (http:ci).
var tokenCI = map[string]string{"ci": "0123456789abcdef-ci"}

// streamEvents reads one stream of the log whole.
func (f *fixture) streamEvents(stream string) []events.Recorded {
	f.t.Helper()
	recs, err := f.app.Queries.Events(context.Background(), stream, 0, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return recs
}

// ofType is the events of recs of type typ.
func ofType(recs []events.Recorded, typ string) []events.Recorded {
	var out []events.Recorded
	for _, r := range recs {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// session reads GET /api/sessions/{id}.
func (f *fixture) session(id string) queries.SessionInfo {
	f.t.Helper()
	r := f.do("GET", "/api/sessions/"+id, "")
	if r.status != 200 {
		f.t.Fatalf("session %s: %d %s", id, r.status, r.body)
	}
	var info queries.SessionInfo
	r.decode(f.t, &info)
	return info
}

// A session without a turn (zuno session create): 201, its id derived from the command id,
// created once whatever the retries, checked as a turn's session is.
func TestAPICreateSession(t *testing.T) { dialects(t, testAPICreateSession) }

func testAPICreateSession(t *testing.T, postgres bool) {
	f := newFixture(t, options{tokens: tokenCI, postgres: postgres})
	body := `{"commandId":"new-1","title":"Plan the release","agent":"plan"}`
	r := f.do("POST", "/api/sessions", body)
	var c struct {
		CommandID, SessionID, Events string
		Duplicate                    bool
	}
	r.decode(t, &c)
	if r.status != http.StatusCreated || c.SessionID != app.NewSessionID("new-1") || c.Events != "/api/sessions/"+c.SessionID+"/events" || c.Duplicate {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	info := f.session(c.SessionID)
	if info.Title != "Plan the release" || info.Agent != "plan" || len(info.Turns) != 0 || info.Directory == "" {
		t.Fatalf("session: %+v", info)
	}
	recs := f.streamEvents(commands.SessionStream(c.SessionID))
	if len(recs) != 1 || recs[0].Type != events.TypeSessionCreated || recs[0].Metadata.Actor != "http:ci" || recs[0].Metadata.CommandID != "new-1" {
		t.Fatalf("the session's events: %+v", recs)
	}

	t.Run("the same command again creates nothing", func(t *testing.T) {
		r := f.do("POST", "/api/sessions", body)
		if r.status != http.StatusCreated || !strings.Contains(string(r.body), `"duplicate":true`) || len(f.streamEvents(commands.SessionStream(c.SessionID))) != 1 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := f.do("POST", "/api/sessions", `{"commandId":"new-1","title":"Another"}`); r.status != 409 || r.code() != "command_id_reused" {
			t.Fatalf("another title under the same id: %d %s", r.status, r.body)
		}
	})
	t.Run("it is listed and takes its first turn by message", func(t *testing.T) {
		if r := f.do("GET", "/api/sessions", ""); !strings.Contains(string(r.body), c.SessionID) {
			t.Fatalf("list: %s", r.body)
		}
		r := f.do("POST", "/api/sessions/"+c.SessionID+"/messages", `{"commandId":"new-1-m1","prompt":"hi","agent":"build"}`)
		var a accepted
		r.decode(t, &a)
		if r.status != 202 || f.waitTurn(c.SessionID, a.TurnID) != "completed" {
			t.Fatalf("first turn: %d %s", r.status, r.body)
		}
	})
	t.Run("refused before anything is recorded", func(t *testing.T) {
		for _, c := range []struct{ body, code string }{
			{`{"title":"no id"}`, "bad_request"},
			{`{"commandId":"new-2","agent":"nobody"}`, "unknown_agent"},
			{`{"commandId":"new-3","directory":"/does/not/exist"}`, "workspace_not_found"},
			{`{"commandId":"new-4","directory":"relative"}`, "bad_request"},
			{`{"commandId":"new-5","model":"openai/gpt-5"}`, "bad_request"},
			{`{"commandId":"new-6","prompt":"   "}`, "bad_request"},
		} {
			r := f.do("POST", "/api/sessions", c.body)
			if r.code() != c.code || r.status >= 500 {
				t.Errorf("%s: %d %s, want %s", c.body, r.status, r.body, c.code)
			}
		}
		for _, id := range []string{"new-2", "new-3", "new-5"} {
			if recs, err := f.store.ReadStream(context.Background(), commands.SessionStream(app.NewSessionID(id)), 0, 10); err != nil || len(recs) != 0 {
				t.Errorf("%s recorded %d events (%v)", id, len(recs), err)
			}
		}
	})
}

// Seeds 004: a call a standing "always" approved is a settled request row of its own (reply
// once, source standing); another session asks for the same call; pruning a session ends its
// grants in the same append, refuses while a turn is open, and the pruned session takes no
// new message and leaves the lists.
func TestAPIStandingAndPrune(t *testing.T) { dialects(t, testAPIStandingAndPrune) }

func testAPIStandingAndPrune(t *testing.T, postgres bool) {
	f := newFixture(t, options{tokens: tokenCI, postgres: postgres})
	f.writeScript("default", writeScript)
	a := f.start("prune-a1", "write a.txt")
	ask := f.pendingAsk(a.SessionID)
	if r := f.do("POST", "/api/sessions/"+a.SessionID+"/asks/"+ask+"/reply", `{"reply":"always"}`); r.status != 204 {
		t.Fatalf("always: %d %s", r.status, r.body)
	}
	if f.waitTurn(a.SessionID, a.TurnID) != "completed" {
		t.Fatal("the first turn did not complete")
	}
	if g := f.session(a.SessionID).StandingGrants; len(g) == 0 {
		t.Fatal("the always answer installed no grant")
	}

	// The same call in the next turn: approved by the grant, never asked.
	f.writeScript("default", strings.ReplaceAll(writeScript, `"w1"`, `"w2"`))
	next := f.message(a.SessionID, "prune-a2", "write a.txt again")
	if f.waitTurn(a.SessionID, next.TurnID) != "completed" {
		t.Fatal("the second turn did not complete: it asked?")
	}
	var asks struct{ Asks []queries.AskView }
	f.do("GET", "/api/sessions/"+a.SessionID+"/asks", "").decode(t, &asks)
	if len(asks.Asks) != 2 {
		t.Fatalf("asks: %+v", asks.Asks)
	}
	asked, standing := asks.Asks[0], asks.Asks[1]
	if asked.AskID != ask || asked.Reply != "always" || asked.Source != "user" || asked.Pending ||
		standing.CallID != "w2" || standing.Reply != "once" || standing.Source != "standing" || standing.Pending || standing.TurnID != next.TurnID {
		t.Fatalf("the asked row %+v, the standing row %+v", asked, standing)
	}
	if r := f.do("POST", "/api/sessions/"+a.SessionID+"/asks/"+standing.AskID+"/reply", `{"reply":"reject"}`); r.status != 404 || r.code() != "ask_not_pending" {
		t.Fatalf("a reply to the standing row: %d %s", r.status, r.body)
	}

	// Another session asks for the same call, and while its turn waits it cannot be pruned.
	f.writeScript("default", strings.ReplaceAll(writeScript, `"w1"`, `"w3"`))
	b := f.start("prune-b1", "write a.txt")
	f.pendingAsk(b.SessionID)
	t.Run("a session whose turn is open is not pruned", func(t *testing.T) {
		r := f.do("POST", "/api/session/prune", `{"sessionId":"`+b.SessionID+`"}`)
		if r.status != 409 || r.code() != "turn_open" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if recs := ofType(f.streamEvents(commands.SessionStream(b.SessionID)), events.TypeSessionPruned); len(recs) != 0 {
			t.Fatalf("recorded: %+v", recs)
		}
		if r := f.do("POST", "/api/sessions/"+b.SessionID+"/abort", ""); r.status != 202 {
			t.Fatalf("abort: %d %s", r.status, r.body)
		}
		if got := f.waitTurn(b.SessionID, b.TurnID); got != "interrupted" {
			t.Fatalf("after abort: %s", got)
		}
		if r := f.do("POST", "/api/session/prune", `{"sessionId":"`+b.SessionID+`","mode":"delete"}`); r.status != 200 {
			t.Fatalf("prune after the abort: %d %s", r.status, r.body)
		}
	})

	r := f.do("POST", "/api/session/prune", `{"sessionId":"`+a.SessionID+`","reason":"done with it","commandId":"prune-1"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"pruned":"archive"`) || !strings.Contains(string(r.body), `"revoked":[{`) {
		t.Fatalf("prune: %d %s", r.status, r.body)
	}
	t.Run("the prune and the revocation are one append by the client", func(t *testing.T) {
		recs := f.streamEvents(commands.SessionStream(a.SessionID))
		last2 := recs[len(recs)-2:]
		if last2[0].Type != events.TypePermissionRevoked || last2[1].Type != events.TypeSessionPruned ||
			last2[0].Metadata.Actor != "http:ci" || last2[1].Metadata.Actor != "http:ci" || last2[1].Metadata.CommandID != "prune-1" ||
			last2[1].Position != last2[0].Position+1 {
			t.Fatalf("the last events: %+v", last2)
		}
		var p events.SessionPruned
		json.Unmarshal(last2[1].Data, &p)
		if p.Mode != "archive" || p.Reason != "done with it" {
			t.Fatalf("pruned: %+v", p)
		}
	})
	t.Run("the pruned session holds no grant: the call would ask again", func(t *testing.T) {
		// The fold shown is the one every turn's gate folds from the session's stream.
		if info := f.session(a.SessionID); len(info.StandingGrants) != 0 || info.Pruned != "archive" {
			t.Fatalf("after prune: %+v", info)
		}
	})
	t.Run("the pruned session takes no message, steering included", func(t *testing.T) {
		before := len(f.streamEvents(commands.SessionStream(a.SessionID)))
		for _, body := range []string{`{"commandId":"prune-a3","prompt":"more"}`, `{"commandId":"prune-a4","prompt":"more","steer":true}`} {
			r := f.do("POST", "/api/sessions/"+a.SessionID+"/messages", body)
			if r.status != 409 || r.code() != "session_pruned" {
				t.Fatalf("%s: %d %s", body, r.status, r.body)
			}
		}
		for _, id := range []string{"prune-a3", "prune-a4"} {
			if recs, err := f.store.ReadStream(context.Background(), commands.LeaseStream(turn.TurnID(id)), 0, 10); err != nil || len(recs) != 0 {
				t.Fatalf("the refused turn %s leased: %d %v", id, len(recs), err)
			}
		}
		if after := len(f.streamEvents(commands.SessionStream(a.SessionID))); after != before {
			t.Fatalf("the refused messages recorded %d events", after-before)
		}
	})
	t.Run("lists leave pruned sessions out unless asked", func(t *testing.T) {
		r := f.do("GET", "/api/sessions", "")
		if strings.Contains(string(r.body), a.SessionID) || strings.Contains(string(r.body), b.SessionID) {
			t.Fatalf("listed: %s", r.body)
		}
		var all struct{ Sessions []map[string]any }
		f.do("GET", "/api/sessions?pruned=true", "").decode(t, &all)
		status := map[string]any{}
		for _, s := range all.Sessions {
			status[fmt.Sprint(s["id"])] = s["status"]
		}
		if status[a.SessionID] != "archived" || status[b.SessionID] != "deleted" {
			t.Fatalf("statuses: %v", status)
		}
	})
	t.Run("pruning again records nothing; delete after archive is recorded", func(t *testing.T) {
		before := len(f.streamEvents(commands.SessionStream(a.SessionID)))
		if r := f.do("POST", "/api/session/prune", `{"sessionId":"`+a.SessionID+`"}`); r.status != 200 || !strings.Contains(string(r.body), `"events":0`) {
			t.Fatalf("again: %d %s", r.status, r.body)
		}
		if r := f.do("POST", "/api/session/prune", `{"sessionId":"`+a.SessionID+`","mode":"delete"}`); r.status != 200 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if after := len(f.streamEvents(commands.SessionStream(a.SessionID))); after != before+1 {
			t.Fatalf("%d events, then %d", before, after)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, c := range []struct {
			body   string
			status int
			code   string
		}{
			{`{"sessionId":"ses_none"}`, 404, "session_not_found"},
			{`{"sessionId":"../x"}`, 400, "bad_id"},
			{`{"sessionId":"` + a.SessionID + `","mode":"shred"}`, 400, "invalid_argument"},
			{`{}`, 400, "bad_id"},
			{`{"sessionId":"` + a.SessionID + `","extra":1}`, 400, "bad_request"},
		} {
			if r := f.do("POST", "/api/session/prune", c.body); r.status != c.status || r.code() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.body, r.status, r.body, c.status, c.code)
			}
		}
	})
}

// message posts a session's next turn and returns its 202.
func (f *fixture) message(sessionID, commandID, prompt string) accepted {
	f.t.Helper()
	r := f.do("POST", "/api/sessions/"+sessionID+"/messages", fmt.Sprintf(`{"commandId":%q,"prompt":%q}`, commandID, prompt))
	if r.status != http.StatusAccepted {
		f.t.Fatalf("message: %d %s", r.status, r.body)
	}
	var a accepted
	r.decode(f.t, &a)
	return a
}

// steered is a steering message's 202.
type steered struct {
	CommandID, SessionID, TurnID, Delivery, InputID, Status string
}

func (f *fixture) steer(sessionID, commandID, prompt string) (steered, response) {
	f.t.Helper()
	r := f.do("POST", "/api/sessions/"+sessionID+"/messages", fmt.Sprintf(`{"commandId":%q,"prompt":%q,"steer":true}`, commandID, prompt))
	var s steered
	if r.status == http.StatusAccepted {
		r.decode(f.t, &s)
	}
	return s, r
}

// Steering: a message sent to a running turn is admitted to the session's inbox, durable, by
// the client, and the turn records it at its next tool-safe boundary; sent again it admits
// nothing; with no turn running it is the next turn; when the turn ends first, the session's
// next turn delivers it.
func TestAPISteer(t *testing.T) { dialects(t, testAPISteer) }

func testAPISteer(t *testing.T, postgres bool) {
	f := newFixture(t, options{tokens: tokenCI, postgres: postgres})
	f.writeScript("default", writeScript)
	a := f.start("steer-base", "write a.txt")
	ask := f.pendingAsk(a.SessionID)

	st, r := f.steer(a.SessionID, "steer-1", "and mention the tests")
	if r.status != 202 || st.Delivery != "steering" || st.InputID != app.SteerInputID(a.SessionID, "steer-1") || st.TurnID != a.TurnID || st.Status != "queued" {
		t.Fatalf("steer: %d %s", r.status, r.body)
	}
	admittedOnce := func() {
		t.Helper()
		recs := ofType(f.streamEvents(commands.JobStream(a.SessionID)), events.TypeInboxMessageAdmitted)
		var m events.InboxMessageAdmitted
		if len(recs) == 1 {
			json.Unmarshal(recs[0].Data, &m)
		}
		if len(recs) != 1 || !m.Steer || m.InputID != st.InputID || m.Text != "and mention the tests" || recs[0].Metadata.Actor != "http:ci" {
			t.Fatalf("the admissions: %+v", recs)
		}
	}
	admittedOnce()
	if again, r := f.steer(a.SessionID, "steer-1", "and mention the tests"); r.status != 202 || again.InputID != st.InputID {
		t.Fatalf("again: %d %s", r.status, r.body)
	}
	admittedOnce()
	if _, r := f.steer(a.SessionID, "steer-1", "something else"); r.status != 409 || r.code() != "command_id_reused" {
		t.Fatalf("the same id, another text: %d %s", r.status, r.body)
	}
	if _, r := f.steer("ses_none", "steer-x", "hi"); r.status != 404 || r.code() != "session_not_found" {
		t.Fatalf("no session: %d %s", r.status, r.body)
	}
	if _, r := f.steer(a.SessionID, "steer-y", " "); r.status != 400 || r.code() != "invalid_argument" {
		t.Fatalf("an empty steer: %d %s", r.status, r.body)
	}

	// The call goes on; at the boundary after it the turn records the message, then ends.
	if r := f.do("POST", "/api/sessions/"+a.SessionID+"/asks/"+ask+"/reply", `{"reply":"once"}`); r.status != 204 {
		t.Fatalf("reply: %d %s", r.status, r.body)
	}
	if f.waitTurn(a.SessionID, a.TurnID) != "completed" {
		t.Fatal("the steered turn did not complete")
	}
	recs := f.streamEvents(commands.SessionStream(a.SessionID))
	msg := slices.IndexFunc(recs, func(r events.Recorded) bool {
		var m events.UserMessageAppended
		json.Unmarshal(r.Data, &m)
		return r.Type == events.TypeUserMessageAppended && m.InputID == st.InputID && m.Text == "and mention the tests" &&
			m.TaskReport == nil && m.PeerMessage == nil
	})
	settled := slices.IndexFunc(recs, func(r events.Recorded) bool { return r.Type == events.TypeToolSettled })
	finished := slices.IndexFunc(recs, func(r events.Recorded) bool { return r.Type == events.TypeTurnFinished })
	if msg < 0 || !(settled < msg && msg < finished) {
		t.Fatalf("the steer at %d, the call settled at %d, the turn finished at %d", msg, settled, finished)
	}
	if len(f.session(a.SessionID).Turns) != 1 {
		t.Fatal("the steer started a turn of its own")
	}
	if c := ofType(f.streamEvents(commands.JobStream(a.SessionID)), events.TypeInboxMessageConsumed); len(c) != 1 {
		t.Fatalf("consumed: %+v", c)
	}
	if again, _ := f.steer(a.SessionID, "steer-1", "and mention the tests"); again.Status != "consumed" || again.InputID != st.InputID {
		t.Fatalf("after delivery: %+v", again)
	}
	// Replaying the turn delivers the steer at the same boundary, as a steer.
	if rep, err := f.app.Commands.Replay(context.Background(), a.SessionID); err != nil || len(rep.Differences) != 0 || rep.Turns != 1 {
		t.Fatalf("replay: %+v %v", rep, err)
	}

	t.Run("with no turn running it is the next turn", func(t *testing.T) {
		f.writeScript("default", `{"turns":[{"text":"ok"}]}`)
		st, r := f.steer(a.SessionID, "steer-2", "next")
		if r.status != 202 || st.Delivery != "turn" || st.TurnID != turn.TurnID("steer-2") || st.InputID != "" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if f.waitTurn(a.SessionID, st.TurnID) != "completed" {
			t.Fatal("the turn did not complete")
		}
	})
	t.Run("when the turn ends first, the next turn delivers it", func(t *testing.T) {
		f.writeScript("default", strings.ReplaceAll(writeScript, `"w1"`, `"w4"`))
		run := f.message(a.SessionID, "steer-3-turn", "write a.txt once more")
		f.pendingAsk(a.SessionID)
		st, r := f.steer(a.SessionID, "steer-3", "then stop")
		if r.status != 202 || st.Delivery != "steering" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		f.writeScript("default", `{"turns":[{"text":"stopped"}]}`)
		if r := f.do("POST", "/api/sessions/"+a.SessionID+"/abort", ""); r.status != 202 {
			t.Fatalf("abort: %d %s", r.status, r.body)
		}
		if f.waitTurn(a.SessionID, run.TurnID) != "interrupted" {
			t.Fatal("not interrupted")
		}
		delivery := turn.TurnID("deliver/" + st.InputID)
		if got := f.waitTurn(a.SessionID, delivery); got != "completed" {
			t.Fatalf("the delivering turn: %s", got)
		}
		var m events.UserMessageAppended
		for _, r := range ofType(f.streamEvents(commands.SessionStream(a.SessionID)), events.TypeUserMessageAppended) {
			if json.Unmarshal(r.Data, &m); m.InputID == st.InputID {
				break
			}
		}
		if m.InputID != st.InputID || m.Text != "then stop" || m.TaskReport != nil {
			t.Fatalf("the delivered message: %+v", m)
		}
	})
}

// Work state reads: the plan and todos folded from the root's work stream, the jobs and
// the inbox from the read models; a job of another session is not found.
func TestAPIWorkReads(t *testing.T) { dialects(t, testAPIWorkReads) }

func testAPIWorkReads(t *testing.T, postgres bool) {
	f := newFixture(t, options{tokens: tokenCI, postgres: postgres})
	f.writeScript("default", `{"turns":[{"toolCalls":[
		{"id":"p1","name":"plan_update","arguments":{"action":"create","title":"Ship","steps":[{"title":"build"},{"title":"test"}]}},
		{"id":"t1","name":"todo_update","arguments":{"items":[{"title":"write the docs","status":"pending"}]}}]},{"text":"planned"}]}`)
	a := f.start("work-1", "plan it")
	if got := f.waitTurn(a.SessionID, a.TurnID); got != "completed" {
		t.Fatalf("turn: %s", got)
	}
	var plan struct {
		Plan *struct {
			Title string
			Steps []struct{ Title string }
		}
	}
	r := f.do("GET", "/api/sessions/"+a.SessionID+"/plan", "")
	r.decode(t, &plan)
	if r.status != 200 || plan.Plan == nil || plan.Plan.Title != "Ship" || len(plan.Plan.Steps) != 2 {
		t.Fatalf("plan: %d %s", r.status, r.body)
	}
	var todos struct {
		Revision int
		Items    []struct{ Title, Status string }
	}
	r = f.do("GET", "/api/sessions/"+a.SessionID+"/todos", "")
	r.decode(t, &todos)
	if r.status != 200 || len(todos.Items) != 1 || todos.Items[0].Title != "write the docs" {
		t.Fatalf("todos: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/api/sessions/"+a.SessionID+"/inbox", ""); r.status != 200 || string(r.body) != "{\"inputs\":[]}\n" {
		t.Fatalf("inbox: %d %s", r.status, r.body)
	}
	f.writeScript("default", `{"turns":[{"text":"ok"}]}`)
	empty := f.start("work-2", "nothing")

	// A job of a, as the task tool admits one.
	adm := job.Admit{JobAdmitted: events.JobAdmitted{JobState: events.JobState{JobID: "job_1", ParentSessionID: a.SessionID,
		ChildSessionID: "ses_child", Agent: "explore", Background: true, ReportDelivery: events.DeliveryQuiet, LogicalKey: "lk"},
		Contract: events.DelegationContract{Agent: "explore", Objective: "look"}}}
	if res, _ := f.handlers.HandleJob(context.Background(), &commands.JobCommand{Meta: commands.Meta{CommandID: "admit-1"},
		ParentSessionID: a.SessionID, Cmd: adm}); res.Err() != nil {
		t.Fatal(res.Err())
	}
	var jobs struct {
		Jobs []struct{ JobID, Status, Agent string }
	}
	r = f.do("GET", "/api/sessions/"+a.SessionID+"/jobs", "")
	r.decode(t, &jobs)
	if r.status != 200 || len(jobs.Jobs) != 1 || jobs.Jobs[0].JobID != "job_1" || jobs.Jobs[0].Status != events.JobQueued {
		t.Fatalf("jobs: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/api/sessions/"+a.SessionID+"/jobs/job_1", ""); r.status != 200 || !strings.Contains(string(r.body), `"objective":"look"`) {
		t.Fatalf("job: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/api/sessions/"+empty.SessionID+"/jobs/job_1", ""); r.status != 404 || r.code() != "not_found" {
		t.Fatalf("the job under another session: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/api/sessions/"+empty.SessionID+"/jobs", ""); r.status != 200 || string(r.body) != "{\"jobs\":[]}\n" {
		t.Fatalf("no jobs: %d %s", r.status, r.body)
	}
	f.waitTurn(empty.SessionID, empty.TurnID)
	if r := f.do("GET", "/api/sessions/"+empty.SessionID+"/plan", ""); r.status != 200 || string(r.body) != "{\"plan\":null}\n" {
		t.Fatalf("no plan: %d %q", r.status, r.body)
	}
	for _, path := range []string{"/plan", "/todos", "/jobs", "/inbox", "/jobs/job_x"} {
		if r := f.do("GET", "/api/sessions/ses_none"+path, ""); r.status != 404 || r.code() != "session_not_found" {
			t.Errorf("%s of no session: %d %s", path, r.status, r.body)
		}
	}
	if r := f.do("GET", "/api/sessions/"+a.SessionID+"/jobs/job_none", ""); r.status != 404 || r.code() != "not_found" {
		t.Fatalf("no job: %d %s", r.status, r.body)
	}
}

// The Goal read: goal_get's view folded from the root's work stream, null for a session that
// never had one.
func TestAPIGoal(t *testing.T) {
	f := newFixture(t, options{tokens: tokenCI})
	f.writeScript("default", `{"turns":[
		{"toolCalls":[{"id":"g1","name":"goal_update","arguments":{"objective":"Ship it","criteria":[{"id":"tests","text":"tests pass","needs_evidence":true}]}}]},
		{"toolCalls":[{"id":"g2","name":"goal_update","arguments":{"expected_revision":1,"status":"paused"}}]},
		{"text":"paused"}]}`)
	a := f.start("goal-1", "set a goal")
	if got := f.waitTurn(a.SessionID, a.TurnID); got != "completed" {
		t.Fatalf("turn: %s", got)
	}
	var g struct {
		Goal *struct {
			GoalID   string `json:"goal_id"`
			Revision int
			Status   string
			Criteria []struct {
				ID            string
				NeedsEvidence bool `json:"needs_evidence"`
			}
		}
	}
	r := f.do("GET", "/api/sessions/"+a.SessionID+"/goal", "")
	r.decode(t, &g)
	if r.status != 200 || g.Goal == nil || g.Goal.GoalID != "goal-1" || g.Goal.Revision != 2 || g.Goal.Status != "paused" ||
		len(g.Goal.Criteria) != 1 || !g.Goal.Criteria[0].NeedsEvidence {
		t.Fatalf("goal: %d %s", r.status, r.body)
	}
	f.writeScript("default", `{"turns":[{"text":"ok"}]}`)
	empty := f.start("goal-2", "nothing")
	f.waitTurn(empty.SessionID, empty.TurnID)
	if r := f.do("GET", "/api/sessions/"+empty.SessionID+"/goal", ""); r.status != 200 || string(r.body) != "{\"goal\":null}\n" {
		t.Fatalf("no goal: %d %s", r.status, r.body)
	}
}
