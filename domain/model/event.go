package model

import "iter"

// Stream is a response in flight. Ranging over it sends the request and yields its events
// in order; a failure is yielded once, as a nil Event with a non-nil error, and ends the
// sequence. Breaking out of the loop early abandons the response and frees its connection.
//
// Each range is a separate provider request (and, for the scripted provider, consumes a
// separate turn), so range a Stream once. It is a lazy sequence rather than an open handle
// so that no caller can leak a connection by forgetting to close it.
//
// Whether an error arrived before or after the first event tells the caller whether any
// output was produced, which decides what the transcript must record.
type Stream = iter.Seq2[Event, error]

// Event is one item of a streamed response: ResponseStart, TextDelta, ToolCallStart,
// ToolCallArgsDelta, ToolCallEnd, ReasoningItem, UsageReport or Finish.
//
// Events come in this grammar: ResponseStart first; then text deltas and tool calls (a
// ToolCallStart, its ToolCallArgsDelta events, and its ToolCallEnd), possibly interleaved
// when the provider streams parallel calls; then at most one UsageReport; then Finish last.
// A Stream that ends without Finish ended with an error.
type Event interface{ isEvent() }

// ResponseStart opens a response. Model is the model that actually answered, which can be
// a dated snapshot of the alias requested, and the audit log needs the exact one.
type ResponseStart struct {
	ID    string
	Model string
}

// TextDelta is the next piece of the assistant's visible text. Refusal marks text the model
// gave as a refusal instead of an answer.
type TextDelta struct {
	Text    string
	Refusal bool
}

// ToolCallStart announces a tool call; its arguments follow. ID keys the call within this
// response (the adapter makes it unique there, whatever the provider sent); ProviderID is the
// provider's own id for it, "" if it gave none.
type ToolCallStart struct {
	ID         string
	ProviderID string
	Name       string
}

// ToolCallArgsDelta is the next piece of a tool call's JSON arguments.
type ToolCallArgsDelta struct {
	ID    string
	Delta string
}

// ToolCallEnd closes a tool call with its complete arguments, so a consumer that does not
// care about partial arguments can ignore the deltas.
type ToolCallEnd struct {
	ID         string
	ProviderID string
	Name       string
	Arguments  string
}

// ReasoningItem is a complete reasoning item of the response.
type ReasoningItem struct{ Reasoning Reasoning }

// UsageReport carries the token usage of the whole response.
type UsageReport struct{ Usage Usage }

// Finish ends a response.
type Finish struct {
	Reason FinishReason
	// ProviderReason is the provider's own word ("end_turn", "tool_calls"), kept because the
	// mapping to Reason loses detail that a later investigation may want.
	ProviderReason string
}

func (ResponseStart) isEvent()     {}
func (TextDelta) isEvent()         {}
func (ToolCallStart) isEvent()     {}
func (ToolCallArgsDelta) isEvent() {}
func (ToolCallEnd) isEvent()       {}
func (UsageReport) isEvent()       {}
func (ReasoningItem) isEvent()     {}
func (Finish) isEvent()            {}

// FinishReason says why the model stopped.
type FinishReason string

const (
	// FinishStop is a natural end of the answer (or a stop sequence).
	FinishStop FinishReason = "stop"
	// FinishToolCalls means the model wants its tool calls run before it continues.
	FinishToolCalls FinishReason = "tool_calls"
	// FinishLength means output was cut at the token limit (max tokens or the context window).
	FinishLength FinishReason = "length"
	// FinishContentFilter means the provider withheld output or the model refused.
	FinishContentFilter FinishReason = "content_filter"
	// FinishOther is any reason this package does not know; see Finish.ProviderReason.
	FinishOther FinishReason = "other"
)

// Usage counts the tokens of one response.
//
// InputTokens is the whole prompt, cached or not, on every provider. Anthropic reports
// cache reads and writes apart from its input_tokens while OpenAI includes them, so the
// adapters normalise to the total: that is the number to compare with a context window.
// CacheReadTokens and CacheWriteTokens are the parts of InputTokens served from or written
// to the provider's prompt cache.
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens spent on hidden reasoning, where reported.
	ReasoningTokens int64 `json:"reasoningTokens,omitempty"`
}
