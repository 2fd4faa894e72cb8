package model

import (
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/domain"
)

// Stable provider error codes. They are recorded in the log and shown to users and models,
// so a code never changes meaning; a new situation gets a new code. Each names what the
// turn driver should do: retry (rate_limit, transport), shrink the prompt
// (context_overflow), or stop and tell the user (the rest).
const (
	// CodeAuth: the provider refused the credentials (HTTP 401/403).
	CodeAuth = "auth"
	// CodeRateLimit: the provider asked us to slow down (HTTP 429, Anthropic's 529
	// overloaded). The request itself is fine; Error.RetryAfter says how long to wait if known.
	CodeRateLimit = "rate_limit"
	// CodeContextOverflow: the prompt plus the output budget exceed the model's window.
	CodeContextOverflow = "context_overflow"
	// CodeTransport: the exchange failed (network, timeout, server error, a stream cut short).
	// The same request may be retried unchanged.
	CodeTransport = "transport"
	// CodeInvalidRequest: the provider (or Request.Validate) rejected the request's content.
	// Retrying it unchanged fails again.
	CodeInvalidRequest = "invalid_request"
	// CodeScriptExhausted: the scripted provider has no turn left for this request.
	CodeScriptExhausted = "script_exhausted"
	// CodeScriptInvalid: a script file is malformed; Error.Field names the turn and field.
	CodeScriptInvalid = "script_invalid"
	// CodeUnknown: a failure none of the other codes describes, e.g. a response this client
	// cannot decode.
	CodeUnknown = "unknown"
)

// Error is a typed provider failure. Like domain.Error its text is read by people and by
// models, so it always says what to do next.
type Error struct {
	code string
	// Message says what went wrong; Fix says what to do about it.
	Message string
	Fix     string
	// Provider names the provider that failed ("openai", "anthropic", "scripted", or the
	// name an OpenAI-compatible endpoint was configured with).
	Provider string
	// Status is the HTTP status the provider answered with, 0 if there was none (a network
	// failure, or an error event inside a stream that had already started).
	Status int
	// ProviderCode is the provider's own error code or type ("context_length_exceeded",
	// "overloaded_error"), kept for investigation.
	ProviderCode string
	// RetryAfter is how long a rate_limit error asked us to wait; 0 means not said.
	RetryAfter time.Duration
	// Field is the request or script field at fault, as a path ("messages[3].toolCallId",
	// "turns[2].toolCalls[0].arguments").
	Field string
	// Err is the underlying error, for errors.As on the SDK's own types.
	Err error
}

// NewError returns an error with one of this package's codes.
func NewError(code, message, fix string) *Error {
	return &Error{code: code, Message: message, Fix: fix}
}

// Code returns the stable code, the same method domain.Error has, so a caller can report
// either without knowing which layer refused.
func (e *Error) Code() string { return e.code }

func (e *Error) Error() string {
	return domain.FormatError(e.code, e.Provider, e.Field, e.Message, e.Fix)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether sending the same request again may succeed.
func (e *Error) Retryable() bool {
	return e.code == CodeRateLimit || e.code == CodeTransport
}

// HasCode reports whether err is, or wraps, an *Error with the given code.
func HasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.code == code
}

func invalidField(field, message, fix string) *Error {
	e := NewError(CodeInvalidRequest, message, fix)
	e.Field = field
	return e
}

// formatWait renders a wait for a fix text, "" when unknown.
func formatWait(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// RateLimitFix is the fix text of a rate_limit error, shared so that every provider phrases
// the wait the same way.
func RateLimitFix(retryAfter time.Duration) string {
	if s := formatWait(retryAfter); s != "" {
		return fmt.Sprintf("wait %s and retry, or lower the request rate", s)
	}
	return "wait a little and retry with backoff, or lower the request rate"
}
