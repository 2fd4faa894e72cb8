package provider_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/domain/model"
)

// bodyServer keeps the last body it received and refuses the request, which is enough: the
// body went over the wire.
type bodyServer struct {
	*httptest.Server
	mu   sync.Mutex
	body []byte
}

func newBodyServer(t *testing.T) *bodyServer {
	s := &bodyServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.body = b
		s.mu.Unlock()
		http.Error(w, `{"error":{"message":"recorded","type":"invalid_request_error"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *bodyServer) last() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.body
}

// wireRequests are requests whose bodies exercise each mapping: every role, developer text
// (sent as system or developer), tool calls with and without provider ids and a repeated id,
// results, reasoning items, text that JSON escapes (HTML characters, quotes, control bytes,
// non-ASCII, invalid UTF-8), schema maps whose keys are out of order, each tool choice, an
// output limit.
func wireRequests() map[string]model.Request {
	tool := model.Tool{Name: "read", Description: "read <a> & b", Schema: json.RawMessage(`{"type":"object","required":["path"],"properties":{"z":{"type":"string"},"path":{"type":"string"},"a":{"type":"integer"}}}`)}
	conv := []model.Message{
		{Role: model.RoleSystem, Text: "you are <zuno> & \"careful\""},
		{Role: model.RoleDeveloper, Text: "runtime: 语言 \u2028 line\ttab"},
		{Role: model.RoleUser, Text: "read go.mod\x01 \xff please"},
		{Role: model.RoleAssistant, Text: "reading", ToolCalls: []model.ToolCall{
			{ID: "call_a1", ProviderID: "toolu_01A", Name: "read", Arguments: `{"path": "go.mod"}`},
			{ID: "call_b2", Name: "read", Arguments: `{"path":"b"}`},
		}, Reasoning: []model.Reasoning{{ID: "rs_1", Summary: "look first", EncryptedContent: "gAAA=="}}},
		{Role: model.RoleTool, ToolCallID: "call_a1", Text: "module x\n"},
		{Role: model.RoleTool, ToolCallID: "call_b2", Text: "no such file", IsError: true},
		{Role: model.RoleDeveloper, Text: "late instruction"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "call_c3", ProviderID: "call_0", Name: "read", Arguments: `{}`},
			{ID: "call_d4", ProviderID: "call_0", Name: "read", Arguments: `{"path":"c"}`},
		}},
		{Role: model.RoleTool, ToolCallID: "call_c3", Text: "x"},
		{Role: model.RoleTool, ToolCallID: "call_d4", Text: "y"},
	}
	return map[string]model.Request{
		"one user message":       {Model: "m-1", Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}},
		"the whole conversation": {Model: "m-1", Messages: conv, Tools: []model.Tool{tool}, ToolChoice: model.ToolChoice{Mode: model.ToolChoiceAuto}},
		"tool choice none, output limit": {Model: "m-1", Messages: conv, Tools: []model.Tool{tool}, MaxTokens: 4096,
			ToolChoice: model.ToolChoice{Mode: model.ToolChoiceNone}},
		"one tool named":   {Model: "m-1", Messages: conv[:3], Tools: []model.Tool{tool}, ToolChoice: model.ToolChoice{Mode: model.ToolChoiceTool, Name: "read"}},
		"tool required":    {Model: "m-1", Messages: conv[:3], Tools: []model.Tool{tool}, ToolChoice: model.ToolChoice{Mode: model.ToolChoiceRequired}},
		"prompt cache key": {Model: "m-1", Messages: conv, Tools: []model.Tool{tool}, PromptCacheKey: "zuno-0123456789abcdef0123456789abcdef"},
	}
}

type wireAdapter struct {
	name string
	open func(root string) model.Provider
}

func wireAdapters() []wireAdapter {
	chat := func(d openai.Dialect, noChoice bool) func(string) model.Provider {
		return func(root string) model.Provider {
			return openai.New(openai.Options{BaseURL: root + "/v1", APIKey: "sk-x", Dialect: d, NoToolChoice: noChoice, IgnoreEnv: true})
		}
	}
	return []wireAdapter{
		{"chat compatible", chat(openai.DialectCompatible, false)},
		{"chat openai", chat(openai.DialectOpenAI, false)},
		{"chat without tool choice (ollama)", chat(openai.DialectCompatible, true)},
		{"responses", func(root string) model.Provider {
			return openai.NewResponses(openai.Options{BaseURL: root + "/v1", APIKey: "sk-x", IgnoreEnv: true})
		}},
		{"anthropic", func(root string) model.Provider {
			return anthropic.New(anthropic.Options{BaseURL: root, APIKey: "sk-ant-x"})
		}},
		{"anthropic, another default output limit", func(root string) model.Provider {
			return anthropic.New(anthropic.Options{BaseURL: root, APIKey: "sk-ant-x", DefaultMaxTokens: 1234})
		}},
	}
}

// For every adapter and request, the body rendered from the recorded mapping is byte for byte
// the body the server received, and hashes to the digest recorded when it was sent; rendering
// twice gives the same bytes, and the audit's renderer the same digest.
func TestRenderWireIsTheBodySent(t *testing.T) {
	for _, a := range wireAdapters() {
		for name, req := range wireRequests() {
			t.Run(a.name+"/"+name, func(t *testing.T) {
				srv := newBodyServer(t)
				ctx, c := model.CaptureWire(context.Background())
				for _, err := range a.open(srv.URL).Stream(ctx, req) {
					if err == nil {
						t.Fatal("the server refuses every request")
					}
				}
				w, sent := c.Wire()
				body := srv.last()
				if !sent || body == nil || w.RequestSHA256 != sum(body) {
					t.Fatalf("recorded %+v for a body of %d bytes", w, len(body))
				}
				// Rendered from the request as a receipt rebuilds it, which holds no cache key: the
				// recorded mapping has to carry it.
				rebuilt := req
				rebuilt.PromptCacheKey = ""
				for range 2 {
					again, err := provider.RenderWire(w.Adapter, w.MappingVersion, w.Mapping, rebuilt)
					if err != nil {
						t.Fatal(err)
					}
					if string(again) != string(body) {
						t.Fatalf("rendered\n%s\nsent\n%s", again, body)
					}
				}
				// The audit's renderer (verify --wire) gives the body's digest and size, the first
				// time and again from its kept state.
				sums := provider.NewWireSums()
				for range 2 {
					d, n, err := sums.Sum(w.Adapter, w.MappingVersion, w.Mapping, rebuilt)
					if err != nil || hex.EncodeToString(d) != w.RequestSHA256 || n != int64(len(body)) {
						t.Fatalf("the audit's renderer: %x, %d bytes, %v; sent %s, %d bytes", d, n, err, w.RequestSHA256, len(body))
					}
				}
			})
		}
	}
}

// A mapping this build does not have is refused, never rendered with another's settings.
func TestRenderWireRefusesUnknownMappings(t *testing.T) {
	req := model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}}
	tests := []struct {
		adapter  string
		version  int
		settings map[string]string
		want     string
	}{
		{"gemini.generate", 1, nil, "not one this build has"},
		{openai.AdapterChat, openai.ChatMappingVersion + 1, map[string]string{"dialect": "openai", "toolChoice": "sent"}, "this build renders version"},
		{openai.AdapterChat, 0, map[string]string{"dialect": "openai", "toolChoice": "sent"}, "this build renders version"},
		{openai.AdapterChat, openai.ChatMappingVersion, map[string]string{"dialect": "", "toolChoice": "sent"}, "dialect"},
		{openai.AdapterChat, openai.ChatMappingVersion, map[string]string{"dialect": "openai"}, "toolChoice"},
		{openai.AdapterResponses, openai.ResponsesMappingVersion + 1, nil, "this build renders version"},
		{anthropic.Adapter, anthropic.MappingVersion, map[string]string{"defaultMaxTokens": "-1"}, "defaultMaxTokens"},
		{anthropic.Adapter, anthropic.MappingVersion, nil, "defaultMaxTokens"},
	}
	for _, tt := range tests {
		if _, err := provider.RenderWire(tt.adapter, tt.version, tt.settings, req); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("RenderWire(%s v%d %v) = %v, want an error about %s", tt.adapter, tt.version, tt.settings, err, tt.want)
		}
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// The caching a body asks for is in the bytes sent and in the recorded mapping: OpenAI's own
// APIs get the session's prompt_cache_key, a compatible server never (it may refuse a field it
// does not know), and Anthropic's body carries cache_control breakpoints on the system
// prompt, the tools and the last message, which its mapping names. A request without a key
// sends the body it always did.
func TestPromptCachingOnTheWire(t *testing.T) {
	const key = "zuno-0123456789abcdef0123456789abcdef"
	req := wireRequests()["prompt cache key"]
	for _, tt := range []struct {
		adapter  string
		wantKey  bool
		wantMark bool
	}{
		{"chat openai", true, false},
		{"responses", true, false},
		{"chat compatible", false, false},
		{"chat without tool choice (ollama)", false, false},
		{"anthropic", false, true},
	} {
		t.Run(tt.adapter, func(t *testing.T) {
			var open func(string) model.Provider
			for _, a := range wireAdapters() {
				if a.name == tt.adapter {
					open = a.open
				}
			}
			send := func(r model.Request) ([]byte, map[string]string) {
				srv := newBodyServer(t)
				ctx, c := model.CaptureWire(context.Background())
				for range open(srv.URL).Stream(ctx, r) {
				}
				w, _ := c.Wire()
				return srv.last(), w.Mapping
			}
			body, mapping := send(req)
			field := `"prompt_cache_key":"` + key + `"`
			if got := strings.Contains(string(body), field); got != tt.wantKey {
				t.Errorf("body has %s: %v, want %v\n%s", field, got, tt.wantKey, body)
			}
			if got := mapping["promptCacheKey"] == key; got != tt.wantKey {
				t.Errorf("mapping %v records the key: %v, want %v", mapping, got, tt.wantKey)
			}
			if got := strings.Count(string(body), `"cache_control":{"type":"ephemeral"}`); tt.wantMark != (got == 3) {
				t.Errorf("%d cache_control breakpoints in\n%s", got, body)
			}
			if tt.wantMark && mapping[anthropic.SettingCacheControl] != anthropic.CacheBreakpoints {
				t.Errorf("mapping %v does not name the breakpoints", mapping)
			}
			plain := req
			plain.PromptCacheKey = ""
			body, mapping = send(plain)
			if strings.Contains(string(body), "prompt_cache_key") || mapping["promptCacheKey"] != "" {
				t.Errorf("a request without a key sent %s with mapping %v", body, mapping)
			}
		})
	}
}
