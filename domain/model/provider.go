package model

import "context"

// Provider is a model provider. It is declared here, beside the types it speaks, rather
// than in the turn driver, because several consumers share it (the turn driver, `zuno
// models`, the debug agent) and the adapters must all satisfy the same contract.
//
// Implementations are safe for concurrent use.
type Provider interface {
	// Stream sends req when the returned sequence is ranged over. It validates req first
	// (Request.Validate), so an invalid request fails the same way on every provider.
	// Failures are *Error values, except that a cancelled ctx yields ctx.Err(): the
	// interruption was the caller's, not the provider's.
	Stream(ctx context.Context, req Request) Stream
	// Models lists the models the provider serves.
	Models(ctx context.Context) ([]ModelInfo, error)
}

// Support is a capability answer that may be unknown: an OpenAI-compatible server's model
// list says nothing about capabilities, and guessing would let a caller trust a false "no".
type Support string

const (
	SupportUnknown Support = ""
	Supported      Support = "yes"
	Unsupported    Support = "no"
)

// ModelInfo describes one model a provider serves.
type ModelInfo struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName,omitempty"`
	// ContextWindow is the input limit in tokens, 0 when the provider does not say. Prompt
	// assembly refuses an over-long prompt before sending only when this is known.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	// MaxOutputTokens is the largest output the model allows, 0 when unknown.
	MaxOutputTokens int64   `json:"maxOutputTokens,omitempty"`
	Tools           Support `json:"tools,omitempty"`
	Reasoning       Support `json:"reasoning,omitempty"`
}

// Described is implemented by a provider opened from configuration: how it is spoken to and
// how its failures are retried. A provider without it is sent each request once.
type Described interface {
	Describe() Description
}

// Description is how a provider is reached, recorded on each request (docs/config.md,
// "Providers"), never with a secret in it.
type Description struct {
	// Family is the preset it was opened with: openai, openai-responses, anthropic, ollama,
	// llamacpp, vllm or compatible.
	Family string
	// API is the wire dialect: chat (Chat Completions), responses or messages (Anthropic).
	API     string
	BaseURL string
	// Quirks are the family's known differences from the API it imitates, each handled by the
	// adapter, in words.
	Quirks []string
	Retry  RetryPolicy
}
