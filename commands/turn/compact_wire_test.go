package turn_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// compactingServer is a local Chat Completions server that answers a compaction request
// (its body holds the host's compaction instruction) with text and every other request with
// a call of look, and keeps every body it receives.
type compactingServer struct {
	t      *testing.T
	mu     sync.Mutex
	bodies [][]byte
}

func (s *compactingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	file := "call0_a.http"
	if strings.Contains(string(body), "is about to be replaced by a summary") {
		file = "done.http"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(recordingBody(s.t, file))
}

// Through the real OpenAI adapter, a session that compacts: every request's recorded wire
// digest is the SHA-256 of the body the server received, and debug prompt --wire renders
// every step's body again from its receipt — the compaction requests and the steps after a
// compaction among them — and finds the same digest: what was sent is proved byte for byte.
func TestCompactionWireIsProved(t *testing.T) {
	window := windowFor(t, 350) // room for about ten small steps
	h := newHarness(t)
	srv := &compactingServer{t: t}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	a := buildAgent("look")
	a.Steps = 30
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: a,
		Provider:     openai.New(openai.Options{Name: "llamacpp", BaseURL: hs.URL + "/v1", APIKey: "sk-x", Dialect: openai.DialectCompatible, IgnoreEnv: true}),
		ProviderName: "wire", Model: model.ModelInfo{ID: "qwen3:8b", ContextWindow: window}, Tools: []turn.Tool{look}})
	if err != nil || out.Reason != events.FinishStepLimit {
		t.Fatalf("outcome %+v %v", out, err)
	}
	var done []events.ProviderRequest
	compactions := 0
	for _, p := range h.events(t) {
		switch e := p.(type) {
		case events.ProviderRequest:
			if e.Status != events.RequestStarted {
				done = append(done, e)
			}
		case events.TranscriptCompacted:
			compactions++
		}
	}
	if compactions < 2 || len(done) != len(srv.bodies) {
		t.Fatalf("%d compactions, %d requests recorded, %d received", compactions, len(done), len(srv.bodies))
	}
	for i, r := range done {
		if r.Wire == nil || r.Wire.RequestSHA256 != sha(srv.bodies[i]) {
			t.Fatalf("request %d (step %d, %q): the recorded digest is not the body received", i+1, r.Step, r.Purpose)
		}
	}
	q := queries.New(h.store, h.registry, nil, nil)
	for _, r := range done {
		_, checks, err := q.PromptWithWire(context.Background(), h.session, r.Step, false, provider.RenderWire)
		if err != nil {
			t.Fatalf("step %d: %v", r.Step, err)
		}
		for _, c := range checks {
			if !c.Verified || c.RenderedSHA256 != c.RecordedSHA256 {
				t.Fatalf("step %d (%q): %+v", r.Step, r.Purpose, c)
			}
		}
	}
}
