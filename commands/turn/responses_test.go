package turn_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/adapters/provider/replay"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// responsesExchange writes the recorded Responses API stream of step n: a reasoning item
// with encrypted content, then a function call (or, last, the answer's text), as OpenAI
// streams them (event names, sequence numbers, the item then its done event).
func responsesExchange(t *testing.T, dir string, n int, last bool) string {
	t.Helper()
	var b strings.Builder
	seq := 0
	ev := func(typ, body string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, body)
		seq++
	}
	resp := fmt.Sprintf(`"id":"resp_%02d","object":"response","created_at":1764547200,"model":"gpt-5.1-2025-11-13"`, n)
	ev("response.created", `"response":{`+resp+`,"status":"in_progress","output":[],"usage":null}`)
	ev("response.output_item.added", fmt.Sprintf(`"output_index":0,"item":{"id":"rs_%02d","type":"reasoning","summary":[]}`, n))
	ev("response.output_item.done", fmt.Sprintf(`"output_index":0,"item":{"id":"rs_%02d","type":"reasoning","summary":[{"type":"summary_text","text":"Step %d: look again."}],"encrypted_content":"gAAAAB-enc-%02d"}`, n, n, n))
	if last {
		ev("response.output_item.added", `"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`)
		ev("response.output_text.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":"All "`)
		ev("response.output_text.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":"looked."`)
		ev("response.output_item.done", `"output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"All looked.","annotations":[]}]}`)
	} else {
		ev("response.output_item.added", fmt.Sprintf(`"output_index":1,"item":{"id":"fc_%02d","type":"function_call","status":"in_progress","arguments":"","call_id":"call_r%02d","name":"look"}`, n, n))
		ev("response.function_call_arguments.delta", fmt.Sprintf(`"item_id":"fc_%02d","output_index":1,"delta":"{\"n\":"`, n))
		ev("response.function_call_arguments.delta", fmt.Sprintf(`"item_id":"fc_%02d","output_index":1,"delta":"%d}"`, n, n))
		ev("response.output_item.done", fmt.Sprintf(`"output_index":1,"item":{"id":"fc_%02d","type":"function_call","status":"completed","arguments":"{\"n\":%d}","call_id":"call_r%02d","name":"look"}`, n, n, n))
	}
	ev("response.completed", `"response":{`+resp+`,"status":"completed","output":[],"usage":{"input_tokens":800,"input_tokens_details":{"cached_tokens":512},"output_tokens":60,"output_tokens_details":{"reasoning_tokens":40},"total_tokens":860}}`)
	path := filepath.Join(dir, fmt.Sprintf("responses_%02d.http", n))
	if err := os.WriteFile(path, []byte("HTTP/1.1 200 OK\nContent-Type: text/event-stream; charset=utf-8\n\n"+b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A Responses API session of 10 steps, through the real adapter against a local server
// replaying the exchanges: every step's reasoning item is recorded with its encrypted content
// and sent back, in order, before its function call, with store off; usage and the same
// request events as Chat Completions.
func TestResponsesSessionOfTenSteps(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for n := 1; n <= 10; n++ {
		files = append(files, responsesExchange(t, dir, n, n == 10))
	}
	seq := replay.NewSequence(files...)
	srv := httptest.NewServer(seq)
	t.Cleanup(srv.Close)
	h, _, look := wireHarness(t)
	p := openai.NewResponses(openai.Options{Name: "openai-responses", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "look ten times",
		Agent: buildAgent("look"), Provider: p, ProviderName: "openai-responses", Model: model.ModelInfo{ID: "gpt-5.1"},
		Tools: []turn.Tool{look}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != events.FinishCompleted || out.Steps != 10 || look.calls.Load() != 9 || out.Text != "All looked." ||
		out.Usage.InputTokens != 8000 || out.Usage.CacheReadTokens != 5120 {
		t.Fatalf("outcome %+v, %d calls", out, look.calls.Load())
	}
	var completed int
	for _, e := range h.events(t) {
		if r, ok := e.(events.ProviderRequest); ok && r.Status == events.RequestCompleted {
			completed++
			if len(r.Response.Reasoning) != 1 || r.Response.Reasoning[0].EncryptedContent != fmt.Sprintf("gAAAAB-enc-%02d", completed) {
				t.Fatalf("step %d reasoning %+v", completed, r.Response.Reasoning)
			}
		}
	}
	reqs := seq.Requests()
	body := string(reqs[9].Body)
	for _, w := range []string{`"store":false`, `"include":["reasoning.encrypted_content"]`, `"role":"user"`} {
		if !strings.Contains(body, w) {
			t.Fatalf("last request lacks %s:\n%s", w, body)
		}
	}
	at := 0
	for n := 1; n <= 9; n++ {
		for _, w := range []string{
			fmt.Sprintf(`"encrypted_content":"gAAAAB-enc-%02d"`, n),
			fmt.Sprintf(`"call_id":"call_r%02d"`, n), // the call, by the provider's id
			fmt.Sprintf(`"call_id":"call_r%02d"`, n), // its output
		} {
			i := strings.Index(body[at:], w)
			if i < 0 {
				t.Fatalf("step %d: last request lacks %s in order:\n%s", n, w, body)
			}
			at += i + len(w)
		}
	}
}
