package openai

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
)

// The renderer's sums are those of the bodies the SDK encodes itself, request after request
// of a growing conversation, in both dialects, when the parameters stay (the kept end is
// reused) and when any of them changes (a tool's schema, description or name, the model, the
// output bound, the tool choice, the cache key, a tool more): each row changes one thing
// and goes on growing the conversation; then a conversation that does not continue the last
// one (a compaction) with the kept parameters.
func TestSumRendererIsTheSDKBody(t *testing.T) {
	tool := model.Tool{Name: "read", Description: "read <a> & b", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)}
	base := model.Request{Model: "m", Tools: []model.Tool{tool}, MaxTokens: 100, ToolChoice: model.ToolChoice{Mode: model.ToolChoiceAuto},
		PromptCacheKey: "ses_1"}
	changes := []struct {
		name   string
		change func(*model.Request)
	}{
		{"same", func(*model.Request) {}},
		{"schema byte", func(r *model.Request) {
			r.Tools = []model.Tool{{Name: "read", Description: tool.Description, Schema: json.RawMessage(`{"type":"object","properties":{"b":{"type":"integer"}}}`)}}
		}},
		{"description", func(r *model.Request) {
			r.Tools = []model.Tool{{Name: "read", Description: "read", Schema: tool.Schema}}
		}},
		{"name", func(r *model.Request) {
			r.Tools = []model.Tool{{Name: "reads", Description: tool.Description, Schema: tool.Schema}}
		}},
		{"no schema", func(r *model.Request) { r.Tools = []model.Tool{{Name: "read", Description: tool.Description}} }},
		{"a tool more", func(r *model.Request) { r.Tools = append([]model.Tool{{Name: "a"}}, tool) }},
		{"no tools", func(r *model.Request) { r.Tools = nil }},
		{"model", func(r *model.Request) { r.Model = "n" }},
		{"max tokens", func(r *model.Request) { r.MaxTokens = 0 }},
		{"tool choice", func(r *model.Request) { r.ToolChoice = model.ToolChoice{Mode: model.ToolChoiceTool, Name: "read"} }},
		{"cache key", func(r *model.Request) { r.PromptCacheKey = "ses_2" }},
	}
	conv := []model.Message{{Role: model.RoleSystem, Text: "system <b> & \"q\""}, {Role: model.RoleUser, Text: "go é \u2028"}}
	for i := range 3 * len(changes) { // 3 requests a change, each 2 messages longer
		conv = append(conv, model.Message{Role: model.RoleAssistant, Text: fmt.Sprintf("step %d", i),
			ToolCalls: []model.ToolCall{{ID: fmt.Sprintf("call_%d", i), ProviderID: "call_0", Name: "read", Arguments: `{"a":1}`}}},
			model.Message{Role: model.RoleTool, ToolCallID: fmt.Sprintf("call_%d", i), Text: "result <x>"})
	}
	for _, d := range []Dialect{DialectCompatible, DialectOpenAI} {
		r := NewSumRenderer(New(Options{BaseURL: renderURL, IgnoreEnv: true, Dialect: d}))
		sdk := New(Options{BaseURL: renderURL, IgnoreEnv: true, Dialect: d})
		check := func(name string, req model.Request) {
			t.Helper()
			sum, n, err := r.Sum(req)
			if err != nil {
				t.Fatal(err)
			}
			want := sdkBody(t, sdk, req)
			if w := sha256.Sum256(want); hex.EncodeToString(sum) != hex.EncodeToString(w[:]) || n != int64(len(want)) {
				t.Fatalf("%s, %s, %d messages: sum %x (%d bytes), the SDK's body %x (%d bytes)\n%s", d, name, len(req.Messages), sum, n, w, len(want), want)
			}
		}
		msgs := 2
		for _, c := range changes {
			// The base parameters, then the changed ones (one thing differs from the request
			// before), then the same again as the conversation grows.
			for i, req := range []model.Request{base, base, base} {
				if i > 0 {
					c.change(&req)
				}
				msgs += 2
				req.Messages = conv[:msgs]
				check(c.name, req)
			}
		}
		// A conversation that does not continue the last one, with the kept parameters.
		req := base
		req.Messages = []model.Message{{Role: model.RoleUser, Text: "summary"}}
		check("replaced", req)
		req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, Text: "ok"})
		check("replaced, grown", req)
	}
}
