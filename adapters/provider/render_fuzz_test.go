package provider_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/domain/model"
)

// refusingTransport answers every request with a 400 after reading its body: the body the SDK
// sent, without a socket, so the fuzzer runs many requests a second.
type refusingTransport struct{ body []byte }

func (rt *refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.body, _ = io.ReadAll(r.Body)
	return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"error":{"message":"no"}}`)), Request: r}, nil
}

// Whatever text and arguments a conversation holds, the body rendered again from the recorded
// mapping is the body the SDK sent, for every adapter.
func FuzzRenderWire(f *testing.F) {
	f.Add("read go.mod", `{"path":"go.mod"}`, "module x\n", "call_0", uint8(0))
	f.Add("<script>&\u2028", `{"a":"\u00e9"}`, "\xff\xfe", "", uint8(3))
	f.Add("", `not json`, "", "toolu_01", uint8(4))
	f.Fuzz(func(t *testing.T, text, args, result, providerID string, which uint8) {
		rt := &refusingTransport{}
		client := &http.Client{Transport: rt}
		adapters := []model.Provider{
			openai.New(openai.Options{BaseURL: "http://h/v1", APIKey: "k", Dialect: openai.DialectCompatible, IgnoreEnv: true, HTTPClient: client}),
			openai.New(openai.Options{BaseURL: "http://h/v1", APIKey: "k", Dialect: openai.DialectOpenAI, IgnoreEnv: true, HTTPClient: client}),
			openai.New(openai.Options{BaseURL: "http://h/v1", APIKey: "k", NoToolChoice: true, IgnoreEnv: true, HTTPClient: client}),
			openai.NewResponses(openai.Options{BaseURL: "http://h/v1", APIKey: "k", IgnoreEnv: true, HTTPClient: client}),
			anthropic.New(anthropic.Options{BaseURL: "http://h", APIKey: "k", HTTPClient: client}),
		}
		req := model.Request{Model: "m", Messages: []model.Message{
			{Role: model.RoleDeveloper, Text: "dev " + text},
			{Role: model.RoleUser, Text: "u" + text},
			{Role: model.RoleAssistant, Text: text, ToolCalls: []model.ToolCall{{ID: "call_1", ProviderID: providerID, Name: "read", Arguments: args}}},
			{Role: model.RoleTool, ToolCallID: "call_1", Text: result},
		}, Tools: []model.Tool{{Name: "read"}}, ToolChoice: model.ToolChoice{Mode: model.ToolChoiceAuto}}
		if req.Validate() != nil {
			return
		}
		ctx, c := model.CaptureWire(context.Background())
		for range adapters[int(which)%len(adapters)].Stream(ctx, req) {
		}
		w, sent := c.Wire()
		if !sent {
			t.Fatal("a valid request was not sent")
		}
		again, err := provider.RenderWire(w.Adapter, w.MappingVersion, w.Mapping, req)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(rt.body) || sum(again) != w.RequestSHA256 {
			t.Fatalf("rendered\n%q\nsent\n%q", again, rt.body)
		}
	})
}
