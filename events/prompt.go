package events

// Prompt receipts (session stream). A receipt is appended before the provider request that
// uses it, and it carries every byte the model was shown (as content-addressed blobs), so the
// request can be rebuilt from the log alone and its digests checked long after the files it
// was assembled from have changed. The shape is owned here, with the other payloads, so that
// projectors and `zuno debug prompt` can read it without the assembly code; domain/prompt
// builds and verifies it.

const TypePromptAssembled = "session.prompt.assembled.1"

// PromptAssembled records one assembled prompt. The receipt's fields sit at the top level of
// the event data so forensic SQL reads them as json_extract(data, '$.assemblyDigest').
type PromptAssembled struct {
	SessionID string `json:"sessionId"`
	// ReceiptID is what session.provider.request.1 names as its promptReceiptID.
	ReceiptID string `json:"receiptId"`
	// JobsRead is how many events of the session's job stream (jobs-<sessionId>) the turn had
	// read when it assembled this prompt: runtime.work_state's jobs and reports come from
	// them. A child settles concurrently, so a replay reads exactly these, not what the log
	// held at the position it reached (docs/replay.md). Absent when 0, as in receipts of
	// builds that did not show jobs: their prompts showed none either.
	JobsRead uint64 `json:"jobsRead,omitempty"`
	PromptReceipt
}

func (PromptAssembled) EventType() string { return TypePromptAssembled }

// PromptReceipt is the forensic record of one assembled prompt: the sections in order, the
// provider-visible projection as references into Blobs, sizes, estimates and digests.
type PromptReceipt struct {
	SchemaVersion int `json:"schemaVersion"`
	// Estimator names the token estimator the sizes were computed with, so a later build with
	// a better estimator can still re-check an old receipt.
	Estimator            string `json:"estimator"`
	Model                string `json:"model"`
	ContextWindow        int64  `json:"contextWindow,omitempty"`
	MaxTokens            int    `json:"maxTokens,omitempty"`
	EstimatedInputTokens int64  `json:"estimatedInputTokens"`

	Sections []PromptSection `json:"sections"`
	// Messages is the request's message list in order: first one part per section, then the
	// conversation. Tools are the declared tools in request order.
	Messages       []PromptPart `json:"messages"`
	Tools          []PromptPart `json:"tools"`
	ToolChoiceMode string       `json:"toolChoiceMode,omitempty"`
	ToolChoiceName string       `json:"toolChoiceName,omitempty"`

	Hooks     PromptHooks      `json:"hooks"`
	WorkState *PromptWorkState `json:"workState,omitempty"`

	// ConversationDigest chains the conversation parts in order (sha256 over the previous
	// link and each part's JSON), so the assembly digest binds the whole conversation without
	// listing it.
	ConversationDigest string `json:"conversationDigest,omitempty"`
	// ConversationBase, when set, means Messages lists only the conversation parts after the
	// first ConversationBase.Parts, which are those of an earlier receipt of the same session:
	// a long session does not re-record its whole history at every step. Expand restores the
	// full list.
	ConversationBase *PromptConversationBase `json:"conversationBase,omitempty"`
	// LoggedParts, when set, means the conversation continues, after ConversationBase.Parts
	// (or from its start), with this many messages that Messages does not list: the
	// session's own messages (the user's, the provider's responses, the tools' results) at
	// those places of its transcript, which their events hold. Messages lists only the parts
	// after them (an instruction the turn added). A step records neither its tool call nor
	// its result a second time (docs/storage.md, "Bytes per step"); expanding the receipt
	// restores them from the transcript (docs/formats/receipts.md §6), and
	// ConversationDigest proves them.
	LoggedParts int `json:"loggedParts,omitempty"`
	// HeaderBase, when set, means this receipt's sections, their messages and its tools are
	// exactly those of an earlier receipt of the same session and are left out here: Sections
	// and Tools are empty and Messages lists only the conversation. A step whose system
	// prompt and tool declarations did not change does not record them again (about 5 KB a
	// step: docs/storage.md, "Bytes per step"). Expand restores them.
	HeaderBase *PromptHeaderBase `json:"headerBase,omitempty"`
	// Resume, on a receipt every few dozen conversation parts, is the request digest's
	// SHA-256 state after its conversation, which is exactly the transcript's messages: `zuno
	// debug prompt` checks a later step from here without reading the steps before it
	// (docs/formats/receipts.md §13). Not part of any digest; Verify checks it.
	Resume *PromptResume `json:"resume,omitempty"`

	// AssemblyDigest covers everything above (the ordered section metadata and digests);
	// ActualDigest covers the exact bytes of the provider-visible request (its JSON); the HTTP
	// body an adapter built from it is digested on each attempt's provider request event
	// (WireExchange). All are lower-case hex SHA-256.
	AssemblyDigest string `json:"assemblyDigest"`
	ActualDigest   string `json:"actualDigest"`
	// Blobs maps the SHA-256 (hex) of every referenced content to that content.
	Blobs map[string]string `json:"blobs"`
}

// PromptConversationBase names the earlier receipt whose first Parts conversation parts
// this receipt shares.
type PromptConversationBase struct {
	ReceiptID string `json:"receiptId"`
	Parts     int    `json:"parts"`
	// Digest is the conversation chain after those Parts, to check the base really is the
	// prefix this receipt was assembled with.
	Digest string `json:"digest"`
}

// PromptResume is a receipt's checkpoint (docs/formats/receipts.md §13): its conversation's
// part count, which is the transcript's message count when it was appended, and the SHA-256
// state of its request JSON after the last of them (Go's crypto/sha256 MarshalBinary form,
// base64).
type PromptResume struct {
	Parts       int    `json:"parts"`
	SHA256State string `json:"sha256State"`
}

// PromptHeaderBase names the earlier receipt whose sections, section messages and tools
// this receipt shares. That receipt may itself name a base; the chain ends at the receipt
// that records them.
type PromptHeaderBase struct {
	ReceiptID string `json:"receiptId"`
	// Digest is the header digest (docs/formats/receipts.md §5) of what is left out, to
	// check the base really holds the header this receipt was assembled with.
	Digest string `json:"digest"`
}

// PromptSection is the metadata of one model-visible section; its content is
// Blobs[SHA256].
type PromptSection struct {
	ID    string `json:"id"`
	Order int    `json:"order"`
	Lane  string `json:"lane"`
	// Source is where the content came from: a file path, "zuno-runtime:<id>", an agent's
	// definition.
	Source          string `json:"source"`
	Role            string `json:"role"`
	Trust           string `json:"trust"`
	Priority        int    `json:"priority"`
	Bytes           int    `json:"bytes"`
	EstimatedTokens int    `json:"estimatedTokens"`
	SHA256          string `json:"sha256"`
	// SourceSHA256 is the digest of the input as the caller read it (the AGENTS.md file's
	// bytes) when the section frames it, so a file on disk can be matched to the receipt.
	SourceSHA256 string `json:"sourceSha256,omitempty"`
}

// PromptPart is one entry of the provider-visible projection. A "section" part names its
// section; a "message" or "tool" part's blob is the JSON of that message or tool.
type PromptPart struct {
	Kind    string `json:"kind"`
	Section string `json:"section,omitempty"`
	Role    string `json:"role,omitempty"`
	// Name is a tool's name.
	Name            string `json:"name,omitempty"`
	Bytes           int    `json:"bytes"`
	EstimatedTokens int    `json:"estimatedTokens"`
	SHA256          string `json:"sha256"`
}

// PromptHooks is what the request hooks did before assembly.
type PromptHooks struct {
	Ran          []string `json:"ran,omitempty"`
	RemovedTools []string `json:"removedTools,omitempty"`
}

// PromptWorkState records how runtime.work_state was fitted into its budget.
type PromptWorkState struct {
	Bytes int `json:"bytes"`
	// TextLimit is the byte limit applied to each free-text field, 0 when none was needed.
	TextLimit       int                   `json:"textLimit,omitempty"`
	TruncatedFields int                   `json:"truncatedFields,omitempty"`
	Shown           PromptWorkStateCounts `json:"shown"`
	Omitted         PromptWorkStateCounts `json:"omitted"`
}

// PromptWorkStateCounts counts work_state items per collection.
type PromptWorkStateCounts struct {
	PlanSteps int `json:"planSteps"`
	Todos     int `json:"todos"`
	Jobs      int `json:"jobs"`
	Reports   int `json:"reports"`
}
