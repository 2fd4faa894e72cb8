package model_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/model"
)

func TestRetryPolicy(t *testing.T) {
	p := model.RetryPolicy{Retries: 3, BaseDelay: time.Second, MaxDelay: 8 * time.Second}
	rate := func(after time.Duration, providerCode string) error {
		e := model.NewError(model.CodeRateLimit, "slow down", "wait")
		e.RetryAfter, e.ProviderCode = after, providerCode
		return e
	}
	transport := model.NewError(model.CodeTransport, "HTTP 500", "retry")
	tests := []struct {
		name    string
		policy  model.RetryPolicy
		attempt int
		err     error
		output  bool
		jitter  float64
		want    time.Duration
		retry   bool
	}{
		{"429 with Retry-After waits what it says", p, 1, rate(2500*time.Millisecond, ""), false, 0.9, 2500 * time.Millisecond, true},
		{"429 without Retry-After backs off", p, 1, rate(0, ""), false, 0, 500 * time.Millisecond, true},
		{"500 backs off, jitter spreads the upper half", p, 1, transport, false, 0.5, 750 * time.Millisecond, true},
		{"the backoff doubles per attempt", p, 3, transport, false, 0, 2 * time.Second, true},
		{"the backoff is capped", model.RetryPolicy{Retries: 10, BaseDelay: time.Second, MaxDelay: 8 * time.Second}, 9, transport, false, 0, 4 * time.Second, true},
		{"attempts are bounded", p, 4, transport, false, 0, 0, false},
		{"the zero policy sends once", model.RetryPolicy{}, 1, transport, false, 0, 0, false},
		{"never after output", p, 1, transport, true, 0, 0, false},
		{"a Retry-After beyond the cap is not waited for", p, 1, rate(time.Minute, ""), false, 0, time.Minute, false},
		{"an exhausted quota is not retried", p, 1, rate(0, "insufficient_quota"), false, 0, 0, false},
		{"auth is not retried", p, 1, model.NewError(model.CodeAuth, "no", "key"), false, 0, 0, false},
		{"context overflow is not retried", p, 1, model.NewError(model.CodeContextOverflow, "big", "shrink"), false, 0, 0, false},
		{"invalid request is not retried", p, 1, model.NewError(model.CodeInvalidRequest, "bad", "fix"), false, 0, 0, false},
		{"cancellation is not retried", p, 1, context.Canceled, false, 0, 0, false},
		{"an untyped error is not retried", p, 1, errors.New("boom"), false, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, retry := tt.policy.Retry(tt.attempt, tt.err, tt.output, tt.jitter)
			if retry != tt.retry || (tt.want != 0 && got != tt.want) {
				t.Fatalf("Retry() = %v, %v; want %v, %v", got, retry, tt.want, tt.retry)
			}
		})
	}
}
