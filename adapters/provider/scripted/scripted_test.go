package scripted_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/domain/model"
)

// request is a valid conversation; the scripted provider ignores its content.
func request() model.Request {
	return model.Request{Model: "any-model", Messages: []model.Message{{Role: model.RoleUser, Text: "go"}}}
}

func TestPlaysTurnsInOrderThenExhausts(t *testing.T) {
	p, err := scripted.Open(filepath.Join("testdata", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Response{
		{
			ID: "scripted-turn-0", Model: "any-model", Text: "Let me read the module file first.",
			ToolCalls:    []model.ToolCall{{ID: "0", ProviderID: "call_read_1", Name: "read", Arguments: `{"path":"go.mod","limit":40}`}},
			Usage:        model.Usage{InputTokens: 1200, OutputTokens: 31, CacheReadTokens: 1024},
			FinishReason: model.FinishToolCalls, ProviderFinishReason: "tool_calls",
		},
		{
			ID: "scripted-turn-1", Model: "any-model",
			ToolCalls: []model.ToolCall{
				{ID: "0", ProviderID: "call_grep_1", Name: "grep", Arguments: `{"pattern":"module"}`},
				{ID: "1", ProviderID: "call_ls_1", Name: "ls", Arguments: `{}`},
			},
			FinishReason: model.FinishToolCalls, ProviderFinishReason: "tool_calls",
		},
		{
			ID: "scripted-turn-2", Model: "any-model", Text: "It is the Go module github.com/zuno-run/zuno — ready.",
			Usage:        model.Usage{InputTokens: 1410, OutputTokens: 18},
			FinishReason: model.FinishStop, ProviderFinishReason: "stop",
		},
	}
	for i, w := range want {
		got, err := model.Collect(p.Stream(context.Background(), request()))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("request %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	for n := 4; n <= 5; n++ {
		_, err = model.Collect(p.Stream(context.Background(), request()))
		var e *model.Error
		if !errors.As(err, &e) || e.Code() != model.CodeScriptExhausted || e.Fix == "" {
			t.Fatalf("request %d after the end: %v, want script_exhausted", n, err)
		}
		if !strings.Contains(e.Message, "3 turns") || !strings.Contains(e.Message, "request "+string(rune('0'+n))) {
			t.Fatalf("exhaustion message %q should say how many turns and which request", e.Message)
		}
	}
	if p.Used() != 3 || p.Turns() != 3 {
		t.Fatalf("Used() = %d, Turns() = %d", p.Used(), p.Turns())
	}
}

// The stream path, not only the collected response, is what consumers are built on, so the
// shape of the events is part of the contract.
func TestStreamsInChunks(t *testing.T) {
	p, err := scripted.Parse("inline", []byte(`{"turns":[{"text":"héllo wörld, streamed","toolCalls":[{"id":"c1","name":"read","arguments":{"path":"a.go"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var text, args strings.Builder
	for ev, err := range p.Stream(context.Background(), request()) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case model.ResponseStart:
			kinds = append(kinds, "start")
		case model.TextDelta:
			kinds = append(kinds, "text")
			text.WriteString(e.Text)
		case model.ToolCallStart:
			kinds = append(kinds, "call-start")
		case model.ToolCallArgsDelta:
			kinds = append(kinds, "call-delta")
			args.WriteString(e.Delta)
		case model.ToolCallEnd:
			kinds = append(kinds, "call-end")
			if e.Arguments != args.String() {
				t.Fatalf("end arguments %q, deltas %q", e.Arguments, args.String())
			}
		case model.UsageReport:
			kinds = append(kinds, "usage")
		case model.Finish:
			kinds = append(kinds, "finish")
		}
	}
	want := []string{"start", "text", "text", "text", "call-start", "call-delta", "call-delta", "call-end", "finish"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if text.String() != "héllo wörld, streamed" || args.String() != `{"path":"a.go"}` {
		t.Fatalf("text %q args %q", text.String(), args.String())
	}
}

func TestMalformedScripts(t *testing.T) {
	tests := []struct {
		name, script, field string
	}{
		{"not JSON", `{"turns": [`, ""},
		{"not an object", `[1,2]`, ""},
		{"turn not an object", `{"turns":["hi"]}`, "turns[0]"},
		{"null turn", `{"turns":[null]}`, "turns[0]"},
		{"trailing data", `{"turns":[{"text":"a"}]} {}`, ""},
		{"unknown top field", `{"turn":[{"text":"a"}]}`, "turn"},
		{"no turns", `{"turns":[]}`, "turns"},
		{"empty turn", `{"turns":[{"text":"a"},{}]}`, "turns[1]"},
		{"misspelt field", `{"turns":[{"text":"a"},{"toolcalls":[]}]}`, "turns[1].toolcalls"},
		{"text not string", `{"turns":[{"text":5}]}`, "turns[0].text"},
		{"toolCalls not array", `{"turns":[{"toolCalls":{"id":"x"}}]}`, "turns[0].toolCalls"},
		{"call id not string", `{"turns":[{"toolCalls":[{"id":7,"name":"ls"}]}]}`, "turns[0].toolCalls[0].id"},
		{"call name missing", `{"turns":[{"toolCalls":[{"id":"c1"}]}]}`, "turns[0].toolCalls[0].name"},
		{"call unknown field", `{"turns":[{"toolCalls":[{"id":"c1","name":"ls","args":{}}]}]}`, "turns[0].toolCalls[0].args"},
		{"arguments not object", `{"turns":[{"toolCalls":[{"id":"c1","name":"ls","arguments":"{}"}]}]}`, "turns[0].toolCalls[0].arguments"},
		{"usage not number", `{"turns":[{"text":"a","usage":{"inputTokens":"12"}}]}`, "turns[0].usage.inputTokens"},
		{"usage negative", `{"turns":[{"text":"a","usage":{"inputTokens":-1,"outputTokens":1}}]}`, "turns[0].usage"},
		{"usage misspelt", `{"turns":[{"text":"a","usage":{"input_tokens":1}}]}`, "turns[0].usage.input_tokens"},
		{"error code unknown", `{"turns":[{"error":{"code":"teapot"}}]}`, "turns[0].error.code"},
		{"error code is the script's own", `{"turns":[{"error":{"code":"script_exhausted"}}]}`, "turns[0].error.code"},
		{"error with answer", `{"turns":[{"text":"a","error":{"code":"transport"}}]}`, "turns[0].error"},
		{"invalid UTF-8", "{\"turns\":[{\"text\":\"\xff\"}]}", ""},
		{"delay negative", `{"turns":[{"text":"a","delayMs":-1}]}`, "turns[0].delayMs"},
		{"delay over a minute", `{"turns":[{"text":"a","delayMs":60001}]}`, "turns[0].delayMs"},
		{"session without when", `{"turns":[{"text":"a"}],"sessions":[{"turns":[{"text":"b"}]}]}`, "sessions[0].when"},
		{"session without turns", `{"turns":[{"text":"a"}],"sessions":[{"when":"x"}]}`, "sessions[0].turns"},
		{"session turn empty", `{"turns":[{"text":"a"}],"sessions":[{"when":"x","turns":[{}]}]}`, "sessions[0].turns[0]"},
		{"session unknown field", `{"turns":[{"text":"a"}],"sessions":[{"when":"x","turns":[{"text":"b"}],"agent":"y"}]}`, "sessions[0].agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scripted.Parse("bad.json", []byte(tt.script))
			var e *model.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse() = %v, want *model.Error", err)
			}
			if e.Code() != model.CodeScriptInvalid || e.Field != tt.field || e.Fix == "" {
				t.Fatalf("Parse() = code %q field %q fix %q (%v), want script_invalid at %q", e.Code(), e.Field, e.Fix, err, tt.field)
			}
			if !strings.Contains(err.Error(), "scripted:bad.json") {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
}

func TestOpenMissingFile(t *testing.T) {
	_, err := scripted.Open(filepath.Join(t.TempDir(), "nope.json"))
	if !model.HasCode(err, model.CodeScriptInvalid) {
		t.Fatalf("Open() = %v, want script_invalid", err)
	}
}

func TestScriptedFailure(t *testing.T) {
	p, err := scripted.Parse("inline", []byte(`{"turns":[
		{"error":{"code":"rate_limit","message":"slow down","retryAfterMs":1500}},
		{"text":"recovered"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = model.Collect(p.Stream(context.Background(), request()))
	var e *model.Error
	if !errors.As(err, &e) || e.Code() != model.CodeRateLimit || e.RetryAfter != 1500*time.Millisecond || !e.Retryable() {
		t.Fatalf("first request: %v", err)
	}
	got, err := model.Collect(p.Stream(context.Background(), request()))
	if err != nil || got.Text != "recovered" {
		t.Fatalf("second request: %+v, %v", got, err)
	}
}

func TestInvalidRequestTakesNoTurn(t *testing.T) {
	p, err := scripted.Parse("inline", []byte(`{"turns":[{"text":"only"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = model.Collect(p.Stream(context.Background(), model.Request{Model: "m"}))
	if !model.HasCode(err, model.CodeInvalidRequest) {
		t.Fatalf("invalid request: %v", err)
	}
	if got, err := model.Collect(p.Stream(context.Background(), request())); err != nil || got.Text != "only" {
		t.Fatalf("valid request after an invalid one: %+v, %v", got, err)
	}
}

func TestCancelledContext(t *testing.T) {
	p, err := scripted.Parse("inline", []byte(`{"turns":[{"text":"a"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := model.Collect(p.Stream(ctx, request())); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A delayed turn answers after its delay, and a context cancelled during it ends the request
// with the cancellation, not the turn's answer.
func TestDelayedTurn(t *testing.T) {
	p, err := scripted.Parse("inline", []byte(`{"turns":[{"text":"soon","delayMs":1},{"text":"never","delayMs":60000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := model.Collect(p.Stream(context.Background(), request())); err != nil || r.Text != "soon" {
		t.Fatalf("delayed turn: %+v %v", r, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	if r, err := model.Collect(p.Stream(ctx, request())); !errors.Is(err, context.Canceled) || r.Text != "" {
		t.Fatalf("cancelled during the delay: %+v %v", r, err)
	}
}

func TestBreakingEarlyStillConsumesTheTurn(t *testing.T) {
	p, err := scripted.Parse("inline", []byte(`{"turns":[{"text":"first answer"},{"text":"second"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for range p.Stream(context.Background(), request()) {
		break
	}
	if got, _ := model.Collect(p.Stream(context.Background(), request())); got.Text != "second" {
		t.Fatalf("after an abandoned stream got %q, want the next turn", got.Text)
	}
}

// Concurrent requests must each get a distinct turn; run with -race.
func TestConcurrentRequestsTakeDistinctTurns(t *testing.T) {
	const n = 32
	var b strings.Builder
	b.WriteString(`{"turns":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"text":"turn-` + string(rune('A'+i%26)) + string(rune('a'+i/26)) + `"}`)
	}
	b.WriteString(`]}`)
	p, err := scripted.Parse("inline", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var texts []string
	var wg sync.WaitGroup
	for range n + 4 {
		wg.Go(func() {
			got, err := model.Collect(p.Stream(context.Background(), request()))
			if err != nil {
				if !model.HasCode(err, model.CodeScriptExhausted) {
					t.Error(err)
				}
				return
			}
			mu.Lock()
			texts = append(texts, got.Text)
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Strings(texts)
	if len(texts) != n {
		t.Fatalf("%d requests answered, want %d", len(texts), n)
	}
	for i := 1; i < len(texts); i++ {
		if texts[i] == texts[i-1] {
			t.Fatalf("turn %q played twice", texts[i])
		}
	}
}

func TestNewAndModels(t *testing.T) {
	p, err := scripted.New(scripted.Script{Turns: []scripted.Turn{{Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	models, err := p.Models(context.Background())
	if err != nil || len(models) != 1 || models[0].Tools != model.Supported {
		t.Fatalf("Models() = %+v, %v", models, err)
	}
	if _, err := scripted.New(scripted.Script{}); !model.HasCode(err, model.CodeScriptInvalid) {
		t.Fatalf("New(empty) = %v", err)
	}
}

// The same script must produce the same events every time.
func TestDeterministic(t *testing.T) {
	data := []byte(`{"turns":[{"text":"a fairly long answer that is chunked","toolCalls":[{"id":"c","name":"x","arguments":{"b":1,"a":[1,2]}}]}]}`)
	var runs [2][]model.Event
	for i := range runs {
		p, err := scripted.Parse("inline", data)
		if err != nil {
			t.Fatal(err)
		}
		for ev, err := range p.Stream(context.Background(), request()) {
			if err != nil {
				t.Fatal(err)
			}
			runs[i] = append(runs[i], ev)
		}
	}
	if !reflect.DeepEqual(runs[0], runs[1]) {
		t.Fatalf("two runs differ:\n%v\n%v", runs[0], runs[1])
	}
}

// A script with sessions plays each conversation by its first user message, from the turn
// its assistant messages have reached: a parent and its children, each opening the provider
// anew for every turn (docs/delegation.md).
func TestSessionsPlayByConversation(t *testing.T) {
	p, err := scripted.Parse("s.json", []byte(`{"turns":[{"text":"parent 0"},{"text":"parent 1"}],
		"sessions":[{"when":"lane A","turns":[{"text":"a 0"},{"text":"a 1"}]},{"when":"lane","turns":[{"text":"any lane"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	conv := func(first string, played int) model.Request {
		r := model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Text: first}}}
		for i := 0; i < played; i++ {
			r.Messages = append(r.Messages, model.Message{Role: model.RoleAssistant, Text: "x"}, model.Message{Role: model.RoleUser, Text: "more"})
		}
		return r
	}
	for _, c := range []struct {
		req  model.Request
		want string
	}{
		{conv("do lane A now", 0), "a 0"}, {conv("do lane A now", 1), "a 1"}, {conv("lane B", 0), "any lane"},
		{conv("integrate", 0), "parent 0"}, {conv("integrate", 1), "parent 1"}, {conv("do lane A now", 0), "a 0"},
	} {
		got, err := model.Collect(p.Stream(context.Background(), c.req))
		if err != nil || got.Text != c.want {
			t.Fatalf("%q after %d: got %q (%v), want %q", c.req.Messages[0].Text, len(c.req.Messages)/2, got.Text, err, c.want)
		}
	}
	_, err = model.Collect(p.Stream(context.Background(), conv("lane B", 1)))
	var e *model.Error
	if !errors.As(err, &e) || e.Code() != model.CodeScriptExhausted || !strings.Contains(e.Message, "sessions[1].turns") {
		t.Fatalf("past the end: %v", err)
	}
}
