package turn_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/adapters/provider/replay"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// wireCase is a 20-step session through one adapter against a local server that keeps every
// body it receives (replay.Sequence; no paid API is reachable here): 19 tool-capable steps,
// then the step limit's text-only request, which the model answers with a call anyway.
type wireCase struct {
	name string
	// open returns the adapter for the server's root URL.
	open func(root string) model.Provider
	path string
	// files are the responses in order; the finalisation's is the last.
	files     []string
	maxTokens int
}

func wireCases(t *testing.T) []wireCase {
	chat := func(d openai.Dialect) func(string) model.Provider {
		return func(root string) model.Provider {
			return openai.New(openai.Options{Name: "llamacpp", BaseURL: root + "/v1", APIKey: "sk-wire-secret", Dialect: d, IgnoreEnv: true})
		}
	}
	look := func(file string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = file
		}
		return out
	}
	// Step 5's first attempt fails with a 500 and is retried: a failed attempt's body is
	// recorded and checked as well.
	withRetry := append(append(look("call0_a.http", 4), "error_500.http"), look("call0_a.http", 16)...)
	return []wireCase{
		{"openai-compatible chat, a retried step", chat(openai.DialectCompatible), "/v1/chat/completions", withRetry, 0},
		{"openai chat dialect, developer role and max_completion_tokens", chat(openai.DialectOpenAI), "/v1/chat/completions", look("call0_a.http", 20), 2048},
		{"anthropic messages", func(root string) model.Provider {
			return anthropic.New(anthropic.Options{BaseURL: root, APIKey: "sk-ant-wire-secret"})
		}, "/v1/messages", look("anthropic_look.http", 20), 0},
		{"openai responses, reasoning sent back", func(root string) model.Provider {
			return openai.NewResponses(openai.Options{BaseURL: root + "/v1", APIKey: "sk-wire-secret", IgnoreEnv: true})
		}, "/v1/responses", responsesFiles(t, 20), 0},
	}
}

// For every request of the session, the wire digest recorded on its completed or failed event
// is the SHA-256 of the body the server received, and the response digest that of the body it
// sent; the endpoint names the URL without the key; debug prompt --wire renders every step's
// body again from its receipt and finds the same digest; and the call the model made past the
// step limit is recorded, not run.
func TestWireDigestsAreTheBodiesSent(t *testing.T) {
	for _, tc := range wireCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			h, seq, srv := runWireSession(t, tc)
			sent := seq.Requests()
			var recorded []events.ProviderRequest
			var last events.ProviderRequest
			for _, p := range h.events(t) {
				if r, ok := p.(events.ProviderRequest); ok && r.Status != events.RequestStarted {
					recorded, last = append(recorded, r), r
				}
			}
			if len(recorded) != len(sent) || len(sent) != len(tc.files) {
				t.Fatalf("%d requests recorded, %d sent, %d responses", len(recorded), len(sent), len(tc.files))
			}
			for i, r := range recorded {
				w := r.Wire
				if w == nil {
					t.Fatalf("request %d (%s) has no wire record", i+1, r.Status)
				}
				body := sent[i].Body
				if w.RequestSHA256 != sha(body) || w.RequestBytes != int64(len(body)) {
					t.Errorf("request %d: recorded %s (%d bytes), server received %s (%d bytes)", i+1, w.RequestSHA256, w.RequestBytes, sha(body), len(body))
				}
				resp := recordingBody(t, tc.files[i])
				if w.ResponseSHA256 != sha(resp) || w.ResponseBytes != int64(len(resp)) {
					t.Errorf("request %d: response digest %s (%d bytes), server sent %s (%d bytes)", i+1, w.ResponseSHA256, w.ResponseBytes, sha(resp), len(resp))
				}
				if w.Endpoint != srv.URL+tc.path || strings.Contains(w.Endpoint, "secret") {
					t.Errorf("request %d: endpoint %q, want %q", i+1, w.Endpoint, srv.URL+tc.path)
				}
			}
			q := queries.New(h.store, h.registry, nil, nil)
			for step := 1; step <= 20; step++ {
				_, checks, err := q.PromptWithWire(context.Background(), h.session, step, false, provider.RenderWire)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				for _, c := range checks {
					if !c.Verified || c.RenderedSHA256 != c.RecordedSHA256 {
						t.Fatalf("step %d: %+v", step, c)
					}
				}
			}
			if last.StepLimitFinalization == nil || len(last.Response.ClosedToolCalls) != 1 || last.Response.ClosedToolCalls[0].Name != "look" ||
				len(last.Response.ToolCalls) != 0 {
				t.Fatalf("the finalisation's response does not record the call made past the limit: %+v", last.Response)
			}
			if tc.path == "/v1/responses" && (len(last.Response.Reasoning) != 1 || last.Response.Reasoning[0].Summary != "Step 20: look again.") {
				t.Fatalf("the reasoning summary is not recorded: %+v", last.Response.Reasoning)
			}
		})
	}
}

// A receipt rewritten with every digest recomputed still verifies on its own (prompt.Verify),
// but the body it renders is not the body that was sent: --wire reports wire_mismatch. A wire
// record naming a mapping this build does not have cannot be checked: wire_unverifiable.
func TestWireReportsATamperedRequest(t *testing.T) {
	tc := wireCases(t)[0]
	h, _, _ := runWireSession(t, tc)
	tests := []struct {
		name   string
		tamper func(t *testing.T, p events.Payload) events.Payload
		code   string
		// step is the step checked.
		step int
	}{
		{"the user's message rewritten, receipt digests recomputed", forgeUserMessage, queries.CodeWireMismatch, 1},
		{"the recorded digest of the body changed", func(t *testing.T, p events.Payload) events.Payload {
			if r, ok := p.(events.ProviderRequest); ok && r.Wire != nil {
				w := *r.Wire
				w.RequestSHA256 = sha([]byte("another body"))
				r.Wire = &w
				return r
			}
			return p
		}, queries.CodeWireMismatch, 1},
		// The finalisation is the step that sends a tool choice ("none").
		{"the recorded mapping changed: tool choice omitted", remap("compatible", "omitted"), queries.CodeWireMismatch, 20},
		{"the recorded mapping changed: the openai dialect", remap("openai", "sent"), queries.CodeWireMismatch, 1},
		{"the recorded mapping changed: an unknown dialect", remap("gemini", "sent"), queries.CodeWireUnverifiable, 1},
		{"a mapping version this build does not render", func(t *testing.T, p events.Payload) events.Payload {
			if r, ok := p.(events.ProviderRequest); ok && r.Wire != nil {
				w := *r.Wire
				w.MappingVersion = openai.ChatMappingVersion + 1
				r.Wire = &w
				return r
			}
			return p
		}, queries.CodeWireUnverifiable, 1},
		{"another adapter named", func(t *testing.T, p events.Payload) events.Payload {
			if r, ok := p.(events.ProviderRequest); ok && r.Wire != nil {
				w := *r.Wire
				w.Adapter = "gemini.generate"
				r.Wire = &w
				return r
			}
			return p
		}, queries.CodeWireUnverifiable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &tamperedLog{store: h.store, registry: h.registry, t: t, tamper: tt.tamper}
			q := queries.New(log, h.registry, nil, nil)
			_, checks, err := q.PromptWithWire(context.Background(), h.session, tt.step, false, provider.RenderWire)
			var we *queries.WireError
			if !errors.As(err, &we) || domain.CodeOf(err) != tt.code || len(checks) != 1 || checks[0].Verified {
				t.Fatalf("err %v, checks %+v; want %s", err, checks, tt.code)
			}
			if n := strings.Count(err.Error(), tt.code); n != 1 {
				t.Errorf("the message states its code %d times: %v", n, err)
			}
		})
	}
}

// remap rewrites every recorded wire mapping's settings.
func remap(dialect, toolChoice string) func(*testing.T, events.Payload) events.Payload {
	return func(_ *testing.T, p events.Payload) events.Payload {
		if r, ok := p.(events.ProviderRequest); ok && r.Wire != nil {
			w := *r.Wire
			w.Mapping = map[string]string{"dialect": dialect, "toolChoice": toolChoice}
			r.Wire = &w
			return r
		}
		return p
	}
}

func runWireSession(t *testing.T, tc wireCase) (*harness, *replay.Sequence, *httptest.Server) {
	t.Helper()
	files := make([]string, len(tc.files))
	for i, f := range tc.files {
		files[i] = wireFile(f)
	}
	seq := replay.NewSequence(files...)
	h := newHarness(t)
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	h.driver.Jitter = func() float64 { return 0 }
	h.driver.Sleep = func(context.Context, time.Duration) error { return nil }
	srv := httptest.NewServer(seq)
	t.Cleanup(srv.Close)
	a := buildAgent("look")
	a.Steps = 19
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: a,
		Provider: tc.open(srv.URL), ProviderName: "wire", Model: model.ModelInfo{ID: "qwen3:8b"}, Tools: []turn.Tool{look},
		MaxTokens: tc.maxTokens, Retry: model.RetryPolicy{Retries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}})
	if err != nil || out.Reason != events.FinishStepLimit || out.Steps != 20 {
		t.Fatalf("outcome %+v %v; want step_limit after 20 steps", out, err)
	}
	return h, seq, srv
}

// forgeUserMessage rewrites the user's message ("go" → "GO", the same size and estimate) and
// recomputes every digest the first receipt holds, as someone rewriting the log with the code
// in hand could. The receipt leaves the message to its own event (loggedParts), so both are
// rewritten.
func forgeUserMessage(t *testing.T, p events.Payload) events.Payload {
	switch e := p.(type) {
	case events.UserMessageAppended:
		e.Text = "GO"
		return e
	case events.PromptAssembled:
		if e.ConversationBase != nil || e.LoggedParts != 1 {
			return p
		}
		forged, err := prompt.LoggedMessages([]model.Message{{Role: model.RoleUser, Text: "GO"}})
		if err != nil {
			t.Fatal(err)
		}
		full := e.PromptReceipt // expanded with the forged transcript
		full.Messages = append(slices.Clone(full.Messages), forged.Parts...)
		full.LoggedParts = 0
		full.Blobs = maps.Clone(full.Blobs)
		maps.Copy(full.Blobs, forged.Blobs)
		if full.ConversationDigest, err = prompt.ConversationDigest(forged.Parts); err != nil {
			t.Fatal(err)
		}
		if full.AssemblyDigest, err = prompt.AssemblyDigest(full); err != nil {
			t.Fatal(err)
		}
		req, err := prompt.Reconstruct(full)
		if err != nil {
			t.Fatal(err)
		}
		body, err := prompt.RequestBytes(req)
		if err != nil {
			t.Fatal(err)
		}
		full.ActualDigest = sha(body)
		if err := prompt.Verify(full); err != nil {
			t.Fatalf("the forged receipt does not verify on its own, so this row proves nothing: %v", err)
		}
		e.ConversationDigest, e.AssemblyDigest, e.ActualDigest = full.ConversationDigest, full.AssemblyDigest, full.ActualDigest
		return e
	}
	return p
}

// tamperedLog reads the session's stream with one payload rewritten, as an altered database
// would return it.
type tamperedLog struct {
	store interface {
		ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
		ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error)
	}
	registry *events.Registry
	t        *testing.T
	tamper   func(*testing.T, events.Payload) events.Payload
}

func (l *tamperedLog) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	recs, err := l.store.ReadStream(ctx, stream, from, limit)
	for i, rec := range recs {
		p, derr := l.registry.Decode(rec)
		if derr != nil {
			l.t.Fatal(derr)
		}
		data, merr := json.Marshal(l.tamper(l.t, p))
		if merr != nil {
			l.t.Fatal(merr)
		}
		recs[i].Data = data
	}
	return recs, err
}

func (l *tamperedLog) ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
	return l.store.ReadAll(ctx, after, limit)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// wireFile is a recording's path: a name in testdata/wire, or a generated file's own path.
func wireFile(f string) string {
	if filepath.IsAbs(f) {
		return f
	}
	return filepath.Join("testdata", "wire", f)
}

// responsesFiles writes n Responses API exchanges that each call look (the last one too: it
// answers the step limit's text-only request with a call anyway).
func responsesFiles(t *testing.T, n int) []string {
	dir := t.TempDir()
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, responsesExchange(t, dir, i, false))
	}
	return out
}

// recordingBody is the body a replay recording sends.
func recordingBody(t *testing.T, file string) []byte {
	raw, err := os.ReadFile(wireFile(file))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
