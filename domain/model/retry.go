package model

import (
	"errors"
	"time"
)

// RetryPolicy bounds how a turn re-sends a provider request that failed (docs/turns.md,
// "Retries"). The zero value sends each request once.
type RetryPolicy struct {
	// Retries is how many times a failed request may be sent again (provider.<id>.retries).
	Retries int
	// BaseDelay is the first backoff when the provider names no wait; it doubles per retry.
	BaseDelay time.Duration
	// MaxDelay caps every wait. A Retry-After longer than it is not waited for: the step fails
	// with the wait recorded, since a turn blocked for minutes helps no one.
	MaxDelay time.Duration
}

// DefaultRetries is the retry count of a provider the configuration says nothing about.
const DefaultRetries = 3

// DefaultRetryPolicy is the policy of a provider reached over the network.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Retries: DefaultRetries, BaseDelay: time.Second, MaxDelay: 60 * time.Second}
}

// Retry decides whether attempt (1 for the first request) is sent again after err, and after
// how long. Only a rate limit (without an exhausted quota) and a transport failure are retried,
// and only when no output arrived: a partial stream was already shown and may hold tool calls,
// so it is a failed step, never re-asked. The provider's Retry-After is honoured as given;
// otherwise the wait is exponential with jitter in [0,1) spreading it over its upper half, so
// clients that failed together do not return together.
func (p RetryPolicy) Retry(attempt int, err error, output bool, jitter float64) (time.Duration, bool) {
	var e *Error
	if output || attempt > p.Retries || !errors.As(err, &e) || !e.Retryable() || e.ProviderCode == "insufficient_quota" {
		return 0, false
	}
	if e.RetryAfter > 0 {
		return e.RetryAfter, p.MaxDelay <= 0 || e.RetryAfter <= p.MaxDelay
	}
	d := p.BaseDelay
	for i := 1; i < attempt && (p.MaxDelay <= 0 || d < p.MaxDelay); i++ {
		d *= 2
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d/2 + time.Duration(jitter*float64(d/2)), true
}
