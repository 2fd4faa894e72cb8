package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/verification"
	"github.com/zuno-run/zuno/events"
)

const (
	shellScript = `{"turns":[{"toolCalls":[{"id":"call_echo","name":"shell","arguments":{"command":"echo hi"}}]},{"text":"done"}]}`
	writeScript = `{"turns":[{"toolCalls":[{"id":"w1","name":"write","arguments":{"path":"a.txt","content":"A\n"}}]},{"text":"written"}]}`
)

// A turn through the API: started with 202, run in the server, read back through every read
// endpoint; the same command id again starts nothing.
func TestAPITurn(t *testing.T) { dialects(t, testAPITurn) }

func testAPITurn(t *testing.T, postgres bool) {
	f := newFixture(t, options{tokens: map[string]string{"ci": "0123456789abcdef-ci"}, postgres: postgres})
	f.writeScript("default", shellScript)
	a := f.start("cmd-turn-1", "say hi")
	if a.SessionID == "" || a.TurnID == "" || a.Events != "/api/sessions/"+a.SessionID+"/events" {
		t.Fatalf("accepted: %+v", a)
	}
	if got := f.waitTurn(a.SessionID, a.TurnID); got != "completed" {
		t.Fatalf("turn: %s", got)
	}

	t.Run("the same command id names the same session and turn and runs nothing", func(t *testing.T) {
		// The session's stream, not the whole log: the turn's lease may be given back after
		// its finish is visible.
		count := func() int {
			recs, err := f.app.Queries.Events(context.Background(), commands.SessionStream(a.SessionID), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return len(recs)
		}
		before := count()
		again := f.start("cmd-turn-1", "say hi")
		after := count()
		if again.SessionID != a.SessionID || again.TurnID != a.TurnID || after != before ||
			again.Outcome == nil || !again.Outcome.Duplicate || again.Outcome.Reason != "completed" {
			t.Fatalf("again: %+v; the session had %d events, then %d", again, before, after)
		}
	})
	t.Run("the same command id with another prompt is refused", func(t *testing.T) {
		r := f.do("POST", "/api/sessions", `{"commandId":"cmd-turn-1","prompt":"something else"}`)
		if r.status != http.StatusConflict || r.code() != "command_id_reused" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("the session's event stream shows the turn to its end", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stream, _ := f.openStream(ctx, a.Events, "")
		var types []string
		for len(types) == 0 || types[len(types)-1] != "session.turn.finished.1" {
			ev, ok := recvTimeout(t, stream)
			if !ok {
				t.Fatalf("the stream ended after %v", types)
			}
			var e struct{ Type string }
			json.Unmarshal([]byte(ev.data), &e)
			types = append(types, e.Type)
		}
		if types[0] != "session.created.1" || !slices.Contains(types, "session.tool.started.1") {
			t.Fatalf("types: %v", types)
		}
	})
	t.Run("sessions list and get", func(t *testing.T) {
		r := f.do("GET", "/api/sessions?limit=10", "")
		if r.status != 200 || !strings.Contains(string(r.body), a.SessionID) {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		r = f.do("GET", "/api/sessions/"+a.SessionID, "")
		var info struct {
			SessionID string
			Turns     []struct{ TurnID, Status string }
		}
		r.decode(t, &info)
		if r.status != 200 || info.SessionID != a.SessionID || len(info.Turns) != 1 || info.Turns[0].Status != "completed" {
			t.Fatalf("get: %d %s", r.status, r.body)
		}
		if r := f.do("GET", "/api/sessions/ses_nope", ""); r.status != 404 || r.code() != "session_not_found" {
			t.Fatalf("missing: %d %s", r.status, r.body)
		}
	})
	t.Run("the writes carry the token's name as actor", func(t *testing.T) {
		recs, err := f.app.Queries.Events(context.Background(), commands.SessionStream(a.SessionID), 0, 0)
		if err != nil || len(recs) == 0 {
			t.Fatal(err)
		}
		// The client's writes are its own; the turn's events are the agent's (agent:build).
		actors := map[string]string{}
		for _, r := range recs {
			actors[r.Type] = r.Metadata.Actor
		}
		for _, typ := range []string{"session.created.1", "session.user_message.appended.1"} {
			if actors[typ] != "http:ci" {
				t.Errorf("%s: actor %q (%v)", typ, actors[typ], actors)
			}
		}
	})
	t.Run("the prompt receipt as debug prompt's JSON", func(t *testing.T) {
		r := f.do("GET", "/api/sessions/"+a.SessionID+"/prompt?step=1", "")
		if r.status != 200 || !strings.Contains(string(r.body), `"verified":true`) {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := f.do("GET", "/api/sessions/"+a.SessionID+"/prompt?step=zero", ""); r.status != 400 {
			t.Fatalf("bad step: %d %s", r.status, r.body)
		}
	})
	t.Run("the shell call's verification receipt", func(t *testing.T) {
		r := f.do("GET", "/api/receipts/"+verification.ReceiptID(a.SessionID, "call_echo"), "")
		if r.status != 200 || !strings.Contains(string(r.body), "echo hi") {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := f.do("GET", "/api/receipts/"+verification.ReceiptID(a.SessionID, "call_never"), ""); r.status != 404 {
			t.Fatalf("missing receipt: %d %s", r.status, r.body)
		}
	})
	t.Run("verify, whole log and one session", func(t *testing.T) {
		for _, body := range []string{"", `{"session":"` + a.SessionID + `"}`} {
			r := f.do("POST", "/api/verify", body)
			if r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) {
				t.Fatalf("verify %q: %d %s", body, r.status, r.body)
			}
		}
		if r := f.do("POST", "/api/verify", `{"session":"ses_none"}`); r.status != 400 {
			t.Fatalf("verify of nothing: %d %s", r.status, r.body)
		}
	})
	t.Run("the next turn by message", func(t *testing.T) {
		f.writeScript("default", `{"turns":[{"text":"again"}]}`)
		r := f.do("POST", "/api/sessions/"+a.SessionID+"/messages", `{"commandId":"cmd-turn-2","prompt":"more"}`)
		var next accepted
		r.decode(t, &next)
		if r.status != 202 || next.SessionID != a.SessionID || next.TurnID == a.TurnID {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if got := f.waitTurn(a.SessionID, next.TurnID); got != "completed" {
			t.Fatalf("turn: %s", got)
		}
	})
	t.Run("refusals before anything runs", func(t *testing.T) {
		for _, c := range []struct{ body, code string }{
			{`{"prompt":"no id"}`, "bad_request"},
			{`{"commandId":"c 1","prompt":"space"}`, "bad_request"},
			{`{"commandId":"c2","prompt":"  "}`, "bad_request"},
			{`{"commandId":"c3","prompt":"hi","model":"scripted:/etc/passwd"}`, "model_refused"},
			{`{"commandId":"c4","prompt":"hi","agent":"nobody"}`, "unknown_agent"},
			{`{"commandId":"c5","prompt":"hi","extra":1}`, "bad_request"},
			{`{"commandId":"c6","prompt":"hi","directory":"/does/not/exist"}`, "workspace_not_found"},
			{`{"commandId":"c7","prompt":"hi","directory":"relative/dir"}`, "bad_request"},
		} {
			r := f.do("POST", "/api/sessions", c.body)
			if r.code() != c.code || r.status >= 500 {
				t.Errorf("%s: %d %s, want %s", c.body, r.status, r.body, c.code)
			}
		}
	})
}

// Seeds 004: a reply is 204, a second reply 404; a reply for another session's ask is 404.
// The turn waiting on the ask goes on with the reply.
func TestAPIAsksAndReplies(t *testing.T) { dialects(t, testAPIAsksAndReplies) }

func testAPIAsksAndReplies(t *testing.T, postgres bool) {
	f := newFixture(t, options{postgres: postgres})
	f.writeScript("default", writeScript)
	a := f.start("cmd-ask", "write a.txt")
	f.writeScript("default", strings.ReplaceAll(writeScript, `"w1"`, `"w2"`))
	other := f.start("cmd-other", "write a.txt too")
	ask := f.pendingAsk(a.SessionID)
	otherAsk := f.pendingAsk(other.SessionID)
	if again := f.start("cmd-ask", "write a.txt"); again.SessionID != a.SessionID || again.TurnID != a.TurnID || again.Outcome != nil {
		t.Fatalf("the same command while its turn waits: %+v", again)
	}

	r := f.do("GET", "/api/sessions/"+a.SessionID+"/asks?pending=true", "")
	if r.status != 200 || !strings.Contains(string(r.body), ask) || strings.Contains(string(r.body), otherAsk) {
		t.Fatalf("asks: %d %s", r.status, r.body)
	}
	reply := func(session, ask, body string) response {
		return f.do("POST", "/api/sessions/"+session+"/asks/"+ask+"/reply", body)
	}
	// Seeds 004, in order: each row is one reply and its answer.
	for _, c := range []struct {
		name, session, ask, body string
		status                   int
		code                     string
	}{
		{"a reply for another session's ask", a.SessionID, otherAsk, `{"reply":"once"}`, 404, "ask_not_pending"},
		{"a reply that is not once, always or reject", a.SessionID, ask, `{"reply":"sometimes"}`, 400, "invalid_argument"},
		{"the reply: 204", a.SessionID, ask, `{"reply":"once","commandId":"reply-1"}`, 204, ""},
		{"the reply replayed with its command id: 404", a.SessionID, ask, `{"reply":"once","commandId":"reply-1"}`, 404, "ask_not_pending"},
		{"the same reply again: 404", a.SessionID, ask, `{"reply":"once"}`, 404, "ask_not_pending"},
		{"another reply: 404", a.SessionID, ask, `{"reply":"reject"}`, 404, "ask_not_pending"},
		{"this session's ask named under the other session", other.SessionID, ask, `{"reply":"once"}`, 404, "ask_not_pending"},
	} {
		r := reply(c.session, c.ask, c.body)
		if r.status != c.status || r.code() != c.code || (c.status == 204 && len(r.body) != 0) {
			t.Fatalf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
		}
	}
	if got := f.waitTurn(a.SessionID, a.TurnID); got != "completed" {
		t.Fatalf("turn after the reply: %s", got)
	}
	inbox, err := f.app.Queries.Events(context.Background(), commands.InboxStream(a.SessionID), 0, 0)
	if err != nil || len(inbox) != 1 || inbox[0].Metadata.Actor != "http:local" || inbox[0].Metadata.CommandID != "reply-1" {
		t.Fatalf("the reply's event: %+v %v", inbox, err)
	}
	if b, err := os.ReadFile(filepath.Join(f.workspace, "a.txt")); err != nil || string(b) != "A\n" {
		t.Fatalf("a.txt: %q %v", b, err)
	}

	t.Run("abort stops the other session's turn waiting on its ask", func(t *testing.T) {
		r := f.do("POST", "/api/sessions/"+other.SessionID+"/abort", "")
		if r.status != 202 {
			t.Fatalf("abort: %d %s", r.status, r.body)
		}
		if got := f.waitTurn(other.SessionID, other.TurnID); got != "interrupted" {
			t.Fatalf("turn after abort: %s", got)
		}
		lease, err := f.app.Queries.Events(context.Background(), commands.LeaseStream(other.TurnID), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(lease, func(r events.Recorded) bool { return r.Type == events.TypeTurnInterruptRequested })
		if i < 0 || lease[i].Metadata.Actor != "http:local" {
			t.Fatalf("the interrupt in the lease stream: %d %+v", i, lease)
		}
		if r := f.do("POST", "/api/sessions/"+other.SessionID+"/abort", `{}`); r.status != 409 || r.code() != "turn_not_running" {
			t.Fatalf("abort with nothing running: %d %s", r.status, r.body)
		}
	})
}

// pendingAsk waits for the session's first pending ask and returns its id.
func (f *fixture) pendingAsk(sessionID string) string {
	f.t.Helper()
	for range 500 {
		asks, err := f.app.Queries.Asks(context.Background(), sessionID)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, a := range asks {
			if a.Pending {
				return a.AskID
			}
		}
		sleep()
	}
	f.t.Fatalf("session %s asked nothing", sessionID)
	return ""
}

func TestAPIUnknownRouteIsJSON(t *testing.T) {
	f := newFixture(t, options{})
	r := f.do("GET", "/api/nothing", "")
	if r.status != 404 || r.code() != "route_not_found" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = f.do("DELETE", "/api/sessions", "")
	if r.status != 404 || r.code() != "route_not_found" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}
