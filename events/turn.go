package events

import "encoding/json"

// Agent turn payloads (session stream). A turn is one user input driven to an answer: turn
// started → (prompt assembled → provider request started → completed|failed → tool calls
// blocked | started → settled)* → turn finished. Each step is recorded before anything depends
// on it, so a crashed run is recovered from the log alone: a call that started and never
// settled is settled as uncertain, never re-run.

const (
	TypeTurnStarted     = "session.turn.started.1"
	TypeProviderRequest = "session.provider.request.1"
	TypeToolBlocked     = "session.tool.blocked.1"
	TypeToolStarted     = "session.tool.started.1"
	TypeToolSettled     = "session.tool.settled.1"
	TypeTurnFinished    = "session.turn.finished.1"
)

// TurnStarted opens a turn for one user message.
type TurnStarted struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	// MessageID is the user message the turn answers.
	MessageID string `json:"messageId"`
	Agent     string `json:"agent"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	// StepLimit is the agent's explicit steps limit, 0 when it has none.
	StepLimit int `json:"stepLimit,omitempty"`
	// ToolCalls is concurrency.tool_calls for this turn.
	ToolCalls int `json:"toolCalls"`
	// Owner is the process that drives the turn, so a later run can tell a turn that is still
	// running from one whose process died.
	Owner *TurnOwner `json:"owner,omitempty"`
	// Wire is how the provider is spoken to, when it was opened from configuration: its
	// family, dialect, base URL, retries and the quirks the adapter handles (docs/config.md,
	// "Providers"). Never a key or a header value.
	Wire *ProviderWire `json:"wire,omitempty"`
	// Config is every configuration file the turn's settings were resolved from, for the
	// session's workspace (docs/config.md, "Which files a turn read"), in layer order: what
	// replay and debug permissions --session check they evaluate again. Variables and flags
	// are one invocation's and are not recorded.
	Config []ConfigFile `json:"config,omitempty"`
	// Bounds are the tool output limits in effect for the turn (events/bounds.go).
	Bounds *Bounds `json:"bounds,omitempty"`
	// Memory is the project memory revision the turn's prompt holds (docs/memory.md), so a
	// replay assembles the same memory lane; absent when the turn had none.
	Memory *MemoryRead `json:"memory,omitempty"`
}

// MemoryRead names the project memory a turn read: its scope and applied revision.
type MemoryRead struct {
	Scope    string `json:"scope"`
	Revision uint64 `json:"revision"`
}

// ConfigFile is one configuration file a turn read: its layer, path and the SHA-256 (hex) of
// its bytes as read.
type ConfigFile struct {
	Layer  string `json:"layer"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ProviderWire describes the connection a turn's requests go over.
type ProviderWire struct {
	Family  string   `json:"family"`
	API     string   `json:"api"`
	BaseURL string   `json:"baseURL"`
	Retries int      `json:"retries"`
	Quirks  []string `json:"quirks,omitempty"`
}

// TurnOwner identifies the process driving a turn.
type TurnOwner struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
}

func (TurnStarted) EventType() string { return TypeTurnStarted }

// Provider request statuses. Every request is recorded as started before it is sent, then
// once more as completed or failed; counting "started" counts provider calls.
const (
	RequestStarted   = "started"
	RequestCompleted = "completed"
	RequestFailed    = "failed"
)

// ProviderRequest is one provider request at one status.
type ProviderRequest struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	RequestID string `json:"requestId"`
	// Step counts the session's provider requests from 1; `zuno debug prompt --step N` finds
	// the Nth.
	Step   int    `json:"step"`
	Status string `json:"status"`
	// PromptReceiptID names the session.prompt.assembled.1 whose request this is.
	PromptReceiptID string `json:"promptReceiptID"`
	Provider        string `json:"provider"`
	Model           string `json:"model"`
	// StepLimitFinalization is set on the extra text-only request after the step limit.
	StepLimitFinalization *StepLimitFinalization `json:"stepLimitFinalization,omitempty"`
	// Purpose is PurposeCompaction on the request that summarises the transcript for a
	// compaction (docs/compaction.md); empty on the model's own steps.
	Purpose string `json:"purpose,omitempty"`
	// Attempt numbers a step's retries from 2 (omitted on the first request): each attempt is
	// a request of its own, with its own id and outcome, for the step's one prompt receipt.
	Attempt int `json:"attempt,omitempty"`
	// RetryInMs is set on a failed attempt the turn sends again after waiting this long
	// (docs/turns.md, "Retries").
	RetryInMs int64 `json:"retryInMs,omitempty"`

	// Wire is the request as it went over the wire, set on the completed or failed record of
	// an attempt whose body left the process (docs/turns.md, "Wire receipts"). It is kept
	// per attempt rather than in the prompt receipt because the bytes are known only once
	// sent, and every retry of a step sends them again under the one receipt.
	Wire *WireExchange `json:"wire,omitempty"`
	// Set when completed.
	Response *ProviderResponse `json:"response,omitempty"`
	// Set when failed.
	Error *ErrorInfo `json:"error,omitempty"`
	// DurationMs is the wall time from started to this status (completed/failed only).
	DurationMs int64 `json:"durationMs,omitempty"`
}

func (ProviderRequest) EventType() string { return TypeProviderRequest }

// StepLimitFinalization records the host's finalisation of a turn that reached its step limit
// (docs/turns.md, "The step limit"): the tools were closed and this instruction was added.
type StepLimitFinalization struct {
	Limit             int    `json:"limit"`
	Instruction       string `json:"instruction"`
	InstructionDigest string `json:"instructionDigest"`
}

// WireExchange is one request's body and response as sent and received: their SHA-256 and
// sizes, the adapter and mapping version that built the body, and the endpoint it went to
// (never a credential, an auth header, a URL password or a query). The body is not stored:
// `zuno debug prompt --wire` renders it again from the prompt receipt with this mapping and
// checks that it hashes to RequestSHA256.
type WireExchange struct {
	Adapter        string            `json:"adapter"`
	MappingVersion int               `json:"mappingVersion"`
	Mapping        map[string]string `json:"mapping,omitempty"`
	Endpoint       string            `json:"endpoint"`
	RequestSHA256  string            `json:"requestSha256"`
	RequestBytes   int64             `json:"requestBytes"`
	ResponseSHA256 string            `json:"responseSha256,omitempty"`
	ResponseBytes  int64             `json:"responseBytes,omitempty"`
	HTTPStatus     int               `json:"httpStatus,omitempty"`
}

// ProviderResponse is what the model answered.
type ProviderResponse struct {
	ID        string     `json:"id,omitempty"`
	Model     string     `json:"model,omitempty"`
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ClosedToolCalls are calls the model made after the step limit closed the tools: recorded
	// as the model said them, never run (docs/turns.md, "The step limit").
	ClosedToolCalls []ToolCall `json:"closedToolCalls,omitempty"`
	// Refusal is the text of a refusal the model gave instead of an answer (OpenAI's refusal
	// field); it is shown as the answer's text too.
	Refusal string `json:"refusal,omitempty"`
	// Reasoning are the response's reasoning items (the Responses API), their encrypted
	// content kept so the next request can send them back.
	Reasoning            []Reasoning `json:"reasoning,omitempty"`
	Usage                Usage       `json:"usage"`
	FinishReason         string      `json:"finishReason,omitempty"`
	ProviderFinishReason string      `json:"providerFinishReason,omitempty"`
}

// ToolCall is a call the model asked for, its arguments exactly as the model produced them.
type ToolCall struct {
	// ID is the runtime's id of the call, unique in the session; ProviderID is the provider's
	// own, when it gave one and it differs (docs/turns.md, "Tool call ids").
	ID         string `json:"id"`
	ProviderID string `json:"providerId,omitempty"`
	Name       string `json:"name"`
	Arguments  string `json:"arguments"`
}

// Reasoning is a reasoning item as the provider returned it; EncryptedContent is opaque.
type Reasoning struct {
	ID               string `json:"id"`
	Summary          string `json:"summary,omitempty"`
	EncryptedContent string `json:"encryptedContent,omitempty"`
}

// Usage is token usage as the provider reported it.
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens,
		u.CacheReadTokens + o.CacheReadTokens, u.CacheWriteTokens + o.CacheWriteTokens}
}

// ErrorInfo is a typed failure as recorded: its stable code and the texts people read.
type ErrorInfo struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	Fix          string `json:"fix,omitempty"`
	ProviderCode string `json:"providerCode,omitempty"`
	HTTPStatus   int    `json:"httpStatus,omitempty"`
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
}

// ToolBlocked is a dispatch-blocked call: refused before it ran, so nothing happened. It is
// also the call's result; no started or settled event follows.
type ToolBlocked struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	RequestID string `json:"requestId"`
	CallID    string `json:"callId"`
	Tool      string `json:"tool"`
	// Category is invalid_arguments, unavailable or denied.
	Category string `json:"category"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
	// Output is the error result the model reads.
	Output string `json:"output"`
	// Permission is the gate's decision when the gate blocked the call (category denied).
	Permission *PermissionDecision `json:"permission,omitempty"`
}

func (ToolBlocked) EventType() string { return TypeToolBlocked }

// ToolStarted is recorded before a call's execution begins: from here on its effect may have
// happened, which is what makes an unsettled call uncertain after a crash.
type ToolStarted struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	RequestID string `json:"requestId"`
	CallID    string `json:"callId"`
	Tool      string `json:"tool"`
	Action    string `json:"action,omitempty"`
	// Group is the scheduler group the call ran in; calls of one group may overlap.
	Group int `json:"group"`
	// SideEffect, Replay and Concurrency are the policy the call was scheduled under.
	SideEffect  string `json:"sideEffect"`
	Replay      string `json:"replay"`
	Concurrency string `json:"concurrency"`
	// Permission is who allowed the call; Sandbox how a command was confined (shell, bg).
	Permission *PermissionDecision `json:"permission,omitempty"`
	Sandbox    *SandboxResolution  `json:"sandbox,omitempty"`
	// WithheldEnv names the host variables withheld from the command beyond the ZUNO_*
	// namespace (shell.env.exclude; docs/tools.md): names only, never a value.
	WithheldEnv []string `json:"withheldEnv,omitempty"`
}

func (ToolStarted) EventType() string { return TypeToolStarted }

// ToolSettled is a call's result: completed, error, uncertain or cancelled.
type ToolSettled struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	RequestID string `json:"requestId"`
	CallID    string `json:"callId"`
	Tool      string `json:"tool"`
	Outcome   string `json:"outcome"`
	ErrorCode string `json:"errorCode,omitempty"`
	// Output is the result the model reads.
	Output   string       `json:"output"`
	Metadata ToolMetadata `json:"metadata,omitzero"`
	// Recovered marks a settlement made by restart recovery rather than by the execution.
	Recovered  bool  `json:"recovered,omitempty"`
	DurationMs int64 `json:"durationMs,omitempty"`
}

func (ToolSettled) EventType() string { return TypeToolSettled }

// ToolMetadata is a tool result's typed facts, under fixed keys (writtenPaths, outputPaths,
// withheldOutput, details, verification; docs/tools.md), so every
// consumer (changed-path reports, freshness marks, clients) reads one vocabulary instead of
// parsing the output text.
type ToolMetadata struct {
	// WrittenPaths are the workspace paths the call observably wrote (root-relative).
	WrittenPaths []string `json:"writtenPaths,omitempty"`
	// OutputPaths are artifacts holding output withheld from the model's context.
	OutputPaths []string `json:"outputPaths,omitempty"`
	// WithheldOutput describes withheld output so a client can offer read-back without
	// parsing the notice.
	WithheldOutput *WithheldOutput `json:"withheldOutput,omitempty"`
	// Details are the tool's own facts (exit code, read credential, report receipt).
	Details json.RawMessage `json:"details,omitempty"`
	// Verification is the id (rcp_…) of the call's verification receipt
	// (session.verification.receipt.1), recorded just before this event.
	Verification string `json:"verification,omitempty"`
}

// WithheldOutput is output over a tool_output cap, stored whole as an artifact, never cut.
type WithheldOutput struct {
	// Path is the artifact; `bg action=artifact outputPath=<Path>` reads it back.
	Path string `json:"path"`
	// Bytes and Lines are the measured size of the output.
	Bytes int64 `json:"bytes"`
	Lines int   `json:"lines"`
	// Limit is the cap crossed first: "max_bytes" or "max_lines".
	Limit    string `json:"limit"`
	MaxBytes int    `json:"maxBytes"`
	MaxLines int    `json:"maxLines"`
}

// Turn finish reasons.
const (
	// FinishCompleted: the model answered without asking for tools.
	FinishCompleted = "completed"
	// FinishStepLimit: the step limit was reached and the finalisation request answered.
	FinishStepLimit = "step_limit"
	// FinishFailed: a typed failure ended the turn (provider error, context overflow).
	FinishFailed = "failed"
	// FinishInterrupted: the run was cancelled, or the process died and a later run
	// recovered the turn.
	FinishInterrupted = "interrupted"
)

// TurnFinished closes a turn.
type TurnFinished struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Reason    string `json:"reason"`
	// Steps is how many provider requests the turn made.
	Steps int        `json:"steps"`
	Usage Usage      `json:"usage"`
	Error *ErrorInfo `json:"error,omitempty"`
	// Recovered marks a turn closed by restart recovery.
	Recovered bool `json:"recovered,omitempty"`
}

func (TurnFinished) EventType() string { return TypeTurnFinished }
