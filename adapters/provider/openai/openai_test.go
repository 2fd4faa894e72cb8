package openai_test

// The responses served here are recorded/synthesised wire exchanges in testdata/*.http: no
// paid API is reachable from where these tests run, so each file is a raw HTTP response
// written to match the documented Chat Completions wire format (and, for the compat_* and
// vllm_* files, what Ollama and vLLM send). They are replayed through the real openai-go
// client from a local httptest server.

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/adapters/provider/replay"
	"github.com/zuno-run/zuno/domain/model"
)

const chatPath = "POST /v1/chat/completions"

func newProvider(t *testing.T, routes map[string]string, dialect openai.Dialect) (*openai.Provider, *replay.Server) {
	t.Helper()
	for k, v := range routes {
		routes[k] = filepath.Join("testdata", v)
	}
	srv := replay.New(t, routes)
	p := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key", Dialect: dialect})
	return p, srv
}

func conversation() model.Request {
	return model.Request{
		Model: "gpt-4.1",
		Messages: []model.Message{
			{Role: model.RoleSystem, Text: "You are zuno, a coding agent."},
			{Role: model.RoleDeveloper, Text: "Plan: 1. read go.mod"},
			{Role: model.RoleUser, Text: "What is the module path?"},
			{Role: model.RoleAssistant, Text: "Reading.", ToolCalls: []model.ToolCall{{ID: "call_prev", Name: "read", Arguments: `{"path":"go.mod"}`}}},
			{Role: model.RoleTool, ToolCallID: "call_prev", Text: "module github.com/zuno-run/zuno"},
			{Role: model.RoleUser, Text: "And the grep for it?"},
		},
		Tools: []model.Tool{
			{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "grep"},
		},
		ToolChoice: model.ToolChoice{Mode: model.ToolChoiceAuto},
		MaxTokens:  1024,
	}
}

func TestStreamText(t *testing.T) {
	p, srv := newProvider(t, map[string]string{chatPath: "chat_text.http"}, openai.DialectOpenAI)
	var deltas int
	var a model.Accumulator
	for ev, err := range p.Stream(context.Background(), conversation()) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(model.TextDelta); ok {
			deltas++
		}
		a.Add(ev)
	}
	want := model.Response{
		ID: "chatcmpl-BrC7nQ2xv8Yk3LmZ4pT6sWq1eRfGh", Model: "gpt-4.1-2025-04-14",
		Text:         "The module path is `github.com/zuno-run/zuno`.",
		Usage:        model.Usage{InputTokens: 1893, OutputTokens: 12, CacheReadTokens: 1664},
		FinishReason: model.FinishStop, ProviderFinishReason: "stop",
	}
	if got := a.Response(); !reflect.DeepEqual(got, want) {
		t.Fatalf("response\n got %+v\nwant %+v", got, want)
	}
	if deltas != 4 {
		t.Fatalf("%d text deltas, want the 4 streamed chunks", deltas)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1 (the SDK must not retry on its own)", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test-key" {
		t.Fatalf("Authorization = %q", got)
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	check := map[string]any{
		"model":          "gpt-4.1",
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"tool_choice":    "auto",
		// The official dialect: reasoning models accept only max_completion_tokens.
		"max_completion_tokens": float64(1024),
	}
	for k, v := range check {
		if !reflect.DeepEqual(body[k], v) {
			t.Errorf("request %s = %#v, want %#v", k, body[k], v)
		}
	}
	if _, ok := body["max_tokens"]; ok {
		t.Error("request has max_tokens as well")
	}
	msgs := body["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if want := []string{"system", "developer", "user", "assistant", "tool", "user"}; !reflect.DeepEqual(roles, want) {
		t.Errorf("roles %v, want %v", roles, want)
	}
	asst := msgs[3].(map[string]any)
	call := asst["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call_prev" || call["type"] != "function" ||
		call["function"].(map[string]any)["arguments"] != `{"path":"go.mod"}` || asst["content"] != "Reading." {
		t.Errorf("assistant message %v", asst)
	}
	if tool := msgs[4].(map[string]any); tool["tool_call_id"] != "call_prev" || tool["content"] != "module github.com/zuno-run/zuno" {
		t.Errorf("tool message %v", tool)
	}
	tools := body["tools"].([]any)
	read := tools[0].(map[string]any)["function"].(map[string]any)
	if read["name"] != "read" || read["description"] != "Read a file." ||
		!reflect.DeepEqual(read["parameters"].(map[string]any)["required"], []any{"path"}) {
		t.Errorf("tool read = %v", read)
	}
	grep := tools[1].(map[string]any)["function"].(map[string]any)
	if !reflect.DeepEqual(grep["parameters"], map[string]any{"type": "object", "properties": map[string]any{}}) {
		t.Errorf("a tool without schema must get an empty object schema, got %v", grep["parameters"])
	}
}

func TestCompatibleDialect(t *testing.T) {
	p, srv := newProvider(t, map[string]string{chatPath: "chat_text.http"}, openai.DialectAuto)
	if _, err := model.Collect(p.Stream(context.Background(), conversation())); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct{ Role string } `json:"messages"`
		Max      *int                    `json:"max_tokens"`
		MaxComp  *int                    `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	// A local server is not api.openai.com, so auto means compatible.
	if body.Messages[1].Role != "system" || body.Max == nil || *body.Max != 1024 || body.MaxComp != nil {
		t.Fatalf("compatible request: developer sent as %q, max_tokens %v, max_completion_tokens %v", body.Messages[1].Role, body.Max, body.MaxComp)
	}
}

func TestStreamToolCalls(t *testing.T) {
	p, _ := newProvider(t, map[string]string{chatPath: "chat_tool_calls.http"}, openai.DialectOpenAI)
	argDeltas := map[string]int{}
	var a model.Accumulator
	for ev, err := range p.Stream(context.Background(), conversation()) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := ev.(model.ToolCallArgsDelta); ok {
			argDeltas[d.ID]++
		}
		a.Add(ev)
	}
	want := model.Response{
		ID: "chatcmpl-BrC9aK1mN3pQ5rS7tU9vW1xY3zA5b", Model: "gpt-4.1-2025-04-14",
		ToolCalls: []model.ToolCall{
			// The index keys a call within the response; the provider's id is kept beside it.
			{ID: "0", ProviderID: "call_Xk2pL9mQ4rT7vW1yZ3aB5cD8", Name: "read", Arguments: `{"path": "go.mod"}`},
			{ID: "1", ProviderID: "call_Qw8eR4tY6uI2oP0aS1dF3gH5", Name: "grep", Arguments: `{"pattern": "^module ", "glob": "*.mod"}`},
		},
		Usage:        model.Usage{InputTokens: 2317, OutputTokens: 58, CacheReadTokens: 2048},
		FinishReason: model.FinishToolCalls, ProviderFinishReason: "tool_calls",
	}
	if got := a.Response(); !reflect.DeepEqual(got, want) {
		t.Fatalf("response\n got %+v\nwant %+v", got, want)
	}
	if argDeltas["0"] != 3 || argDeltas["1"] != 3 {
		t.Fatalf("argument deltas %v, want 3 per call as streamed", argDeltas)
	}
}

func TestCompatibleServerToolCall(t *testing.T) {
	p, _ := newProvider(t, map[string]string{chatPath: "compat_tool_call_no_id.http"}, openai.DialectAuto)
	got, err := model.Collect(p.Stream(context.Background(), conversation()))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Response{
		ID: "chatcmpl-417", Model: "qwen3:8b", Text: "Reading it.",
		// No id on the wire: none is made up here; the turn derives the runtime's.
		ToolCalls: []model.ToolCall{{ID: "0", Name: "read", Arguments: `{"path":"go.mod"}`}},
		Usage:     model.Usage{InputTokens: 402, OutputTokens: 21},
		// The server said "stop" after a tool call; the calls still have to run.
		FinishReason: model.FinishToolCalls, ProviderFinishReason: "stop",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("response\n got %+v\nwant %+v", got, want)
	}
}

func TestErrors(t *testing.T) {
	tests := []replay.ErrorCase{
		{File: "error_401.http", Code: model.CodeAuth, Status: 401, RetryAfter: 0, FixHas: "OPENAI_API_KEY", Partial: false},
		{File: "error_429.http", Code: model.CodeRateLimit, Status: 429, RetryAfter: 2 * time.Second, FixHas: "wait 2s", Partial: false},
		{File: "error_429_reset_headers.http", Code: model.CodeRateLimit, Status: 429, RetryAfter: 6 * time.Minute, FixHas: "wait 6m0s", Partial: false},
		{File: "error_400_context_length.http", Code: model.CodeContextOverflow, Status: 400, RetryAfter: 0, FixHas: "shorten the conversation", Partial: false},
		{File: "error_404_model.http", Code: model.CodeInvalidRequest, Status: 404, RetryAfter: 0, FixHas: "zuno models", Partial: false},
		{File: "chat_truncated.http", Code: model.CodeTransport, Status: 0, RetryAfter: 0, FixHas: "retry", Partial: true},
		{File: "vllm_stream_error.http", Code: model.CodeContextOverflow, Status: 400, RetryAfter: 0, FixHas: "shorten the conversation", Partial: true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.File, ".http"), func(t *testing.T) {
			p, srv := newProvider(t, map[string]string{chatPath: tt.File}, openai.DialectAuto)
			replay.CheckError(t, p, srv, conversation(), "openai", tt)
		})
	}
}

func TestTransportError(t *testing.T) {
	srv := replay.New(t, nil)
	url := srv.URL
	srv.Close() // nothing listens there any more
	p := openai.New(openai.Options{BaseURL: url + "/v1", APIKey: "k"})
	_, err := model.Collect(p.Stream(context.Background(), conversation()))
	var me *model.Error
	if !errors.As(err, &me) || me.Code() != model.CodeTransport || !me.Retryable() || !strings.Contains(me.Fix, url) {
		t.Fatalf("err = %v, want transport naming the base URL", err)
	}
}

func TestCancelledContext(t *testing.T) {
	p, _ := newProvider(t, map[string]string{chatPath: "chat_text.http"}, openai.DialectAuto)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := model.Collect(p.Stream(ctx, conversation())); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestInvalidRequestIsNotSent(t *testing.T) {
	p, srv := newProvider(t, map[string]string{}, openai.DialectAuto)
	req := conversation()
	req.Messages = req.Messages[:4] // the tool call is left unanswered
	_, err := model.Collect(p.Stream(context.Background(), req))
	var me *model.Error
	if !errors.As(err, &me) || me.Code() != model.CodeInvalidRequest || me.Provider != "openai" || me.Field != "messages[4]" {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent for an invalid request", n)
	}
}

func TestModels(t *testing.T) {
	tests := []struct {
		file string
		want []model.ModelInfo
	}{
		{"models.http", []model.ModelInfo{{ID: "gpt-4.1-2025-04-14"}, {ID: "gpt-4.1"}, {ID: "o4-mini"}}},
		{"vllm_models.http", []model.ModelInfo{{ID: "Qwen/Qwen2.5-Coder-32B-Instruct", ContextWindow: 32768}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, srv := newProvider(t, map[string]string{"GET /v1/models": tt.file}, openai.DialectAuto)
			got, err := p.Models(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Models() = %+v, want %+v", got, tt.want)
			}
			if auth := srv.Requests()[0].Header.Get("Authorization"); auth != "Bearer sk-test-key" {
				t.Fatalf("Authorization = %q", auth)
			}
		})
	}
}

func TestModelsAuthError(t *testing.T) {
	p, _ := newProvider(t, map[string]string{"GET /v1/models": "error_401.http"}, openai.DialectAuto)
	if _, err := p.Models(context.Background()); !model.HasCode(err, model.CodeAuth) {
		t.Fatalf("err = %v, want auth", err)
	}
}

// Options left empty come from OPENAI_BASE_URL and OPENAI_API_KEY, so one binary serves
// OpenAI and a local server by environment alone.
func TestEnvironmentDefaults(t *testing.T) {
	srv := replay.New(t, map[string]string{"GET /v1/models": filepath.Join("testdata", "models.http")})
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-should-not-be-sent")
	if _, err := openai.New(openai.Options{}).Models(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "Bearer sk-from-env" || h.Get("OpenAI-Organization") != "" {
		t.Fatalf("headers %v", h)
	}
}

func TestNoKeyNoAuthorizationHeader(t *testing.T) {
	srv := replay.New(t, map[string]string{"GET /v1/models": filepath.Join("testdata", "vllm_models.http")})
	t.Setenv("OPENAI_API_KEY", "")
	p := openai.New(openai.Options{BaseURL: srv.URL + "/v1", Name: "vllm"})
	if _, err := p.Models(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Fatalf("Authorization = %q, want none for a keyless local server", h)
	}
}

// What a configured local family sets (adapters/provider, docs/config.md "Providers"): no
// tool_choice for servers without it, the configured headers, and never the host's OpenAI key.
func TestLocalServerOptions(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-host-must-not-leave")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/never")
	srv := replay.New(t, map[string]string{chatPath: filepath.Join("testdata", "chat_text.http")})
	p := openai.New(openai.Options{Name: "ollama", BaseURL: srv.URL + "/v1", IgnoreEnv: true, NoToolChoice: true,
		Dialect: openai.DialectCompatible, Headers: map[string]string{"X-Team": "blue"}})
	if _, err := model.Collect(p.Stream(context.Background(), conversation())); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if got.Header.Get("Authorization") != "" || got.Header.Get("X-Team") != "blue" {
		t.Fatalf("headers %v", got.Header)
	}
	if strings.Contains(string(got.Body), "tool_choice") || !strings.Contains(string(got.Body), `"tools"`) {
		t.Fatalf("body %s: tools kept, tool_choice left out", got.Body)
	}
}

const responsesPath = "POST /v1/responses"

// The Responses API adapter fails with the same codes as the Chat Completions one.
func TestResponsesErrors(t *testing.T) {
	tests := []replay.ErrorCase{
		{File: "error_401.http", Code: model.CodeAuth, Status: 401, FixHas: "OPENAI_API_KEY"},
		{File: "error_429.http", Code: model.CodeRateLimit, Status: 429, RetryAfter: 2 * time.Second, FixHas: "wait 2s"},
		{File: "error_400_context_length.http", Code: model.CodeContextOverflow, Status: 400, FixHas: "shorten the conversation"},
		{File: "responses_failed.http", Code: model.CodeTransport, FixHas: "retry", Partial: true},
		{File: "responses_cut.http", Code: model.CodeTransport, FixHas: "retry", Partial: true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.File, ".http"), func(t *testing.T) {
			srv := replay.New(t, map[string]string{responsesPath: filepath.Join("testdata", tt.File)})
			p := openai.NewResponses(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key"})
			replay.CheckError(t, p, srv, conversation(), "openai", tt)
		})
	}
}

func TestResponsesIncomplete(t *testing.T) {
	srv := replay.New(t, map[string]string{responsesPath: filepath.Join("testdata", "responses_incomplete.http")})
	p := openai.NewResponses(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key"})
	got, err := model.Collect(p.Stream(context.Background(), conversation()))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Response{ID: "resp_i", Model: "gpt-5.1-2025-11-13", Text: "The answer is",
		Usage:        model.Usage{InputTokens: 90, OutputTokens: 16, ReasoningTokens: 12},
		FinishReason: model.FinishLength, ProviderFinishReason: "max_output_tokens"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("response\n got %+v\nwant %+v", got, want)
	}
	// The request: the conversation as input items, developer kept as developer, the tool
	// choice and output limit in the Responses API's names, nothing stored at OpenAI.
	body := string(srv.Requests()[0].Body)
	for _, w := range []string{`"role":"developer"`, `{"arguments":"{\"path\":\"go.mod\"}","call_id":"call_prev","name":"read","type":"function_call"}`,
		`{"output":"module github.com/zuno-run/zuno","call_id":"call_prev","type":"function_call_output"}`,
		`"max_output_tokens":1024`, `"tool_choice":"auto"`, `"store":false`} {
		if !strings.Contains(body, w) {
			t.Fatalf("request lacks %s:\n%s", w, body)
		}
	}
}

// A refusal is the answer's text, and recorded as a refusal as well (docs/turns.md, "Wire
// receipts").
func TestStreamRefusal(t *testing.T) {
	p, _ := newProvider(t, map[string]string{chatPath: "chat_refusal.http"}, openai.DialectOpenAI)
	got, err := model.Collect(p.Stream(context.Background(), conversation()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "I can't help with that." || got.Refusal != got.Text || got.FinishReason != model.FinishStop {
		t.Fatalf("response %+v", got)
	}
}
