package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// Outcome is how a tool call ended. The values are stable: they are recorded on the settled
// event and read by forensic SQL.
type Outcome string

const (
	// OutcomeCompleted: the tool ran and did what was asked (a command that exited non-zero
	// still completed; its exit status is in the metadata).
	OutcomeCompleted Outcome = "completed"
	// OutcomeError: the tool ran, or tried to, and failed; nothing is left half done (a
	// refused patch, a file that does not exist, rg missing).
	OutcomeError Outcome = "error"
	// OutcomeBlocked: refused before it ran (invalid_arguments, unavailable, denied).
	OutcomeBlocked Outcome = "blocked"
	// OutcomeUncertain: it may or may not have had its effect (a partial write, a process lost
	// to a crash). Never replayed; the model must inspect the real state first.
	OutcomeUncertain Outcome = "uncertain"
	// OutcomeCancelled: requested but never started (the run was interrupted first).
	OutcomeCancelled Outcome = "cancelled"
)

// CodeNotValidated: Execute was handed arguments that its tool's Validate did not produce, a
// bug in the caller; nothing ran.
const CodeNotValidated = "not_validated"

// NotValidated is the result of such a call. It is an error rather than blocked: blocking is
// decided before execution only.
func NotValidated(inv Invocation) Result {
	return Result{Outcome: OutcomeError, ErrorCode: CodeNotValidated,
		Output: fmt.Sprintf("call %s reached execution without validated arguments; nothing ran", inv.CallID)}
}

// Valid reports whether o is one of the outcomes.
func (o Outcome) Valid() bool {
	switch o {
	case OutcomeCompleted, OutcomeError, OutcomeBlocked, OutcomeUncertain, OutcomeCancelled:
		return true
	}
	return false
}

// Result is what one executed tool call returns: the text the model reads and the typed
// metadata the runtime, the read models and later reports read. Nothing downstream parses
// Output to learn a fact that Metadata carries.
type Result struct {
	Outcome Outcome
	// Output is the tool result message shown to the model.
	Output string
	// ErrorCode is the stable code of an error or uncertain outcome ("stale_read",
	// "rg_missing", "uncertain").
	ErrorCode string
	Metadata  Metadata
	// Receipt is a shell call's verification receipt (domain/verification), recorded as its own
	// event just before the call settles; Metadata.Verification names it. Nil for other tools.
	Receipt *events.VerificationReceipt
}

// Metadata is a tool result's typed facts (writtenPaths, outputPaths, withheldOutput,
// details), in the shape the settled event records.
type Metadata = events.ToolMetadata

// WithheldOutput is output over a tool_output cap, stored whole as an artifact instead of
// being cut.
type WithheldOutput = events.WithheldOutput

// Spec is what the model is shown of a tool: name, description and argument schema.
type Spec = model.Tool

// Parsed is a call's arguments as its tool's Validate decoded them. Execute takes this form,
// so arguments are decoded once and the call that was checked is the call that runs.
type Parsed struct {
	// Action classifies a call of a mixed tool ("" for tools without actions).
	Action string
	// Args is the tool's own argument value.
	Args any
}

// Invocation is one validated call handed to a tool's Execute.
type Invocation struct {
	SessionID string
	CallID    string
	// TurnID is the turn that made the call and RequestID the provider request whose
	// response made it: the task tool's child inherits that turn's composition, and one
	// response's identical task calls are one job (docs/delegation.md).
	TurnID, RequestID string
	// ExternalRoot is the directory an external_directory grant admitted for this call; empty
	// when none. The file tools reach a path outside the workspace only when it lies under
	// this directory, and then from a handle on it (see "Path authority" in docs/tools.md).
	ExternalRoot string
	// Permitted reports whether the permission gate, as it stands for this call, allows the
	// same tool with other arguments without an ask: webfetch asks it before it follows a
	// redirect, so that a redirect cannot lead past a rule that names its target
	// (docs/web.md, "Redirects and the permission gate"). Nil where the host runs no gate.
	Permitted func(Parsed) bool
	Parsed
}

// Tool is one tool as the runtime offers and runs it: what it declares, what the model is
// shown, how its arguments are checked and how a checked call is executed. The tool adapters
// implement it and the turn driver consumes it; it lives here, beside the types it speaks, so
// both name one contract.
type Tool interface {
	Declaration() Declaration
	Spec() Spec
	// WritesWorkspace marks a real edit capability (write, apply_patch, a shell that may
	// write), which decides whether the prompt's runtime.editing section is shown.
	WritesWorkspace() bool
	// Validate decodes args strictly into the form Execute takes. A refusal is a
	// *domain.Error naming the Field and saying in Fix what to send; a call is blocked only
	// here, never by Execute.
	Validate(args json.RawMessage) (Parsed, error)
	// Execute runs one validated call. Every ending is a Result with an Outcome other than
	// blocked, never a panic; it stops promptly when ctx is cancelled.
	Execute(ctx context.Context, inv Invocation) Result
}

// EnvWithholder is a tool that starts commands and withholds host variables from them
// beyond the ZUNO_* namespace (shell.env.exclude, docs/tools.md): the turn records the
// names it returns on the call's started event. Names only, never values.
type EnvWithholder interface {
	WithheldEnv() []string
}

// Restorer is a tool whose per-session state (read credentials) is rebuilt from the results
// it recorded earlier in the session, so that a later process continues where the last one
// stopped. A result it cannot use restores nothing: the tool then fails closed (read again).
type Restorer interface {
	Restore(settled events.ToolSettled)
}
