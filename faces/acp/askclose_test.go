package acp_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// oneWrite asks before one write, then answers: each new session plays it from its start.
const oneWrite = `{"turns": [
  {"toolCalls": [{"id": "w1", "name": "write", "arguments": {"path": "w.txt", "content": "w\n"}}]},
  {"text": "Written."}
]}`

// A client's choice that races session/cancel (docs/acp.md, "The turn may end first"): the
// turn closes the ask in the session's inbox before it settles the call cancelled, and the
// inbox refuses a choice after the close, so the log holds the choice or the close, never
// both, and a cancelled call is never recorded as approved. The real `zuno acp` process, raw
// JSON-RPC, the choice sent after the cancel's answer and at the same moment as the cancel.
func TestChoiceAfterCancelIsNotRecorded(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { choiceAfterCancel(t, newWorld(t, oneWrite, editsAsk, nil)) })
	t.Run("postgres", func(t *testing.T) { choiceAfterCancel(t, newWorld(t, oneWrite, editsAsk, nil).onPostgres()) })
}

func choiceAfterCancel(t *testing.T, w *world) {
	p := w.acp()
	initialize(p)
	id := 10
	// ask starts a prompt in a new session and returns it with the permission request.
	ask := func() (sid string, prompt int, req map[string]any) {
		id++
		sid = newSession(p, id, w.dir)
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt",
			"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "write w"}}}})
		p.send(string(b))
		req, _ = p.until(func(m map[string]any) bool { return m["method"] == "session/request_permission" })
		return sid, id, req
	}
	cancel := func(sid string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid)
	}
	choose := func(req map[string]any, option string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, req["id"], option)
	}
	// ended waits for the prompt's answer and reports whether the agent told the client its
	// choice was refused (ask_not_pending on the call).
	ended := func(prompt int) (stop string, refused bool) {
		resp, before := p.until(func(m map[string]any) bool { return m["method"] == nil && jsonID(m) == fmt.Sprint(prompt) })
		for _, m := range before {
			if m["method"] != "session/update" {
				continue
			}
			u, _ := m["params"].(map[string]any)["update"].(map[string]any)
			meta, _ := u["_meta"].(map[string]any)
			if z, _ := meta["zuno"].(map[string]any); z["kind"] == "ask_not_pending" {
				refused = true
			}
		}
		r, _ := resp["result"].(map[string]any)
		s, _ := r["stopReason"].(string)
		return s, refused
	}

	type outcome struct {
		sid     string
		refused bool
		after   bool // the choice was sent after the prompt ended cancelled
	}
	var runs []outcome

	// 1. After the cancel's answer: the choice is not recorded, and the ask is closed.
	sid, prompt, req := ask()
	p.send(cancel(sid))
	if stop, _ := ended(prompt); stop != "cancelled" {
		t.Fatalf("prompt after session/cancel: %q", stop)
	}
	p.send(choose(req, "always"))
	runs = append(runs, outcome{sid: sid, after: true})

	// 2. The cancel and the choice in the same moment, in both orders, a few times: whichever
	// the inbox decides first is the one recorded.
	for i := range 6 {
		sid, prompt, req := ask()
		if i%2 == 0 {
			p.send(cancel(sid))
			p.send(choose(req, "always"))
		} else {
			p.send(choose(req, "always"))
			p.send(cancel(sid))
		}
		_, refused := ended(prompt)
		runs = append(runs, outcome{sid: sid, refused: refused})
	}
	// A later request's round trip: the agent has handled every choice sent before it.
	newSession(p, 999, w.dir)
	time.Sleep(200 * time.Millisecond)

	won := map[string]int{}
	for _, r := range runs {
		var answered, closed, granted, started int
		for _, e := range w.events(r.sid) {
			switch e.Type {
			case "session.permission.answered.1":
				answered++
			case "session.permission.closed.1":
				closed++
				if e.Stream != "inbox-"+r.sid || e.data(t)["reason"] != "interrupted" {
					t.Errorf("%s: close %s %v", r.sid, e.Stream, e.data(t))
				}
			case "session.permission.granted.1":
				granted++
			case "session.tool.started.1":
				started++
			}
		}
		switch {
		case answered+closed != 1:
			t.Errorf("%s: %d answers and %d closes, want exactly one of them", r.sid, answered, closed)
		case closed == 1 && (granted != 0 || started != 0):
			t.Errorf("%s: the ask was closed, yet %d grants and %d starts", r.sid, granted, started)
		case r.refused && closed != 1:
			t.Errorf("%s: the client was told ask_not_pending, but the choice was recorded", r.sid)
		case r.after && closed != 1:
			t.Errorf("%s: a choice sent after the cancelled prompt was recorded", r.sid)
		}
		if closed == 1 {
			won["close"]++
		} else {
			won["choice"]++
		}
	}
	t.Logf("recorded: %v", won)
	p.close()
}
