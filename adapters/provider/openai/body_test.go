package openai

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3/option"

	"github.com/zuno-run/zuno/adapters/provider/internal/wire"
	"github.com/zuno-run/zuno/domain/model"
)

// sdkBody is the body the SDK builds when it encodes the whole parameters itself, as the
// adapter sent them before it cached message encodings.
func sdkBody(t *testing.T, p *Provider, req model.Request) []byte {
	params, err := p.params(req)
	if err != nil {
		t.Fatal(err)
	}
	var ids model.WireIDs
	for _, m := range req.Messages {
		calls, result := wireIDs(m, &ids)
		params.Messages = append(params.Messages, p.message(m, calls, result))
	}
	body, err := wire.Render(func(mw wire.Middleware) error {
		s := p.chat.NewStreaming(context.Background(), params, option.WithMiddleware(mw))
		defer s.Close()
		return s.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// The body built from cached message encodings is byte for byte the body the SDK encodes
// itself, at the first request and at every later one of a growing conversation, in both
// dialects; a cached message sent again in another conversation, where its call ids map
// otherwise, is encoded with that conversation's ids.
func TestCachedBodyIsTheSDKBody(t *testing.T) {
	tool := model.Tool{Name: "read", Description: "read <a> & b", Schema: json.RawMessage(`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}}}`)}
	conv := []model.Message{
		{Role: model.RoleSystem, Text: "system <b> & \"q\""},
		{Role: model.RoleDeveloper, Text: "dev \u2028 é \xff"},
		{Role: model.RoleUser, Text: "go"},
		{Role: model.RoleAssistant, Text: "", ToolCalls: []model.ToolCall{{ID: "call_a", ProviderID: "call_0", Name: "read", Arguments: `{"a":1}`}}},
		{Role: model.RoleTool, ToolCallID: "call_a", Text: "result"},
		{Role: model.RoleAssistant, Text: "again", ToolCalls: []model.ToolCall{
			{ID: "call_b", ProviderID: "call_0", Name: "read", Arguments: `{}`},
			{ID: "call_c", ProviderID: "call_0", Name: "read", Arguments: `{"z":"x"}`}}},
		{Role: model.RoleTool, ToolCallID: "call_b", Text: "result"},
		{Role: model.RoleTool, ToolCallID: "call_c", Text: "result"},
		{Role: model.RoleAssistant, Text: "done"},
		{Role: model.RoleAssistant},
	}
	for _, d := range []Dialect{DialectCompatible, DialectOpenAI} {
		p := New(Options{BaseURL: "http://h/v1", IgnoreEnv: true, Dialect: d})
		for _, n := range []int{3, 5, 8, 9, 10} { // the conversation as it grows, step by step
			req := model.Request{Model: "m", Messages: conv[:n], Tools: []model.Tool{tool}, MaxTokens: 100,
				ToolChoice: model.ToolChoice{Mode: model.ToolChoiceAuto}}
			want := sdkBody(t, p, req)
			for range 2 {
				got, err := p.RenderWire(req)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Fatalf("%s, %d messages:\ncached %s\nsdk    %s", d, n, got, want)
				}
			}
		}
		// The same result text answering a call whose wire id is now the runtime's own.
		other := []model.Message{conv[2],
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_a", Name: "read", Arguments: `{"a":1}`}}},
			{Role: model.RoleTool, ToolCallID: "call_a", Text: "result"}}
		req := model.Request{Model: "m", Messages: other}
		if got, want := mustRender(t, p, req), sdkBody(t, p, req); string(got) != string(want) {
			t.Fatalf("cached\n%s\nsdk\n%s", got, want)
		}
	}
}

func mustRender(t *testing.T, p *Provider, req model.Request) []byte {
	b, err := p.RenderWire(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Requests of one provider from many goroutines share the cache safely (run with -race).
func TestCachedBodyConcurrent(t *testing.T) {
	p := New(Options{BaseURL: "http://h/v1", IgnoreEnv: true})
	req := model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Text: "go"},
		{Role: model.RoleAssistant, Text: "x"}}}
	want := sdkBody(t, p, req)
	done := make(chan []byte)
	for range 8 {
		go func() {
			b, _ := p.RenderWire(req)
			done <- b
		}()
	}
	for range 8 {
		if got := <-done; string(got) != string(want) {
			t.Fatalf("concurrent body %s", got)
		}
	}
}

// A provider keeps a thread per conversation: two sessions sending in turn each continue their
// own, a message changed in place in the caller's slice is encoded again rather than served
// from the thread, and a fault in a message appended after a validated prefix is still found.
func TestThreadsFollowEachConversation(t *testing.T) {
	p := New(Options{BaseURL: "http://h/v1", IgnoreEnv: true})
	grow := func(conv []model.Message, who string, i int) []model.Message {
		id := fmt.Sprintf("call_%s%d", who, i)
		return append(conv, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, ProviderID: "call_0", Name: "read", Arguments: `{}`}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, Text: who + " result"})
	}
	a := []model.Message{{Role: model.RoleSystem, Text: "sys"}, {Role: model.RoleUser, Text: "a"}}
	b := []model.Message{{Role: model.RoleSystem, Text: "sys"}, {Role: model.RoleUser, Text: "b"}}
	for i := range 4 {
		for _, conv := range [][]model.Message{a, b} {
			req := model.Request{Model: "m", Messages: conv}
			if got, want := mustRender(t, p, req), sdkBody(t, p, req); string(got) != string(want) {
				t.Fatalf("step %d:\ncached %s\nsdk    %s", i, got, want)
			}
		}
		if n := len(p.threads.list); n != 2 {
			t.Fatalf("step %d: %d threads for two conversations", i, n)
		}
		a, b = grow(a, "a", i), grow(b, "b", i)
	}
	a[1].Text = "changed in place"
	req := model.Request{Model: "m", Messages: a}
	if got, want := mustRender(t, p, req), sdkBody(t, p, req); string(got) != string(want) {
		t.Fatalf("a message changed in place was served from the thread:\n%s", got)
	}
	bad := model.Request{Model: "m", Messages: append(b[:len(b):len(b)], model.Message{Role: model.RoleTool, ToolCallID: "call_b0", Text: "twice"})}
	var me *model.Error
	if _, err := p.RenderWire(bad); !errors.As(err, &me) || me.Code() != model.CodeInvalidRequest || me.Provider != "openai" {
		t.Fatalf("a second result for an answered call: %v", err)
	}
}

// A retried request sends the same body again, the SDK's added fields spliced in once.
func TestRetrySendsTheSameBody(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if len(bodies) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := New(Options{BaseURL: srv.URL + "/v1", IgnoreEnv: true, MaxRetries: 1})
	req := model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Text: "go"}}}
	if _, err := model.Collect(p.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	want := string(sdkBody(t, p, req))
	if len(bodies) != 2 || bodies[0] != want || bodies[1] != want {
		t.Fatalf("bodies %q, want twice %s", bodies, want)
	}
}

// A request's body starts with the thread's encoded messages, sent where the thread keeps
// them rather than copied: a body sent earlier, read again (as a retry reads it) after its
// conversation has grown by later requests, is still the bytes it was, and the wire tap's
// digest of each is the digest of its bytes, though the tap hashes only what follows the
// thread's part.
func TestSentBodyOutlivesItsThread(t *testing.T) {
	p := New(Options{BaseURL: "http://h/v1", IgnoreEnv: true})
	errHeld := errors.New("held, not sent")
	type sent struct {
		again func() (io.ReadCloser, error)
		bytes string
	}
	var held []sent
	conv := []model.Message{{Role: model.RoleSystem, Text: "sys"}, {Role: model.RoleUser, Text: "go"}}
	for i := range 40 {
		req := model.Request{Model: "m", Messages: conv, Tools: []model.Tool{{Name: "read", Schema: json.RawMessage(`{"type":"object"}`)}}}
		ctx, c := model.CaptureWire(context.Background())
		var s sent
		p.send(ctx, mustBody(t, p, req), option.WithMiddleware(wire.Tap(ctx, p.Mapping())),
			option.WithMiddleware(func(r *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
				b, err := io.ReadAll(r.Body)
				s = sent{again: r.GetBody, bytes: string(b)}
				return nil, errors.Join(err, errHeld)
			})).Close()
		w, _ := c.Wire()
		if want := string(sdkBody(t, p, req)); s.bytes != want || w.RequestSHA256 != digestOf(s.bytes) || w.RequestBytes != int64(len(want)) {
			t.Fatalf("step %d: sent %s (recorded %s over %d bytes)\nsdk  %s", i, s.bytes, w.RequestSHA256, w.RequestBytes, want)
		}
		held = append(held, s)
		id := fmt.Sprintf("call_%d", i)
		conv = append(conv, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "read", Arguments: `{}`}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, Text: fmt.Sprintf("result %d", i)})
	}
	for i, s := range held {
		r, _ := s.again()
		if b, _ := io.ReadAll(r); string(b) != s.bytes {
			t.Fatalf("the body of step %d changed after later steps:\nnow %s\nwas %s", i, b, s.bytes)
		}
	}
}

func mustBody(t *testing.T, p *Provider, req model.Request) encoded {
	th, err := p.validated(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.body(req, th)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
