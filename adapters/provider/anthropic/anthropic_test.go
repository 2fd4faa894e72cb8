package anthropic_test

// The responses served here are recorded/synthesised wire exchanges in testdata/*.http: no
// paid API is reachable from where these tests run, so each file is a raw HTTP response
// written to match Anthropic's documented Messages streaming format (message_start,
// content_block_*, message_delta, message_stop, ping and error events) and its error
// bodies. They are replayed through the real anthropic-sdk-go client from a local
// httptest server.

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/replay"
	"github.com/zuno-run/zuno/domain/model"
)

const messagesPath = "POST /v1/messages"

func newProvider(t *testing.T, routes map[string]string, o anthropic.Options) (*anthropic.Provider, *replay.Server) {
	t.Helper()
	for k, v := range routes {
		routes[k] = filepath.Join("testdata", v)
	}
	srv := replay.New(t, routes)
	o.BaseURL, o.APIKey = srv.URL, "sk-ant-test"
	return anthropic.New(o), srv
}

func conversation() model.Request {
	return model.Request{
		Model: "claude-sonnet-4-5",
		Messages: []model.Message{
			{Role: model.RoleSystem, Text: "You are zuno, a coding agent."},
			{Role: model.RoleDeveloper, Text: "Plan: 1. read go.mod"},
			{Role: model.RoleUser, Text: "What is the module path?"},
			{Role: model.RoleAssistant, Text: "Reading.", ToolCalls: []model.ToolCall{
				{ID: "toolu_prev1", Name: "read", Arguments: `{"path":"go.mod"}`},
				{ID: "toolu_prev2", Name: "ls", Arguments: `not json`},
			}},
			{Role: model.RoleTool, ToolCallID: "toolu_prev1", Text: "module github.com/zuno-run/zuno"},
			{Role: model.RoleTool, ToolCallID: "toolu_prev2", Text: "", IsError: true},
			{Role: model.RoleDeveloper, Text: "Todo list changed."},
			{Role: model.RoleUser, Text: "And the grep for it?"},
		},
		Tools: []model.Tool{
			{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "ls"},
		},
		ToolChoice: model.ToolChoice{Mode: model.ToolChoiceRequired},
	}
}

func TestStreamText(t *testing.T) {
	p, srv := newProvider(t, map[string]string{messagesPath: "messages_text.http"}, anthropic.Options{})
	got, err := model.Collect(p.Stream(context.Background(), conversation()))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Response{
		ID: "msg_01XFDUDYJgAACzvnptvVoYEL", Model: "claude-sonnet-4-5-20250929",
		Text: "The module path is `github.com/zuno-run/zuno`.",
		// input_tokens 14 + cache write 312 + cache read 2480: the whole prompt.
		Usage:        model.Usage{InputTokens: 2806, OutputTokens: 17, CacheReadTokens: 2480, CacheWriteTokens: 312},
		FinishReason: model.FinishStop, ProviderFinishReason: "end_turn",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("response\n got %+v\nwant %+v", got, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1 (the SDK must not retry on its own)", len(reqs))
	}
	// SDK v2.15 sends an API key as a bearer token, not as x-api-key.
	if reqs[0].Header.Get("Authorization") != "Bearer sk-ant-test" || reqs[0].Header.Get("Anthropic-Version") == "" {
		t.Fatalf("headers %v", reqs[0].Header)
	}
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		System    []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"system"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		Tools      []map[string]any `json:"tools"`
		ToolChoice map[string]any   `json:"tool_choice"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "claude-sonnet-4-5" || body.MaxTokens != anthropic.DefaultMaxTokens || !body.Stream {
		t.Errorf("model %q max_tokens %d stream %v", body.Model, body.MaxTokens, body.Stream)
	}
	if len(body.System) != 2 || body.System[0].Text != "You are zuno, a coding agent." || body.System[1].Text != "Plan: 1. read go.mod" {
		t.Errorf("system %+v: the leading system and developer messages form the system prompt", body.System)
	}
	if body.System[0].CacheControl != nil || body.System[1].CacheControl == nil {
		t.Errorf("the cache breakpoint belongs on the last system block only")
	}
	var shape []string
	for _, m := range body.Messages {
		var types []string
		for _, c := range m.Content {
			types = append(types, c["type"].(string))
		}
		shape = append(shape, m.Role+":"+strings.Join(types, ","))
	}
	// The tool results, the late developer note and the next user text share one user turn,
	// results first, as the API requires.
	want2 := []string{"user:text", "assistant:text,tool_use,tool_use", "user:tool_result,tool_result,text,text"}
	if !reflect.DeepEqual(shape, want2) {
		t.Fatalf("messages %v, want %v", shape, want2)
	}
	asst := body.Messages[1].Content
	if !reflect.DeepEqual(asst[1]["input"], map[string]any{"path": "go.mod"}) || !reflect.DeepEqual(asst[2]["input"], map[string]any{}) {
		t.Errorf("tool_use inputs %v / %v (invalid arguments replay as {})", asst[1]["input"], asst[2]["input"])
	}
	results := body.Messages[2].Content
	if results[0]["tool_use_id"] != "toolu_prev1" || results[1]["tool_use_id"] != "toolu_prev2" || results[1]["is_error"] != true {
		t.Errorf("tool results %v", results[:2])
	}
	if _, ok := results[1]["content"]; ok {
		t.Errorf("an empty result must not carry an empty text block: %v", results[1])
	}
	if results[2]["text"] != "Todo list changed." || results[3]["cache_control"] == nil {
		t.Errorf("user turn tail %v", results[2:])
	}
	read := body.Tools[0]
	schema := read["input_schema"].(map[string]any)
	if read["name"] != "read" || read["description"] != "Read a file." || schema["additionalProperties"] != false ||
		!reflect.DeepEqual(schema["required"], []any{"path"}) || schema["type"] != "object" {
		t.Errorf("tool read %v", read)
	}
	if body.Tools[1]["cache_control"] == nil || body.Tools[0]["cache_control"] != nil {
		t.Errorf("the cache breakpoint belongs on the last tool")
	}
	if body.ToolChoice["type"] != "any" {
		t.Errorf("tool_choice %v, want any for required", body.ToolChoice)
	}
}

func TestStreamToolUse(t *testing.T) {
	p, _ := newProvider(t, map[string]string{messagesPath: "messages_tool_use.http"}, anthropic.Options{})
	var argDeltas int
	var a model.Accumulator
	for ev, err := range p.Stream(context.Background(), conversation()) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(model.ToolCallArgsDelta); ok {
			argDeltas++
		}
		a.Add(ev)
	}
	want := model.Response{
		ID: "msg_014p7gG3wDgGV9EUtLvnow3U", Model: "claude-sonnet-4-5-20250929",
		Text: "I'll read go.mod first.",
		ToolCalls: []model.ToolCall{
			{ID: "1", ProviderID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read", Arguments: `{"path": "go.mod", "limit": 40}`},
			{ID: "2", ProviderID: "toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8o", Name: "ls", Arguments: `{}`},
		},
		Usage:        model.Usage{InputTokens: 3264, OutputTokens: 89, CacheReadTokens: 2792},
		FinishReason: model.FinishToolCalls, ProviderFinishReason: "tool_use",
	}
	if got := a.Response(); !reflect.DeepEqual(got, want) {
		t.Fatalf("response\n got %+v\nwant %+v", got, want)
	}
	if argDeltas != 3 {
		t.Fatalf("%d argument deltas, want the 3 non-empty input_json_delta pieces", argDeltas)
	}
}

func TestErrors(t *testing.T) {
	tests := []replay.ErrorCase{
		{File: "error_401.http", Code: model.CodeAuth, Status: 401, RetryAfter: 0, FixHas: "ANTHROPIC_API_KEY", Partial: false},
		{File: "error_429.http", Code: model.CodeRateLimit, Status: 429, RetryAfter: 17 * time.Second, FixHas: "wait 17s", Partial: false},
		{File: "error_400_prompt_too_long.http", Code: model.CodeContextOverflow, Status: 400, RetryAfter: 0, FixHas: "shorten the conversation", Partial: false},
		{File: "error_529_overloaded.http", Code: model.CodeRateLimit, Status: 529, RetryAfter: 0, FixHas: "overloaded", Partial: false},
		{File: "messages_overloaded_midstream.http", Code: model.CodeRateLimit, Status: 0, RetryAfter: 0, FixHas: "overloaded", Partial: true},
		{File: "messages_truncated.http", Code: model.CodeTransport, Status: 0, RetryAfter: 0, FixHas: "retry", Partial: true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.File, ".http"), func(t *testing.T) {
			p, srv := newProvider(t, map[string]string{messagesPath: tt.File}, anthropic.Options{})
			replay.CheckError(t, p, srv, conversation(), "anthropic", tt)
		})
	}
}

func TestMaxTokensAndToolChoice(t *testing.T) {
	p, srv := newProvider(t, map[string]string{messagesPath: "messages_text.http"}, anthropic.Options{})
	req := conversation()
	req.MaxTokens = 300
	req.ToolChoice = model.ToolChoice{Mode: model.ToolChoiceTool, Name: "read"}
	if _, err := model.Collect(p.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, `"max_tokens":300`) ||
		!strings.Contains(body, `"tool_choice":{"name":"read","type":"tool"}`) {
		t.Fatalf("request body %s", body)
	}
}

func TestNoKeyFailsBeforeSending(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	p := anthropic.New(anthropic.Options{})
	_, err := model.Collect(p.Stream(context.Background(), conversation()))
	var me *model.Error
	if !errors.As(err, &me) || me.Code() != model.CodeAuth || !strings.Contains(me.Fix, "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	if _, err := p.Models(context.Background()); !model.HasCode(err, model.CodeAuth) {
		t.Fatalf("Models() err = %v", err)
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	srv := replay.New(t, map[string]string{"GET /v1/models": filepath.Join("testdata", "models.http")})
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	if _, err := anthropic.New(anthropic.Options{}).Models(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-ant-from-env" {
		t.Fatalf("Authorization = %q", got)
	}
}

func TestOnlySystemMessages(t *testing.T) {
	p, srv := newProvider(t, map[string]string{}, anthropic.Options{})
	req := model.Request{Model: "claude-sonnet-4-5", Messages: []model.Message{{Role: model.RoleSystem, Text: "hi"}}}
	if _, err := model.Collect(p.Stream(context.Background(), req)); !model.HasCode(err, model.CodeInvalidRequest) {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("an unsendable request was sent")
	}
}

func TestCancelledContext(t *testing.T) {
	p, _ := newProvider(t, map[string]string{messagesPath: "messages_text.http"}, anthropic.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := model.Collect(p.Stream(ctx, conversation())); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestModels(t *testing.T) {
	p, srv := newProvider(t, map[string]string{"GET /v1/models": "models.http"}, anthropic.Options{})
	got, err := p.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ModelInfo{
		{ID: "claude-sonnet-4-5-20250929", DisplayName: "Claude Sonnet 4.5", ContextWindow: 200000, MaxOutputTokens: 64000,
			Tools: model.Supported, Reasoning: model.Supported},
		// A listing without limits or capabilities leaves them unknown rather than guessed.
		{ID: "claude-3-5-haiku-20241022", DisplayName: "Claude Haiku 3.5", Tools: model.Supported},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Models()\n got %+v\nwant %+v", got, want)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests: has_more is false, so one page", n)
	}
}

func TestModelsAuthError(t *testing.T) {
	p, _ := newProvider(t, map[string]string{"GET /v1/models": "error_401.http"}, anthropic.Options{})
	if _, err := p.Models(context.Background()); !model.HasCode(err, model.CodeAuth) {
		t.Fatalf("err = %v, want auth", err)
	}
}
