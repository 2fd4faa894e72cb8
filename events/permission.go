package events

// Permission and sandbox payloads: the two gates a tool call passes before it runs
// (docs/permissions.md, docs/sandbox.md). A call's decision rides on the event that already
// records the call — ToolStarted for a call that ran, ToolBlocked for one that did not — so
// "who allowed this call and under which confinement did it run" is one row of the log. An
// ask is an event of its own, because the turn waits for it; the answer is a command that
// lands in the session's inbox stream ("inbox-<sessionId>"), where it is recorded even when
// the asking turn is gone.

const (
	TypePermissionAsked    = "session.permission.asked.1"
	TypePermissionAnswered = "session.permission.answered.1"
	TypePermissionClosed   = "session.permission.closed.1"
	TypePermissionGranted  = "session.permission.granted.1"
	TypePermissionRevoked  = "session.permission.revoked.1"
)

// PermissionDecision is the permission gate's verdict on one call.
type PermissionDecision struct {
	// Key is the permission key evaluated (edit for write and apply_patch; external_directory
	// for a path outside the workspace), Resource what it was evaluated on (a path, a command,
	// "dir/*").
	Key      string `json:"key"`
	Resource string `json:"resource,omitempty"`
	// RuleAction is what the matched rule (or the default) said; Action is the outcome after
	// the mode, the risk gate, a standing approval or an answer: allow or deny.
	RuleAction string `json:"ruleAction"`
	Action     string `json:"action"`
	// Rule is the matched rule as written ("shell: git push*") and Layer the configuration
	// layer it came from; both empty when no rule matched.
	Rule  string `json:"rule,omitempty"`
	Layer string `json:"layer,omitempty"`
	// Source says who decided: rule, mode, risk, standing, user, no_terminal, parent (a
	// delegated child's ask, handed to its parent).
	Source string `json:"source"`
	// Reply is the answer that admitted or refused the call: once, always or reject ("once"
	// for a standing approval).
	Reply string `json:"reply,omitempty"`
	// AskID names the ask this decision answered.
	AskID string `json:"askId,omitempty"`
	Mode  string `json:"mode"`
	// Message is the denial as the model and the user read it, or what the risk gate made of
	// the command (a destructive command asked about or pre-approved by a rule).
	Message string `json:"message,omitempty"`
	// Risk is the risk gate's grade of a shell command that is not safe: catastrophic
	// (refused), destructive (asked about, or with source rule pre-approved by an allow rule
	// that names it: docs/risk.md, "Pre-approval by a rule").
	Risk string `json:"risk,omitempty"`
}

// SandboxResolution is how a shell call was confined, as the sandbox resolver decided it.
type SandboxResolution struct {
	RequestedMode      string `json:"requestedMode"`
	Network            string `json:"network"`
	EffectiveAuthority string `json:"effectiveAuthority"`
	// ResolutionKind is confined, platform_native, trusted_native, fallback or full_access.
	ResolutionKind string `json:"resolutionKind"`
	Backend        string `json:"backend,omitempty"`
	// Reason is the typed reason of a fallback or of native execution.
	Reason string `json:"reason,omitempty"`
}

// PermissionAsked is a call the gate could not decide alone: the turn waits for an answer.
type PermissionAsked struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	RequestID string `json:"requestId"`
	CallID    string `json:"callId"`
	AskID     string `json:"askId"`
	Tool      string `json:"tool"`
	Key       string `json:"key"`
	Resource  string `json:"resource,omitempty"`
	Rule      string `json:"rule,omitempty"`
	Layer     string `json:"layer,omitempty"`
	Mode      string `json:"mode"`
	// Always is the pattern an "always" answer would approve for the rest of the session;
	// empty when the call has none (then only once or reject can be answered).
	Always string `json:"always,omitempty"`
	// Gate names what asked: risk (the shell risk gate, for a destructive command), strict
	// (strict mode, where a rule allows), rule (a rule says ask) or no_rule (no rule matches);
	// Reason says why in a sentence. Empty on asks recorded before they were named.
	Gate   string `json:"gate,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// What asked (PermissionAsked.Gate).
const (
	AskGateRisk   = "risk"
	AskGateStrict = "strict"
	AskGateRule   = "rule"
	AskGateNoRule = "no_rule"
)

func (PermissionAsked) EventType() string { return TypePermissionAsked }

// PermissionAnswered is the answer to an ask (stream inbox-<sessionId>).
type PermissionAnswered struct {
	SessionID string `json:"sessionId"`
	AskID     string `json:"askId"`
	CallID    string `json:"callId"`
	// Reply is once, always or reject.
	Reply string `json:"reply"`
	// Source is who answered: user (the terminal or a client).
	Source string `json:"source"`
}

func (PermissionAnswered) EventType() string { return TypePermissionAnswered }

// PermissionClosed ends an ask that was never answered (stream inbox-<sessionId>): the turn
// that asked ended its call without running it (an interrupt, a cancelled run, a recovery of
// the turn by a later run), and recorded this before it settled the call (after it, in a run
// whose lease was taken over, which is no longer the session's writer). A reply after it is
// refused (ask_not_pending): the ask takes no answer any more. The inbox's revision decides
// between a reply and the close, so exactly one of them is recorded (docs/permissions.md,
// "Recovery"). A turn that suspends at its ask does not close it: it waits for the answer.
type PermissionClosed struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	AskID     string `json:"askId"`
	CallID    string `json:"callId"`
	// Reason is why the call ended: interrupted (the run that asked was cancelled: Ctrl-C,
	// zuno session interrupt, an ACP session/cancel) or recovered (a later run, or the
	// reaction to an expired lease, settled the turn its stopped process left).
	Reason string `json:"reason"`
}

// Why an ask was closed (PermissionClosed.Reason).
const (
	AskClosedInterrupted = "interrupted"
	AskClosedRecovered   = "recovered"
)

func (PermissionClosed) EventType() string { return TypePermissionClosed }

// StandingGrant is one standing approval: calls under Permission whose resource matches
// Pattern, as an allow rule matches it.
type StandingGrant struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
}

// PermissionGranted is what an "always" answer installed for the rest of the session: for
// each check of the asked call that asked with a savable pattern, that pattern (the ask shows
// the governing one). The turn records it when the call receives the answer, before the call
// starts; a session's standing approvals are the fold of these since its last
// PermissionRevoked (docs/permissions.md, "Standing approvals").
type PermissionGranted struct {
	SessionID string          `json:"sessionId"`
	TurnID    string          `json:"turnId"`
	RequestID string          `json:"requestId"`
	CallID    string          `json:"callId"`
	AskID     string          `json:"askId"`
	Grants    []StandingGrant `json:"grants"`
}

func (PermissionGranted) EventType() string { return TypePermissionGranted }

// PermissionRevoked ends every standing approval the session was granted before it (the
// RevokeGrants command: zuno session revoke-grants, and a session prune).
type PermissionRevoked struct {
	SessionID string `json:"sessionId"`
	// Grants are the approvals it ended, for the record; the fold ends all of them anyway.
	Grants []StandingGrant `json:"grants"`
}

func (PermissionRevoked) EventType() string { return TypePermissionRevoked }
