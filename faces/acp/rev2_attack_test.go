package acp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewOptionAndCrossSession: a reply the request did not offer is a rejection, recorded
// once however often the client answers; a question request of one session cannot be answered
// through another session the connection has open.
func TestReviewOptionAndCrossSession(t *testing.T) {
	t.Run("malformed option, answered twice", func(t *testing.T) {
		w := newWorld(t, writeScript, editsAsk, nil)
		p := w.acp()
		initialize(p)
		sid := newSession(p, 2, w.dir)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 10, "method": "session/prompt",
			"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "write"}}}})
		p.send(string(b))
		req, _ := p.until(func(m map[string]any) bool { return m["method"] == "session/request_permission" })
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"outcome":{"outcome":"selected","optionId":"ALWAYS\u0000"}}}`, req["id"])
		p.send(answer)
		p.send(strings.Replace(answer, `ALWAYS\u0000`, "once", 1))
		p.send(`{"jsonrpc":"2.0","id":999,"result":{"outcome":{"outcome":"selected","optionId":"once"}}}`)
		resp, _ := p.until(func(m map[string]any) bool { return m["method"] == nil && jsonID(m) == "10" })
		if resp["result"] == nil {
			t.Fatalf("prompt: %v", resp)
		}
		if _, err := os.Stat(filepath.Join(w.dir, "one.txt")); err == nil {
			t.Error("the write ran on an option nobody offered")
		}
		var replies []string
		for _, e := range w.events(sid) {
			if e.Type == "session.permission.answered.1" {
				replies = append(replies, fmt.Sprint(e.data(t)["reply"]))
			}
		}
		if strings.Join(replies, ",") != "reject" {
			t.Errorf("answers %v, want one reject", replies)
		}
	})
	t.Run("question through another session", func(t *testing.T) {
		w := newWorld(t, questionScript, "", nil)
		p := w.acp()
		initialize(p)
		sid := newSession(p, 2, w.dir)
		other := newSession(p, 3, w.dir)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
			"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "ask me"}}}})
		p.send(string(b))
		note, _ := p.until(func(m map[string]any) bool { return m["method"] == "_zuno/question" })
		rid := note["params"].(map[string]any)["question"].(map[string]any)["requestId"].(string)
		p.until(func(m map[string]any) bool { return m["method"] == nil && jsonID(m) == "4" })
		answer := map[string]any{"sessionId": other, "requestId": rid, "expectedRevision": 1,
			"answers": []any{map[string]any{"itemId": "q1", "selected": []any{"beta"}}}}
		resp, _ := p.call(5, "_zuno/session/question/reply", answer)
		if code, zc := errCode(resp); code != -32002 || zc != "question_not_pending" {
			t.Errorf("an answer through another session: %v", resp)
		}
		for _, s := range []string{sid, other} {
			for _, e := range w.events(s) {
				if e.Type == "question.answered.1" {
					t.Errorf("session %s recorded an answer", s)
				}
			}
		}
	})
}
