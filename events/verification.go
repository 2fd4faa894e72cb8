package events

// Verification receipts (session stream). Every foreground shell result carries one: what
// ran, the verdict, the exit code and what that code covers, the interpreter, the exit policy
// and the limitations the command's own text put on the claim. It is appended just before the
// call's session.tool.settled.1, whose metadata names it (verification), and the tool result
// the model reads addresses it as [verification rcp_…]. domain/verification builds it; only an
// authoritative receipt is evidence (docs/tools.md, "Exit policies and verification receipts").

const TypeVerificationReceipt = "session.verification.receipt.1"

// VerificationReceipt is one shell call's verification receipt. Its id is derived from the
// session and the call, so a replayed or re-delivered call derives the same one.
//
// SessionID is declared first: it is left out of the stored data where the stream names the
// session (events/implied.go, impliesSession); the turn id is optional here (a receipt outside
// a turn has none), so it is always stored as it is.
type VerificationReceipt struct {
	SessionID string `json:"sessionId"`
	// ReceiptID is rcp_ followed by 32 hex digits.
	ReceiptID string `json:"receiptId"`
	TurnID    string `json:"turnId,omitempty"`
	CallID    string `json:"callId"`
	// Command is the text that ran, exactly as the model sent it; Workdir is where it ran
	// (root-relative).
	Command string `json:"command"`
	Workdir string `json:"workdir,omitempty"`
	// Interpreter is the shell the command ran under, named as configured ("bash", "sh",
	// "dash", "pwsh"); Policy is the exitPolicy (pipefail, all or last).
	Interpreter string `json:"interpreter"`
	Policy      string `json:"policy"`
	// Verdict is passed, failed, not_started or unknown.
	Verdict string `json:"verdict"`
	// ExitCode is the exit status when there is one; Signal the signal that killed the command.
	ExitCode *int   `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	// Coverage is what the exit code covers: every_command (all), last_statement (pipefail:
	// every stage of the last statement's pipelines), last_stage (last) or none (no code).
	Coverage string `json:"coverage"`
	// Authority is authoritative (evidence), derived (recorded, not evidence) or none (no
	// verdict to rely on).
	Authority string `json:"authority"`
	// Reason is one sentence saying why the authority is what it is.
	Reason      string                   `json:"reason"`
	Limitations []VerificationLimitation `json:"limitations,omitempty"`
	Cancelled   bool                     `json:"cancelled,omitempty"`
	TimedOut    bool                     `json:"timedOut,omitempty"`
}

func (VerificationReceipt) EventType() string { return TypeVerificationReceipt }

// VerificationLimitation is one thing that keeps a receipt from being authoritative: the
// construct (a stable name such as fallback, nested_shell, condition), the text it was found
// in, what it does to the claim, and the remedy.
type VerificationLimitation struct {
	Construct string `json:"construct"`
	Text      string `json:"text,omitempty"`
	Note      string `json:"note"`
	Remedy    string `json:"remedy"`
}
