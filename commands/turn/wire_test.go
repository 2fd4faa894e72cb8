package turn_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/adapters/provider/replay"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// These turns run through the real OpenAI adapter against a local server replaying Chat
// Completions exchanges (testdata/wire, written to the documented wire format and what
// llama.cpp and Ollama send: no paid API is reachable here). Each case checks the provider
// request events it must leave: every attempt is a request of its own, with its outcome.
func TestWireExchanges(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		// requests is each provider.request event after the first start: status, attempt,
		// and the error code and wait of a failed attempt.
		requests string
		reason   string
		calls    int32
		sleeps   []time.Duration
	}{
		{"call_0 in every response", []string{"call0_a.http", "call0_b.http", "done.http"},
			"completed started completed started completed", events.FinishCompleted, 2, nil},
		{"no ids at all", []string{"noid.http", "noid.http", "done.http"},
			"completed started completed started completed", events.FinishCompleted, 2, nil},
		{"ids repeated within one response", []string{"dup.http", "done.http"},
			"completed started completed", events.FinishCompleted, 2, nil},
		{"429 with Retry-After, then success", []string{"error_429_retry_after.http", "done.http"},
			"failed(rate_limit,2000) started#2 completed", events.FinishCompleted, 0, []time.Duration{2 * time.Second}},
		{"500 twice, then success", []string{"error_500.http", "error_500.http", "done.http"},
			"failed(transport,500) started#2 failed(transport,1000) started#3 completed", events.FinishCompleted, 0,
			[]time.Duration{500 * time.Millisecond, time.Second}},
		{"a stream dropped before any output is retried", []string{"drop_before_output.http", "done.http"},
			"failed(transport,500) started#2 completed", events.FinishCompleted, 0, []time.Duration{500 * time.Millisecond}},
		{"a stream cut after the first byte of output is not retried", []string{"cut_after_output.http"},
			"failed(transport,0)", events.FinishFailed, 0, nil},
		{"500 past the retries ends the turn", []string{"error_500.http", "error_500.http", "error_500.http", "error_500.http"},
			"failed(transport,500) started#2 failed(transport,1000) started#3 failed(transport,2000) started#4 failed(transport,0)",
			events.FinishFailed, 0, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, seq, look := wireHarness(t, tt.files...)
			var slept []time.Duration
			h.driver.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
			out, err := h.driver.Run(context.Background(), wireRequest(t, h, seq, look))
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != tt.reason || look.calls.Load() != tt.calls {
				t.Fatalf("outcome %+v, %d calls run; want %s and %d", out, look.calls.Load(), tt.reason, tt.calls)
			}
			if got := requestTrail(h.events(t)); got != tt.requests {
				t.Fatalf("requests\n got %s\nwant %s", got, tt.requests)
			}
			if fmt.Sprint(slept) != fmt.Sprint(tt.sleeps) {
				t.Fatalf("slept %v, want %v", slept, tt.sleeps)
			}
			if n := len(seq.Requests()); n != len(tt.files) {
				t.Fatalf("%d requests sent, want %d", n, len(tt.files))
			}
		})
	}
}

// The server's own ids go back to it: per-response call_0 in both assistant messages and
// both results; where one response repeated an id, the runtime's ids pair each result with
// its call.
func TestWireIDsSentBack(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		// last is what the final request's body must hold, in order.
		last []string
	}{
		{"call_0 per response", []string{"call0_a.http", "call0_b.http", "done.http"},
			[]string{`"tool_calls":[{"id":"call_0"`, `"tool_call_id":"call_0"`, `"tool_calls":[{"id":"call_0"`, `"tool_call_id":"call_0"`}},
		{"no ids", []string{"noid.http", "done.http"}, []string{`"tool_calls":[{"id":"call_`, `"tool_call_id":"call_`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, seq, look := wireHarness(t, tt.files...)
			if out, err := h.driver.Run(context.Background(), wireRequest(t, h, seq, look)); err != nil || out.Reason != events.FinishCompleted {
				t.Fatalf("outcome %+v %v", out, err)
			}
			reqs := seq.Requests()
			body := string(reqs[len(reqs)-1].Body)
			at := 0
			for _, w := range tt.last {
				i := strings.Index(body[at:], w)
				if i < 0 {
					t.Fatalf("last request lacks %s after offset %d:\n%s", w, at, body)
				}
				at += i + len(w)
			}
		})
	}
	h, seq, look := wireHarness(t, "dup.http", "done.http")
	if out, err := h.driver.Run(context.Background(), wireRequest(t, h, seq, look)); err != nil || out.Reason != events.FinishCompleted {
		t.Fatalf("outcome %+v %v", out, err)
	}
	var ids []string
	for _, e := range h.events(t) {
		if s, ok := e.(events.ToolSettled); ok {
			ids = append(ids, s.CallID)
		}
	}
	body := string(seq.Requests()[1].Body)
	for _, id := range ids {
		if strings.Count(body, `"`+id+`"`) != 2 || strings.Contains(body, `"call_0"`) {
			t.Fatalf("call %s is not paired on the wire by the runtime's id:\n%s", id, body)
		}
	}
}

// Cancelling the run while it waits to retry stops the wait at once: the failed attempt
// is recorded, no other request is sent, and the turn finishes interrupted.
func TestRetryWaitStopsOnCancel(t *testing.T) {
	h, seq, look := wireHarness(t, "error_429_retry_after.http", "done.http")
	ctx, cancel := context.WithCancel(context.Background())
	var waited atomic.Bool
	h.driver.Sleep = nil // the real timer: two seconds, unless the cancellation ends it
	h.driver.Jitter = func() float64 { return 0 }
	go func() {
		for len(seq.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		waited.Store(true)
		cancel()
	}()
	begun := time.Now()
	out, err := h.driver.Run(ctx, wireRequest(t, h, seq, look))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != events.FinishInterrupted || !waited.Load() || len(seq.Requests()) != 1 {
		t.Fatalf("outcome %+v, %d requests", out, len(seq.Requests()))
	}
	if d := time.Since(begun); d >= 2*time.Second {
		t.Fatalf("the run waited %v, the whole Retry-After", d)
	}
	if got := requestTrail(h.events(t)); got != "failed(rate_limit,2000)" {
		t.Fatalf("requests %s", got)
	}
}

func wireHarness(t *testing.T, files ...string) (*harness, *replay.Sequence, *probeTool) {
	t.Helper()
	for i, f := range files {
		files[i] = filepath.Join("testdata", "wire", f)
	}
	seq := replay.NewSequence(files...)
	h := newHarness(t)
	h.driver.Jitter = func() float64 { return 0 }
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	return h, seq, look
}

func wireRequest(t *testing.T, h *harness, seq *replay.Sequence, look *probeTool) turn.Request {
	srv := httptest.NewServer(seq)
	t.Cleanup(srv.Close)
	p := openai.New(openai.Options{Name: "llamacpp", BaseURL: srv.URL + "/v1", APIKey: "none"})
	return turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: buildAgent("look"),
		Provider: p, ProviderName: "llamacpp", Model: model.ModelInfo{ID: "qwen3:8b"}, Tools: []turn.Tool{look},
		Retry: model.RetryPolicy{Retries: 3, BaseDelay: time.Second, MaxDelay: time.Minute}}
}

// requestTrail renders the provider request events after the first start.
func requestTrail(ps []events.Payload) string {
	var out []string
	for _, p := range ps {
		r, ok := p.(events.ProviderRequest)
		if !ok {
			continue
		}
		s := r.Status
		switch {
		case r.Status == events.RequestStarted && r.Attempt > 1:
			s = fmt.Sprintf("started#%d", r.Attempt)
		case r.Status == events.RequestFailed:
			s = fmt.Sprintf("failed(%s,%d)", r.Error.Code, r.RetryInMs)
		}
		out = append(out, s)
	}
	return strings.Join(out[1:], " ")
}

// Another writer appending to the session while the run waits to retry: the next attempt's
// start cannot be recorded, and the run ends session_busy without sending it.
func TestRetryAfterAnotherWriterIsSessionBusy(t *testing.T) {
	h, seq, look := wireHarness(t, "error_500.http", "done.http")
	h.driver.Sleep = func(ctx context.Context, _ time.Duration) error {
		_, err := h.store.Append(ctx, commands.SessionStream(h.session), events.Any,
			events.Event{ID: "0b5e8a52-3f1d-4c6e-9a7b-2d4f6e8a0c1e", Type: events.TypeSessionTitled, Data: []byte(`{"sessionId":"ses_test","title":"x"}`)})
		if err != nil {
			t.Error(err)
		}
		return nil
	}
	_, err := h.driver.Run(context.Background(), wireRequest(t, h, seq, look))
	if domain.CodeOf(err) != turn.CodeSessionBusy || len(seq.Requests()) != 1 {
		t.Fatalf("err %v, %d requests; want session_busy and no second request", err, len(seq.Requests()))
	}
}
