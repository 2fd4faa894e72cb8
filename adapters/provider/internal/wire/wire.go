// Package wire maps what comes back over HTTP from a model provider (status codes, error
// bodies, retry headers, network failures) onto the typed errors of domain/model. The
// OpenAI and Anthropic adapters share it so that the same failure gets the same code and
// the same advice whichever provider produced it.
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zuno-run/zuno/domain/model"
)

// SettingPromptCacheKey is the mapping setting that records the prompt_cache_key a body
// carried (docs/providers.md, "Prompt caching"); rendering the body again sends it again.
const SettingPromptCacheKey = "promptCacheKey"

// Endpoint describes the provider an error came from, for the fix texts.
type Endpoint struct {
	Provider string // "openai", "anthropic", or a configured name such as "ollama"
	BaseURL  string
	KeyEnv   string // the environment variable the API key defaults to
}

// Failure is an error answer, whether it came as an HTTP status or as an error event inside
// an already started stream (Status 0).
type Failure struct {
	Status  int
	Code    string // the provider's error code, if any ("context_length_exceeded")
	Type    string // the provider's error type, if any ("invalid_request_error")
	Message string
	Header  http.Header
	Cause   error
}

// HTTPError classifies a failure. model is the model id of the request ("" for Models).
func (ep Endpoint) HTTPError(f Failure, modelID string) *model.Error {
	providerCode := f.Code
	if providerCode == "" {
		providerCode = f.Type
	}
	msg := f.Message
	if msg == "" {
		msg = http.StatusText(f.Status)
	}
	if f.Status != 0 {
		msg = fmt.Sprintf("%s (HTTP %d)", msg, f.Status)
	}
	mk := func(code, fix string) *model.Error {
		e := model.NewError(code, msg, fix)
		e.Provider, e.Status, e.ProviderCode, e.Err = ep.Provider, f.Status, providerCode, f.Cause
		return e
	}
	switch {
	case f.Status == http.StatusUnauthorized || f.Status == http.StatusForbidden ||
		f.Type == "authentication_error" || f.Type == "permission_error":
		fix := "check the API key"
		if ep.KeyEnv != "" {
			// The places the runtime reads a key from (adapters/credentials), named by the
			// variable, since a configured name such as "ollama" is not one of them.
			fix += " (ZUNO_" + ep.KeyEnv + ", zuno auth set " + strings.ToLower(strings.TrimSuffix(ep.KeyEnv, "_API_KEY")) + ", or " + ep.KeyEnv + ")"
		}
		if modelID != "" {
			fix += fmt.Sprintf(" and that it may use model %q", modelID)
		}
		return mk(model.CodeAuth, fix)
	case f.Status == http.StatusTooManyRequests || f.Type == "rate_limit_error" || f.Code == "rate_limit_exceeded":
		e := mk(model.CodeRateLimit, "")
		e.RetryAfter = RetryAfter(f.Header, time.Now())
		e.Fix = model.RateLimitFix(e.RetryAfter)
		if f.Code == "insufficient_quota" {
			// Waiting does not refill a quota, so say what does.
			e.Fix = "the account's quota is used up: check the provider's billing and limits, or use another provider"
		}
		return e
	case IsContextOverflow(f.Code, f.Type, f.Message) && (f.Status == 0 || f.Status/100 == 4):
		return mk(model.CodeContextOverflow,
			"shorten the conversation (compact the history, drop large tool output or attachments), lower maxTokens, or choose a model with a larger context window")
	case f.Status == http.StatusNotFound || f.Code == "model_not_found":
		return mk(model.CodeInvalidRequest,
			fmt.Sprintf("check the model id %q against `zuno models` and the base URL %s", modelID, ep.BaseURL))
	case f.Status == http.StatusRequestTimeout || f.Status == http.StatusConflict || f.Status >= 500 ||
		f.Type == "api_error" || f.Type == "timeout_error" || f.Type == "server_error":
		return mk(model.CodeTransport, "the provider failed to answer; retry, and if it persists check the provider's status page")
	case f.Status/100 == 4 || f.Type == "invalid_request_error":
		return mk(model.CodeInvalidRequest, "the provider rejected the request as sent; fix the parameter its message names (retrying unchanged fails again)")
	default:
		return mk(model.CodeUnknown, "retry once; if it persists, report it with the provider's message")
	}
}

// contextOverflowMarkers are the phrases OpenAI, Anthropic, vLLM, llama.cpp and Ollama use
// for a prompt larger than the window. They come from error messages because only OpenAI
// and llama.cpp give the condition a code of its own.
var contextOverflowMarkers = []string{
	"maximum context length",  // OpenAI, vLLM
	"context_length_exceeded", // OpenAI code, some proxies put it in the message
	"context length exceeded",
	"exceeds the available context size", // llama.cpp
	"exceed_context_size_error",          // llama.cpp type
	"prompt is too long",                 // Anthropic
	"exceed context limit",               // Anthropic: input length and max_tokens exceed context limit
	"context window",                     // Anthropic, Ollama
	"too many tokens",
}

// IsContextOverflow reports whether an error answer means the prompt did not fit.
func IsContextOverflow(code, typ, message string) bool {
	if code == "context_length_exceeded" || typ == "exceed_context_size_error" {
		return true
	}
	m := strings.ToLower(message)
	for _, s := range contextOverflowMarkers {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// RetryAfter reads how long the provider asked us to wait: retry-after-ms (OpenAI), then
// retry-after in seconds or as an HTTP date. It returns 0 when neither says.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	return 0
}

// NetworkError classifies a failure without an error answer. A cancelled or expired ctx
// is returned as ctx.Err(), because the caller stopped the request; everything else that
// went wrong on the way is transport, except a body this client cannot decode.
func (ep Endpoint) NetworkError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		e := model.NewError(model.CodeUnknown, "the provider sent a response this client cannot decode: "+err.Error(),
			"check that the base URL "+ep.BaseURL+" serves the "+ep.Provider+" API; if it does, report the response")
		e.Provider, e.Err = ep.Provider, err
		return e
	}
	e := model.NewError(model.CodeTransport, "the request failed on the way: "+err.Error(),
		"check the network and that "+ep.BaseURL+" is reachable, then retry")
	e.Provider, e.Err = ep.Provider, err
	return e
}

// Truncated is the error for a stream that ended without the provider's end marker: the
// output is incomplete, so it must not be acted on as if it were whole.
func (ep Endpoint) Truncated() *model.Error {
	e := model.NewError(model.CodeTransport, "the response stream ended before the model finished",
		"retry the request; the partial output is incomplete")
	e.Provider = ep.Provider
	return e
}
