// Package turn is the agent turn as a process manager: it takes one user input and drives it
// to an answer, recording every step as an event before anything depends on it — the prompt
// receipt before the provider request, the request before the response is used, a tool call's
// start before it runs and its result before the next step. A crashed run is recovered from the
// log alone: the next run of the session settles what was cut short (uncertain or cancelled)
// and never re-runs it.
//
// The driver is the single writer of its session's stream during a turn. It folds its own
// events into an in-memory transcript (domain/transcript), so a step never reloads the history,
// and it appends with the exact expected revision, so a second writer is detected, not merged.
package turn

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Tool is one tool the driver can offer and run (the contract is domain/tools.Tool; the
// adapters in adapters/tools implement it).
type Tool = tools.Tool

// Observer sees a turn as it happens: the CLI streams it to the user. Calls come from the
// driver's goroutine, in order.
type Observer interface {
	// Recorded is called for every event once it is durable.
	Recorded(rec events.Recorded, p events.Payload)
	// TextDelta is called for each piece of assistant text as it streams in.
	TextDelta(text string)
}

// NopObserver ignores everything.
type NopObserver struct{}

func (NopObserver) Recorded(events.Recorded, events.Payload) {}
func (NopObserver) TextDelta(string)                         {}

// Surface is the tools of one session's run over its workspace, opened by the host (the tool
// adapters and their per-session state); Close ends what they started (background tasks).
type Surface interface {
	Tools() []Tool
	// Confinement is how the surface's commands are confined (docs/sandbox.md).
	Confinement() Confinement
	Close() error
}

// Confinement is the sandbox resolution a surface's shell and bg run under.
type Confinement struct {
	// Resolution is recorded on every call that starts a command; nil when the surface has
	// no shell.
	Resolution *events.SandboxResolution
	// ForcesAllowAll: danger-full-access makes the effective permission mode allow_all.
	ForcesAllowAll bool
	// Warning is said once when commands run unconfined after a fallback.
	Warning string
	// Refusal is why the shell was not assembled (it is then not offered); nil when it was.
	Refusal error
}

// ToolsRequest is the tool surface to open: of the session SessionID working in Dir, for an
// agent whose contract is ReadOnly (it narrows the sandbox).
type ToolsRequest struct {
	Dir, SessionID string
	ReadOnly       bool
	// RequiredSkills are the agent's (docs/skills.md): the skill tool counts them against the
	// selected-skill budget.
	RequiredSkills []string
	// Gone, when set, opens the surface over a Dir that no longer exists, for a replay
	// (docs/replay.md, "A workspace that is gone"): the tools declare, validate and keep
	// per-session state, no tool can run, and each path inside Dir that the gate's questions
	// were answered for by its spelling alone is reported here.
	Gone func(path string)
	// Editor, when set, is the file system of the editor driving the turn (docs/acp.md): the
	// file tools read and write through it after the gate and their path checks.
	Editor *tools.Editor
	// Replay: a replay opens the surface, which records nothing (the MCP servers connect for
	// their schemas, and their lifecycle is not recorded; docs/mcp.md).
	Replay bool
}

// OpenTools opens a session's tool surface.
type OpenTools func(ToolsRequest) (Surface, error)

// Gate is the run's permission gate and sandbox resolver (docs/permissions.md): it decides
// each call before it starts. A nil Gate allows every call.
type Gate interface {
	// Fold takes every event of the session's stream, as the driver loads it and as the turn
	// records its own: the session's standing approvals are a fold of the log
	// (session.permission.granted.1 and .revoked.1), not of a process's memory.
	Fold(p events.Payload)
	// Check decides one validated call: allowed (with the decision that allowed it),
	// blocked, or an ask that must be answered first.
	Check(c tools.Call) Verdict
	// Answer applies the reply to an asked call, given the verdict Check returned for it:
	// "always" keeps the verdict's Grants, "reject" blocks the call. It returns the final
	// verdict.
	Answer(c tools.Call, v Verdict, reply string) Verdict
}

// Verdict is the gate's decision on one call.
type Verdict struct {
	Decision events.PermissionDecision
	// Block, when set, refuses the call: nothing runs, and Decision says who refused it.
	Block *tools.Block
	// Ask, when set, is the question the call waits on (the driver fills the ids).
	Ask *events.PermissionAsked
	// ExternalRoot is the directory an external_directory grant admitted for the call.
	ExternalRoot string
	// Sandbox is how a command the call starts is confined (shell, bg).
	Sandbox *events.SandboxResolution
	// Grants are, with an Ask, what an "always" answer to it approves for the rest of the
	// session (each asking check's savable pattern; the ask shows the governing one). After
	// Answer they are what the answer installs: the driver records them
	// (session.permission.granted.1) before the call starts.
	Grants []events.StandingGrant
}

// Inbox is where the answers to a session's asks arrive (commands.Inbox reads the log).
type Inbox interface {
	// Wait returns the answer to askID, waiting for it to arrive.
	Wait(ctx context.Context, sessionID, askID string) (events.PermissionAnswered, error)
	// Answered returns the answer the log holds already; found is false when there is none.
	// A turn that suspends at its asks (Request.Suspend) looks here instead of waiting.
	Answered(ctx context.Context, sessionID, askID string) (a events.PermissionAnswered, found bool, err error)
	// Closed reports whether the ask was closed unanswered (session.permission.closed.1): a
	// turn ended its call, so it takes no answer.
	Closed(ctx context.Context, sessionID, askID string) (bool, error)
	// Close records, before the turn settles an asked call it never ran, that the ask takes no
	// answer any more, unless a reply was recorded first (docs/permissions.md, "Recovery").
	Close(ctx context.Context, meta commands.Meta, c events.PermissionClosed) error
}

// Inputs delivers what arrives in the session's inbox while its turn runs (a job's report, a
// peer message) at the turn's tool-safe boundary: after a step's calls have settled, before
// its next request (docs/delegation.md, "Delivery"). The host's job runtime implements it; a
// replay plays the recorded ones back.
type Inputs interface {
	// Take claims the inputs to deliver now; each becomes a user message of the turn.
	Take(ctx context.Context, sessionID string) []Input
	// Recorded is told whether the claimed inputs' messages are durable (err nil), so it
	// records them consumed, or were not, so it lets them go for a later delivery.
	Recorded(ctx context.Context, sessionID string, in []Input, err error)
}

// Input is one inbox input delivered inside a running turn: Text is the message's text, and
// MessageID, filled by the driver, the message that delivered it.
type Input struct {
	Report
	Text, MessageID string
}

// InputMessageID is the message id of an input delivered inside the turn of command commandID.
func InputMessageID(commandID, inputID string) string {
	return MessageID(commandID + "/input/" + inputID)
}
