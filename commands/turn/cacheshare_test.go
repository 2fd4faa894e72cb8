package turn_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// prefixCache is a Chat Completions server that caches prompt prefixes the way OpenAI
// documents its prompt caching: a request of at least 1,024 tokens reads, in steps of 128
// tokens, the longest prefix of the last prompt sent under its prompt_cache_key (tools first,
// then the messages, each a unit here); it reports what it read as cached_tokens. Tokens are
// the receipt's estimate of each unit's JSON. It answers steps calls of look, then "done".
type prefixCache struct {
	steps int
	mu    sync.Mutex
	n     int
	last  map[string][]unit // per prompt_cache_key, the units of the last prompt
	keys  map[string]int    // requests per key
}

type unit struct {
	sum    [32]byte
	tokens int
}

func (c *prefixCache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
		Key      string            `json:"prompt_cache_key"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	units := []unit{{sha256.Sum256(body.Tools), prompt.EstimateTokens(string(body.Tools))}}
	for _, m := range body.Messages {
		units = append(units, unit{sha256.Sum256(m), prompt.EstimateTokens(string(m))})
	}
	c.mu.Lock()
	total, shared := 0, 0
	prev, same := c.last[body.Key], true
	for i, u := range units {
		total += u.tokens
		same = same && i < len(prev) && prev[i].sum == u.sum
		if same {
			shared += u.tokens
		}
	}
	c.last[body.Key] = units
	c.keys[body.Key]++
	i := c.n
	c.n++
	c.mu.Unlock()
	cached := 0
	if total >= 1024 {
		cached = shared / 128 * 128
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choice string) {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[%s]}\n\n", i, choice)
	}
	if i < c.steps {
		chunk(fmt.Sprintf(`{"index":0,"delta":{"role":"assistant","content":"looking","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"look","arguments":"{\"n\":%d}"}}]},"finish_reason":null}`, i, i))
		chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`)
	} else {
		chunk(`{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":null}`)
		chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`)
	}
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],"+
		"\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":5,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d}}}\n\ndata: [DONE]\n\n",
		i, total, total+5, cached)
}

// TestCachedShareOfAHundredStepSession runs a 100-step session through the OpenAI adapter to a
// server that caches prefixes as OpenAI documents it (prefixCache) and reports, from the
// usage the session recorded, the share of its input tokens served from the cache. Every
// request of the session after the first that is long enough to cache must read the whole of
// the previous prompt but for the last 128-token step: nothing before the conversation's new
// messages may change between steps, or every later step pays for it again.
func TestCachedShareOfAHundredStepSession(t *testing.T) {
	const steps = 100
	cache := &prefixCache{steps: steps, last: map[string][]unit{}, keys: map[string]int{}}
	srv := httptest.NewServer(cache)
	t.Cleanup(srv.Close)
	h := newHarness(t)
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	p := openai.New(openai.Options{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-x", Dialect: openai.DialectOpenAI, IgnoreEnv: true})
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "look 100 times",
		Agent: buildAgent("look"), Provider: p, ProviderName: "openai", Model: model.ModelInfo{ID: "m"}, Tools: []turn.Tool{look}})
	if err != nil || out.Reason != events.FinishCompleted || out.Steps != steps+1 {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if want := turn.PromptCacheKey(h.session); cache.keys[want] != steps+1 || len(cache.keys) != 1 {
		t.Errorf("requests per prompt_cache_key %v, want %d under %s", cache.keys, steps+1, want)
	}
	var input, cached, prev int64
	for _, ev := range h.events(t) {
		r, ok := ev.(events.ProviderRequest)
		if !ok || r.Status != events.RequestCompleted || r.Response == nil {
			continue
		}
		u := r.Response.Usage
		input, cached = input+u.InputTokens, cached+u.CacheReadTokens
		if prev >= 1024 && u.CacheReadTokens < prev-128 {
			t.Errorf("step %d read %d cached tokens of a %d-token prefix", r.Step, u.CacheReadTokens, prev)
		}
		prev = u.InputTokens
	}
	share := float64(cached) / float64(input)
	t.Logf("%d steps: %d input tokens, %d served from the cache (%.1f%%)", steps+1, input, cached, 100*share)
	if share < 0.8 {
		t.Fatalf("only %.1f%% of the input was cached", 100*share)
	}
}
