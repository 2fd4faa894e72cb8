package wire

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/model"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 10, 14, 9, 21, 0, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "17"}, 17 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "17"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": "Tue, 14 Oct 2025 09:21:30 GMT"}, 30 * time.Second},
		{map[string]string{"Retry-After": "Tue, 14 Oct 2025 09:20:00 GMT"}, 0}, // in the past
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tt.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestHTTPError(t *testing.T) {
	ep := Endpoint{Provider: "p", BaseURL: "http://x/v1", KeyEnv: "P_API_KEY"}
	tests := []struct {
		name string
		f    Failure
		want string
	}{
		{"401", Failure{Status: 401}, model.CodeAuth},
		{"403", Failure{Status: 403, Message: "country not supported"}, model.CodeAuth},
		{"429", Failure{Status: 429}, model.CodeRateLimit},
		{"quota", Failure{Status: 429, Code: "insufficient_quota"}, model.CodeRateLimit},
		{"400 overflow by code", Failure{Status: 400, Code: "context_length_exceeded"}, model.CodeContextOverflow},
		{"400 overflow llama.cpp", Failure{Status: 400, Type: "exceed_context_size_error", Message: "the request exceeds the available context size, try increasing it"}, model.CodeContextOverflow},
		{"400 overflow anthropic", Failure{Status: 400, Type: "invalid_request_error", Message: "input length and `max_tokens` exceed context limit: 197537 + 8192 > 200000, decrease input length or `max_tokens` and try again"}, model.CodeContextOverflow},
		{"400 other", Failure{Status: 400, Message: "messages: field required"}, model.CodeInvalidRequest},
		{"404", Failure{Status: 404}, model.CodeInvalidRequest},
		{"408", Failure{Status: 408}, model.CodeTransport},
		{"500", Failure{Status: 500}, model.CodeTransport},
		{"503", Failure{Status: 503}, model.CodeTransport},
		{"in-stream server error", Failure{Type: "server_error", Message: "The server had an error"}, model.CodeTransport},
		{"in-stream unknown", Failure{Message: "something"}, model.CodeUnknown},
		{"5xx mentioning context is not overflow", Failure{Status: 500, Message: "context window service down"}, model.CodeTransport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ep.HTTPError(tt.f, "m1")
			if e.Code() != tt.want || e.Fix == "" || e.Provider != "p" || e.Status != tt.f.Status {
				t.Fatalf("HTTPError(%+v) = %v (code %s), want %s", tt.f, e, e.Code(), tt.want)
			}
		})
	}
	if e := ep.HTTPError(Failure{Status: 401}, "m1"); e.Fix != `check the API key (ZUNO_P_API_KEY, zuno auth set p, or P_API_KEY) and that it may use model "m1"` {
		t.Errorf("auth fix %q", e.Fix)
	}
	h := http.Header{}
	h.Set("Retry-After", "3")
	if e := ep.HTTPError(Failure{Status: 429, Header: h}, ""); e.RetryAfter != 3*time.Second {
		t.Errorf("RetryAfter = %v", e.RetryAfter)
	}
}

func TestNetworkError(t *testing.T) {
	ep := Endpoint{Provider: "p", BaseURL: "http://x"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ep.NetworkError(ctx, errors.New("dial")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if err := ep.NetworkError(context.Background(), errors.New("connection reset")); !model.HasCode(err, model.CodeTransport) {
		t.Errorf("reset: %v", err)
	}
}
