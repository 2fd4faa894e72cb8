package events

// Compaction payloads (docs/compaction.md). A compaction moves the transcript boundary of a
// session: the requests after it carry the model's summary of the messages before it, followed
// by the messages after it. Nothing else changes: the log, the receipts, the Goal, Plan,
// Todos, jobs and inbox are untouched.

const TypeTranscriptCompacted = "session.transcript.compacted.1"

// PurposeCompaction marks a provider request that summarises the transcript for a compaction
// (ProviderRequest.Purpose): its response is the summary, not an answer of the model in the
// conversation, and it does not count towards the turn's step limit.
const PurposeCompaction = "compaction"

// TranscriptCompacted records a successful compaction. Window is the window it opens (the
// first compaction of a session opens window 1; window 0 is the transcript before any).
// The messages summarised are the first Through messages of the previous window's
// conversation as the transcript held it when the compaction request was assembled
// (positions 0 to Through-1; SummarisedDigest chains their receipt parts). The request
// RequestID (with its receipt PromptReceiptID) produced Summary. From this event on, the
// conversation is the summary message (SummaryMessage, a user message) followed by the
// previous window's messages from position Through on (KeptMessages of them at the time).
type TranscriptCompacted struct {
	SessionID       string `json:"sessionId"`
	TurnID          string `json:"turnId"`
	Window          int    `json:"window"`
	RequestID       string `json:"requestId"`
	PromptReceiptID string `json:"promptReceiptID"`
	Step            int    `json:"step"`
	// Through is the boundary: the number of messages of the previous window summarised.
	Through int `json:"through"`
	// KeptMessages is how many messages followed the boundary when it moved.
	KeptMessages int `json:"keptMessages"`
	// SummarisedResponses counts the assistant messages summarised, including those an
	// earlier summary in the range stood for.
	SummarisedResponses int `json:"summarisedResponses"`
	// SummarisedDigest is the conversation chain digest (docs/formats/receipts.md §7) of the
	// summarised messages' receipt parts.
	SummarisedDigest string `json:"summarisedDigest"`
	// Summary is the model's text; SummaryMessage the message the conversation now opens with
	// (the summary under the host's header), SummarySHA256 its SHA-256.
	Summary        string `json:"summary"`
	SummaryMessage string `json:"summaryMessage"`
	SummarySHA256  string `json:"summarySha256"`
	// EstimatedTokensBefore and EstimatedTokensAfter are the estimated conversation tokens
	// before and after the move.
	EstimatedTokensBefore int64 `json:"estimatedTokensBefore"`
	EstimatedTokensAfter  int64 `json:"estimatedTokensAfter"`
}

func (TranscriptCompacted) EventType() string { return TypeTranscriptCompacted }
