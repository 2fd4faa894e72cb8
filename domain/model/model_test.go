package model_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/model"
)

func validRequest() model.Request {
	return model.Request{
		Model: "m",
		Messages: []model.Message{
			{Role: model.RoleSystem, Text: "be brief"},
			{Role: model.RoleUser, Text: "list files"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "c1", Name: "ls", Arguments: `{}`},
				{ID: "c2", Name: "ls", Arguments: `{"path":"a"}`},
			}},
			{Role: model.RoleTool, ToolCallID: "c2", Text: "a/x"},
			{Role: model.RoleTool, ToolCallID: "c1", Text: "x", IsError: true},
			{Role: model.RoleAssistant, Text: "done"},
		},
		Tools: []model.Tool{{Name: "ls", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
}

// validateCases edit a valid request; wantField is the field Validate names, "" for valid.
var validateCases = []struct {
	name      string
	edit      func(*model.Request)
	wantField string
}{
	{"valid", func(*model.Request) {}, ""},
	{"no model", func(r *model.Request) { r.Model = "" }, "model"},
	{"negative max tokens", func(r *model.Request) { r.MaxTokens = -1 }, "maxTokens"},
	{"no messages", func(r *model.Request) { r.Messages = nil }, "messages"},
	{"bad role", func(r *model.Request) { r.Messages[1].Role = "robot" }, "messages[1].role"},
	{"empty user text", func(r *model.Request) { r.Messages[1].Text = "" }, "messages[1].text"},
	{"tool name with space", func(r *model.Request) { r.Tools[0].Name = "list files" }, "tools[0].name"},
	{"duplicate tool", func(r *model.Request) { r.Tools = append(r.Tools, r.Tools[0]) }, "tools[1].name"},
	{"schema not object", func(r *model.Request) { r.Tools[0].Schema = json.RawMessage(`[1]`) }, "tools[0].schema"},
	{"schema wrong type", func(r *model.Request) { r.Tools[0].Schema = json.RawMessage(`{"type":"string"}`) }, "tools[0].schema"},
	{"schema absent is fine", func(r *model.Request) { r.Tools[0].Schema = nil }, ""},
	{"choice tool undeclared", func(r *model.Request) { r.ToolChoice = model.ToolChoice{Mode: model.ToolChoiceTool, Name: "rm"} }, "toolChoice.name"},
	{"choice tool declared", func(r *model.Request) { r.ToolChoice = model.ToolChoice{Mode: model.ToolChoiceTool, Name: "ls"} }, ""},
	{"choice required without tools", func(r *model.Request) {
		r.Tools = nil
		r.ToolChoice.Mode = model.ToolChoiceRequired
	}, "toolChoice.mode"},
	{"choice unknown", func(r *model.Request) { r.ToolChoice.Mode = "sometimes" }, "toolChoice.mode"},
	{"call without id", func(r *model.Request) { r.Messages[2].ToolCalls[0].ID = "" }, "messages[2].toolCalls[0].id"},
	{"call without name", func(r *model.Request) { r.Messages[2].ToolCalls[1].Name = "" }, "messages[2].toolCalls[1].name"},
	{"duplicate call id", func(r *model.Request) { r.Messages[2].ToolCalls[1].ID = "c1" }, "messages[2].toolCalls[1].id"},
	{"orphan tool result", func(r *model.Request) { r.Messages[3].ToolCallID = "c9" }, "messages[3].toolCallId"},
	{"tool result twice", func(r *model.Request) { r.Messages[4].ToolCallID = "c2" }, "messages[4].toolCallId"},
	{"unanswered call before assistant", func(r *model.Request) {
		r.Messages = append(r.Messages[:4], r.Messages[5])
	}, "messages[4]"},
	{"unanswered call at end", func(r *model.Request) { r.Messages = r.Messages[:4] }, "messages[4]"},
	{"invalid arguments are the model's business", func(r *model.Request) { r.Messages[2].ToolCalls[0].Arguments = `{"path":` }, ""},
	{"appended orphan result", func(r *model.Request) {
		r.Messages = append(r.Messages, model.Message{Role: model.RoleTool, ToolCallID: "c1", Text: "again"})
	}, "messages[6].toolCallId"},
	{"appended turn", func(r *model.Request) {
		r.Messages = append(r.Messages, model.Message{Role: model.RoleUser, Text: "more"},
			model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c3", Name: "ls"}}},
			model.Message{Role: model.RoleTool, ToolCallID: "c3", Text: "x"})
	}, ""},
	{"reasoning changed", func(r *model.Request) { r.Messages[5].Reasoning = []model.Reasoning{{ID: "rs"}} }, ""},
}

func TestValidate(t *testing.T) {
	for _, tt := range validateCases {
		t.Run(tt.name, func(t *testing.T) {
			r := validRequest()
			tt.edit(&r)
			err := r.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var e *model.Error
			if !errors.As(err, &e) {
				t.Fatalf("Validate() = %v, want *model.Error", err)
			}
			if e.Code() != model.CodeInvalidRequest || e.Field != tt.wantField || e.Fix == "" {
				t.Fatalf("Validate() = code %q field %q fix %q, want invalid_request at %q with a fix", e.Code(), e.Field, e.Fix, tt.wantField)
			}
		})
	}
}

// A Conversation that validated the valid request judges each edited one as Validate does:
// an appended message is walked from where it stopped, a changed earlier one makes it walk
// the whole conversation again.
func TestConversationValidatesAsValidate(t *testing.T) {
	for _, tt := range validateCases {
		var c model.Conversation
		if err := c.Validate("p", validRequest()); err != nil || len(c.Messages()) != len(validRequest().Messages) {
			t.Fatalf("%s: %v", tt.name, err)
		}
		r := validRequest()
		tt.edit(&r)
		want, got := r.Validate(), c.Validate("p", r)
		var we, ge *model.Error
		if (want == nil) != (got == nil) || want != nil && (!errors.As(want, &we) || !errors.As(got, &ge) || we.Field != ge.Field || ge.Provider != "p") {
			t.Fatalf("%s: Conversation.Validate = %v, Validate = %v", tt.name, got, want)
		}
		if got != nil && len(c.Messages()) != 0 {
			t.Fatalf("%s: a refused conversation was kept", tt.name)
		}
	}
}

// Equal notices a change in any field of a message.
func TestMessageEqual(t *testing.T) {
	m := model.Message{Role: model.RoleAssistant, Text: "t", ToolCalls: []model.ToolCall{{ID: "a", ProviderID: "p", Name: "n", Arguments: "{}"}},
		ToolCallID: "x", IsError: true, Reasoning: []model.Reasoning{{ID: "r", Summary: "s", EncryptedContent: "e"}}}
	clone := func() model.Message {
		c := m
		c.ToolCalls, c.Reasoning = slices.Clone(m.ToolCalls), slices.Clone(m.Reasoning)
		return c
	}
	if !m.Equal(clone()) {
		t.Fatal("a copy differs")
	}
	for i, edit := range []func(*model.Message){
		func(c *model.Message) { c.Role = model.RoleUser },
		func(c *model.Message) { c.Text = "u" },
		func(c *model.Message) { c.ToolCallID = "y" },
		func(c *model.Message) { c.IsError = false },
		func(c *model.Message) { c.ToolCalls[0].Arguments = "{ }" },
		func(c *model.Message) { c.ToolCalls[0].ProviderID = "" },
		func(c *model.Message) { c.ToolCalls = nil },
		func(c *model.Message) { c.Reasoning[0].EncryptedContent = "f" },
	} {
		c := clone()
		edit(&c)
		if m.Equal(c) {
			t.Fatalf("edit %d is not noticed", i)
		}
	}
}

// CommonPrefix counts the leading messages two conversations share, stopping at the first
// that differs in any field, and at the shorter's end.
func TestCommonPrefix(t *testing.T) {
	conv := []model.Message{{Role: model.RoleUser, Text: "go"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "a", Name: "n", Arguments: "{}"}}},
		{Role: model.RoleTool, ToolCallID: "a", Text: "r"}}
	changed := slices.Clone(conv)
	changed[1].ToolCalls = []model.ToolCall{{ID: "a", Name: "n", Arguments: "{ }"}}
	// The same messages held at other addresses: equal, though not the same memory.
	elsewhere := []model.Message{{Role: model.RoleUser, Text: strings.Clone("go")},
		{Role: model.RoleAssistant, ToolCalls: slices.Clone(conv[1].ToolCalls)},
		{Role: model.RoleTool, ToolCallID: strings.Clone("a"), Text: strings.Clone("r")}}
	// Longer than one run of messages compared as memory, with a change inside the second.
	var long []model.Message
	for range 30 {
		long = append(long, conv...)
	}
	longChanged := slices.Clone(long)
	longChanged[40].Text = "changed"
	tests := []struct {
		a, b []model.Message
		want int
	}{
		{conv, conv, 3},
		{conv[:2], conv, 2},
		{conv, conv[:1], 1},
		{nil, conv, 0},
		{conv, changed, 1},
		{conv, []model.Message{{Role: model.RoleUser, Text: "stop"}}, 0},
		{conv, elsewhere, 3},
		{long, long[:70:70], 70},
		{long, longChanged, 40},
	}
	for i, tt := range tests {
		if got := model.CommonPrefix(tt.a, tt.b); got != tt.want {
			t.Errorf("%d: CommonPrefix = %d, want %d", i, got, tt.want)
		}
	}
}

func TestCollect(t *testing.T) {
	events := []model.Event{
		model.ResponseStart{ID: "r1", Model: "m-2025"},
		model.TextDelta{Text: "Hel"},
		model.ToolCallStart{ID: "a", Name: "ls"},
		model.TextDelta{Text: "lo"},
		model.ToolCallStart{ID: "b", Name: "cat"},
		model.ToolCallArgsDelta{ID: "a", Delta: `{"pa`},
		model.ToolCallArgsDelta{ID: "b", Delta: `{}`},
		model.ToolCallArgsDelta{ID: "a", Delta: `th":"."}`},
		model.ToolCallEnd{ID: "b", Name: "cat", Arguments: `{}`},
		model.ToolCallEnd{ID: "a", Name: "ls", Arguments: `{"path":"."}`},
		model.UsageReport{Usage: model.Usage{InputTokens: 10, OutputTokens: 3, CacheReadTokens: 4}},
		model.Finish{Reason: model.FinishToolCalls, ProviderReason: "tool_use"},
	}
	got, err := model.Collect(seq(events, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Response{
		ID: "r1", Model: "m-2025", Text: "Hello",
		ToolCalls: []model.ToolCall{
			{ID: "a", Name: "ls", Arguments: `{"path":"."}`},
			{ID: "b", Name: "cat", Arguments: `{}`},
		},
		Usage:        model.Usage{InputTokens: 10, OutputTokens: 3, CacheReadTokens: 4},
		FinishReason: model.FinishToolCalls, ProviderFinishReason: "tool_use",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Collect() =\n%+v\nwant\n%+v", got, want)
	}
}

func TestCollectPartialOnError(t *testing.T) {
	cut := model.NewError(model.CodeTransport, "stream cut", "retry")
	got, err := model.Collect(seq([]model.Event{
		model.ResponseStart{ID: "r"},
		model.TextDelta{Text: "par"},
		model.ToolCallStart{ID: "done", Name: "ls"},
		model.ToolCallEnd{ID: "done", Name: "ls", Arguments: `{}`},
		model.ToolCallStart{ID: "cut", Name: "rm"},
		model.ToolCallArgsDelta{ID: "cut", Delta: `{"path":"/`},
	}, cut))
	if !errors.Is(err, cut) {
		t.Fatalf("err = %v, want the stream's error", err)
	}
	// A call whose arguments were cut off must never reach a tool executor.
	if got.Text != "par" || len(got.ToolCalls) != 1 || got.ToolCalls[0].ID != "done" || got.FinishReason != "" {
		t.Fatalf("partial response = %+v", got)
	}
}

func TestCollectStopsAtError(t *testing.T) {
	calls := 0
	s := func(yield func(model.Event, error) bool) {
		calls++
		if !yield(nil, model.NewError(model.CodeAuth, "no", "fix")) {
			return
		}
		t.Error("stream resumed after the consumer stopped")
	}
	if _, err := model.Collect(s); !model.HasCode(err, model.CodeAuth) {
		t.Fatalf("err = %v", err)
	}
	if calls != 1 {
		t.Fatalf("stream ranged %d times", calls)
	}
}

func TestErrorText(t *testing.T) {
	e := model.NewError(model.CodeRateLimit, "too many requests", model.RateLimitFix(1500*time.Millisecond))
	e.Provider = "openai"
	e.Err = fmt.Errorf("sdk error")
	if got, want := e.Error(), "rate_limit: openai: too many requests; wait 1.5s and retry, or lower the request rate"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !e.Retryable() || !model.HasCode(fmt.Errorf("wrapped: %w", e), model.CodeRateLimit) {
		t.Fatal("rate_limit must be retryable and found through wrapping")
	}
	if errors.Unwrap(e) == nil {
		t.Fatal("Unwrap lost the cause")
	}
	inv := model.NewError(model.CodeInvalidRequest, "is empty", "fill it")
	inv.Field = "model"
	if got := inv.Error(); !strings.HasPrefix(got, "invalid_request: model: is empty") || inv.Retryable() {
		t.Fatalf("Error() = %q, retryable %v", got, inv.Retryable())
	}
	if model.RateLimitFix(0) == "" {
		t.Fatal("unknown wait needs a fix too")
	}
}

func TestSchemaOrEmpty(t *testing.T) {
	if got := (model.Tool{Name: "x"}).SchemaOrEmpty(); string(got) != `{"type":"object","properties":{}}` {
		t.Fatalf("SchemaOrEmpty() = %s", got)
	}
}

func seq(events []model.Event, final error) model.Stream {
	return func(yield func(model.Event, error) bool) {
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
		if final != nil {
			yield(nil, final)
		}
	}
}

// A Conversation skips the checks of tools it has seen valid, but not of the same slice whose
// bytes the caller changed in place since.
func TestConversationChecksToolsChangedInPlace(t *testing.T) {
	var c model.Conversation
	r := validRequest()
	if err := c.Validate("p", r); err != nil {
		t.Fatal(err)
	}
	s := r.Tools[0].Schema
	copy(s, `[1]`+strings.Repeat(" ", len(s)-3))
	var e *model.Error
	if err := c.Validate("p", r); !errors.As(err, &e) || e.Field != "tools[0].schema" {
		t.Fatalf("Validate after the schema changed in place = %v, want tools[0].schema refused", err)
	}
}
