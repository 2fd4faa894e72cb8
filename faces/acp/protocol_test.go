package acp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// textScript answers each prompt with text only; the first answer takes a second, so a
// second prompt can come while it runs.
const textScript = `{"turns": [{"delayMs": 1500, "text": "First answer."}, {"text": "Second answer."}, {"text": "Third answer."}]}`

// Malformed JSON-RPC and messages out of the protocol's order get errors, and lose nothing:
// every request is answered once, in whatever order the bad lines came, and the turns run.
func TestMalformedAndOutOfOrder(t *testing.T) {
	w := newWorld(t, textScript, "", nil)
	p := w.acp()

	cases := []struct {
		name   string
		line   string
		code   int
		zcode  string
		before bool // sent before initialize
	}{
		{"a method before initialize", `{"jsonrpc":"2.0","id":100,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`, -32600, "not_initialized", true},
		{"a prompt before initialize", `{"jsonrpc":"2.0","id":101,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, -32600, "not_initialized", true},
		{"an unknown method", `{"jsonrpc":"2.0","id":102,"method":"foo/bar","params":{}}`, -32601, "", false},
		{"params of the wrong shape", `{"jsonrpc":"2.0","id":103,"method":"session/new","params":[1]}`, -32602, "", false},
		{"a relative cwd", `{"jsonrpc":"2.0","id":104,"method":"session/new","params":{"cwd":"ws","mcpServers":[]}}`, -32602, "bad_request", false},
		{"a missing workspace", `{"jsonrpc":"2.0","id":105,"method":"session/new","params":{"cwd":"/nonexistent/zuno","mcpServers":[]}}`, -32602, "workspace_not_found", false},
		{"a prompt to a session never opened", `{"jsonrpc":"2.0","id":106,"method":"session/prompt","params":{"sessionId":"ses_0","prompt":[{"type":"text","text":"x"}]}}`, -32002, "session_not_open", false},
		{"a load of a session that does not exist", `{"jsonrpc":"2.0","id":107,"method":"session/load","params":{"sessionId":"ses_0","cwd":"/","mcpServers":[]}}`, -32002, "session_not_found", false},
		{"a mode of a session never opened", `{"jsonrpc":"2.0","id":108,"method":"session/set_mode","params":{"sessionId":"ses_0","modeId":"plan"}}`, -32002, "session_not_open", false},
		{"a string id kept", `{"jsonrpc":"2.0","id":"r-9","method":"foo/bar"}`, -32601, "", false},
	}
	check := func(c struct {
		name   string
		line   string
		code   int
		zcode  string
		before bool
	}) {
		t.Helper()
		var id any
		var m map[string]any
		json.Unmarshal([]byte(c.line), &m)
		id = m["id"]
		p.send(c.line)
		resp, _ := p.until(func(m map[string]any) bool { return m["method"] == nil && fmt.Sprint(m["id"]) == fmt.Sprint(id) })
		if code, zc := errCode(resp); code != c.code || zc != c.zcode {
			t.Errorf("%s: answered %v, want %d %q", c.name, resp, c.code, c.zcode)
		}
	}
	for _, c := range cases {
		if c.before {
			check(c)
		}
	}
	// Lines that are no message are answered with id null, and nothing else is lost.
	for _, bad := range []string{"garbage", `[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, `{"jsonrpc":"1.0","id":1,"method":"initialize"}`} {
		p.send(bad)
		resp, _ := p.until(func(m map[string]any) bool { return m["error"] != nil })
		if code, _ := errCode(resp); code != -32700 && code != -32600 {
			t.Errorf("%s: answered %v", bad, resp)
		}
	}
	// A response to a request the agent never sent is dropped, and the next request answered.
	p.send(`{"jsonrpc":"2.0","id":4242,"result":{}}`)
	initialize(p)
	for _, c := range cases {
		if !c.before {
			check(c)
		}
	}

	sid := newSession(p, 2, w.dir)
	// Content the agent did not advertise is refused before anything is recorded.
	resp, _ := p.call(3, "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []any{map[string]any{"type": "image", "data": "AA==", "mimeType": "image/png"}}})
	if code, zc := errCode(resp); code != -32602 || zc != "bad_request" {
		t.Errorf("an image prompt: %v", resp)
	}
	// A prompt while the session's prompt runs is refused; the running one is not disturbed,
	// nor by garbage sent while it runs.
	p.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"first"}]}}`)
	time.Sleep(300 * time.Millisecond)
	p.send(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"second"}]}}`)
	p.send("}{")
	p.send(`{"jsonrpc":"2.0","id":6,"method":"session/load","params":{"sessionId":"` + sid + `","cwd":"/","mcpServers":[]}}`)
	var got = map[string]map[string]any{}
	var chunks []string
	for len(got) < 4 {
		m, _ := p.until(func(m map[string]any) bool { return true })
		switch {
		case m["method"] == "session/update":
			u := m["params"].(map[string]any)["update"].(map[string]any)
			if u["sessionUpdate"] == "agent_message_chunk" {
				chunks = append(chunks, u["content"].(map[string]any)["text"].(string))
			}
		case m["method"] == nil:
			got[jsonID(m)] = m
		}
	}
	if code, zc := errCode(got["5"]); code != -32600 || zc != "prompt_running" {
		t.Errorf("a second prompt while one runs: %v", got["5"])
	}
	if code, zc := errCode(got["6"]); code != -32600 || zc != "prompt_running" {
		t.Errorf("a load of a session whose prompt runs: %v", got["6"])
	}
	if code, _ := errCode(got["null"]); code != -32700 {
		t.Errorf("garbage during a prompt: %v", got["null"])
	}
	if r, _ := got["4"]["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Errorf("the running prompt: %v; stderr:\n%s", got["4"], p.stderr)
	}
	if strings.Join(chunks, "") != "First answer." {
		t.Errorf("streamed %q", chunks)
	}
	// The session goes on: the next prompt is the next turn.
	resp, _ = p.call(7, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "again"}}})
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Errorf("the next prompt: %v", resp)
	}
	// Every turn the client started is in the log, completed; the refused ones left nothing.
	finished := 0
	for _, e := range w.events(sid) {
		switch e.Type {
		case "session.turn.finished.1":
			if e.data(t)["reason"] != "completed" {
				t.Errorf("turn %v", e.data(t))
			}
			finished++
		case "session.user_message.appended.1":
			if txt := e.data(t)["text"]; txt == "second" {
				t.Errorf("the refused prompt was recorded")
			}
		}
	}
	if finished != 2 {
		t.Errorf("%d turns finished, want 2", finished)
	}
}

// writeScript writes a file, which the tests' configuration makes ask.
const writeScript = `{"turns": [
  {"toolCalls": [{"id": "call_1", "name": "write", "arguments": {"path": "one.txt", "content": "1\n"}}]},
  {"text": "One."},
  {"toolCalls": [{"id": "call_2", "name": "write", "arguments": {"path": "two.txt", "content": "2\n"}}]},
  {"text": "Two."}
]}`

// A permission ask is one request whoever answers it (seeds 004, docs/server.md "Permission
// replies"): the HTTP face answering first wins and the editor's request is withdrawn
// ($/cancel_request), its late answer recording nothing; the editor answering first wins and
// the HTTP face's reply to the same ask is 404 ask_not_pending.
func TestAskAnsweredByTwoFaces(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { askAnsweredByTwoFaces(t, newWorld(t, writeScript, editsAsk, nil)) })
	t.Run("postgres", func(t *testing.T) { askAnsweredByTwoFaces(t, newWorld(t, writeScript, editsAsk, nil).onPostgres()) })
}

func askAnsweredByTwoFaces(t *testing.T, w *world) {
	base := w.serve()
	p := w.acp()
	initialize(p)
	sid := newSession(p, 2, w.dir)
	reply := func(askID, r string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/api/sessions/"+sid+"/asks/"+askID+"/reply",
			strings.NewReader(`{"reply":"`+r+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	asked := func(id int, text string) map[string]any {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt",
			"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}})
		p.send(string(b))
		m, _ := p.until(func(m map[string]any) bool { return m["method"] == "session/request_permission" })
		return m
	}
	askID := func(m map[string]any) string {
		return m["params"].(map[string]any)["_meta"].(map[string]any)["zuno"].(map[string]any)["askId"].(string)
	}

	// 1. The HTTP face first.
	req := asked(10, "write one")
	if code := reply(askID(req), "once"); code != http.StatusNoContent {
		t.Fatalf("the HTTP reply: %d", code)
	}
	withdrawn, _ := p.until(func(m map[string]any) bool { return m["method"] == "$/cancel_request" })
	if got := withdrawn["params"].(map[string]any)["requestId"]; fmt.Sprint(got) != fmt.Sprint(req["id"]) {
		t.Errorf("withdrew %v, want the request %v", got, req["id"])
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"outcome":{"outcome":"selected","optionId":"always"}}}`, req["id"]))
	resp, _ := p.until(func(m map[string]any) bool { return m["method"] == nil && jsonID(m) == "10" })
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt 1: %v", resp)
	}

	// 2. The editor first.
	req = asked(11, "write two")
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"outcome":{"outcome":"selected","optionId":"once"}}}`, req["id"]))
	resp, _ = p.until(func(m map[string]any) bool { return m["method"] == nil && jsonID(m) == "11" })
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt 2: %v", resp)
	}
	if code := reply(askID(req), "reject"); code != http.StatusNotFound {
		t.Errorf("the HTTP reply after the editor's: %d, want 404", code)
	}

	var answers []string
	for _, e := range w.events(sid) {
		if e.Type == "session.permission.answered.1" {
			actor, _, _ := strings.Cut(e.Metadata.Actor, ":")
			answers = append(answers, fmt.Sprintf("%s:%s", e.data(t)["reply"], actor))
		}
	}
	if want := []string{"once:http", "once:acp"}; strings.Join(answers, ",") != strings.Join(want, ",") {
		t.Errorf("answers %v, want %v: one per ask, the first face's", answers, want)
	}
}

// serve starts `zuno serve` on the world's store and returns its base URL.
func (w *world) serve() string {
	w.t.Helper()
	cmd := exec.Command(zuno(w.t), "serve", "--listen", "127.0.0.1:0")
	cmd.Dir, cmd.Env = w.dir, w.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		w.t.Fatalf("zuno serve: %v\n%s", err, stderr.String())
	}
	_, rest, _ := strings.Cut(line, "http://")
	addr, _, _ := strings.Cut(rest, " ")
	return "http://" + addr
}

// questionScript publishes a question and goes on (question_async returns at once).
const questionScript = `{"turns": [
  {"toolCalls": [{"id": "call_q", "name": "question_async", "arguments": {"title": "Release", "questions": [{"id": "q1", "question": "Which channel?", "options": [{"label": "stable"}, {"label": "beta"}], "custom": false}]}}]},
  {"text": "Asked."},
  {"text": "Going with the answer."}
]}`

// Questions over ACP (Zuno's extension methods on the QuestionPort): the client is told of
// the request the turn published, answers it, and a second answer, from the editor or from
// the HTTP face, gets question_not_pending (the HTTP face's 404).
func TestQuestionsOverACP(t *testing.T) {
	w := newWorld(t, questionScript, "", nil)
	base := w.serve()
	p := w.acp()
	initialize(p)
	sid := newSession(p, 2, w.dir)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
		"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "ask me"}}}})
	p.send(string(b))
	note, _ := p.until(func(m map[string]any) bool { return m["method"] == "_zuno/question" })
	q := note["params"].(map[string]any)["question"].(map[string]any)
	rid := q["requestId"].(string)
	if q["revision"] != float64(1) || q["title"] != "Release" {
		t.Errorf("published %v", q)
	}
	resp, _ := p.until(func(m map[string]any) bool { return m["method"] == nil && jsonID(m) == "3" })
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", resp)
	}
	list, _ := p.call(4, "_zuno/session/questions", map[string]any{"sessionId": sid})
	if qs := list["result"].(map[string]any)["questions"].([]any); len(qs) != 1 {
		t.Errorf("open questions %v", list)
	}
	answer := map[string]any{"sessionId": sid, "requestId": rid, "expectedRevision": 1,
		"answers": []any{map[string]any{"itemId": "q1", "selected": []any{"beta"}}}}
	resp, _ = p.call(5, "_zuno/session/question/reply", answer)
	if resp["result"] == nil {
		t.Fatalf("the answer: %v", resp)
	}
	answer["expectedRevision"] = 2
	resp, _ = p.call(6, "_zuno/session/question/reply", answer)
	if code, zc := errCode(resp); code != -32002 || zc != "question_not_pending" {
		t.Errorf("a second answer: %v", resp)
	}
	answer["expectedRevision"], answer["commandId"] = 2, "cmd-http-1"
	body, _ := json.Marshal(answer)
	hr, err := http.Post(base+"/api/session/question/reply", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Body.Close()
	if hr.StatusCode != http.StatusNotFound {
		t.Errorf("the HTTP face's answer after the editor's: %d, want 404", hr.StatusCode)
	}
	answered := 0
	for _, e := range w.events(sid) {
		if e.Type == "question.answered.1" {
			answered++
			if e.Metadata.Actor != "acp" {
				t.Errorf("answer recorded by %q", e.Metadata.Actor)
			}
		}
	}
	if answered != 1 {
		t.Errorf("%d answers recorded, want 1", answered)
	}
}

// When the editor goes away (its end of standard input closes) during a prompt, the turn is
// interrupted and recorded so, and the process exits: nothing is left running or unrecorded.
func TestConnectionEndInterruptsTheTurn(t *testing.T) {
	w := newWorld(t, `{"turns": [{"delayMs": 30000, "text": "Too late."}]}`, "", nil)
	p := w.acp()
	initialize(p)
	sid := newSession(p, 2, w.dir)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
		"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "slow"}}}})
	p.send(string(b))
	for started := false; !started; {
		time.Sleep(100 * time.Millisecond)
		for _, e := range w.events(sid) {
			started = started || e.Type == "session.provider.request.1"
		}
	}
	begin := time.Now()
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("zuno acp exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("zuno acp did not exit when its input closed")
	}
	if d := time.Since(begin); d > 15*time.Second {
		t.Errorf("exiting took %s: the model's 30 s answer was waited for", d)
	}
	var reasons []string
	for _, e := range w.events(sid) {
		if e.Type == "session.turn.finished.1" {
			reasons = append(reasons, fmt.Sprint(e.data(t)["reason"]))
		}
	}
	if strings.Join(reasons, ",") != "interrupted" {
		t.Errorf("turns finished %v, want the one interrupted", reasons)
	}
}
