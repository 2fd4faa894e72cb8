// Package delegate offers delegation to the model: task (start a child agent on a typed
// DelegationContract), job (read the caller's jobs) and job_reconcile (settle an uncertain job
// on an authority's word). The rules of a call are domain/delegation's; the tools decode a
// call, check it, hand it to the application through the Jobs port and render the answer or
// the typed refusal, so a model and `zuno job` meet the same rules and errors
// (docs/delegation.md, "The tools").
package delegate

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
)

// Jobs is what the delegation tools need of the application; commands/app implements it.
type Jobs interface {
	Delegate(ctx context.Context, inv tools.Invocation, req delegation.Request) (delegation.Outcome, error)
	Jobs(ctx context.Context, sessionID, jobID string) ([]delegation.JobView, error)
	Reconcile(ctx context.Context, inv tools.Invocation, r delegation.Reconciliation) (delegation.Outcome, error)
	// Message admits a peer message to another session's inbox (session_message).
	Message(ctx context.Context, inv tools.Invocation, m delegation.Message) (delegation.MessageOutcome, error)
}

// New returns task, job, job_reconcile and session_message, in that order, over jobs.
func New(jobs Jobs) []tools.Tool {
	return []tools.Tool{&task{jobs}, &job{jobs}, &reconcile{jobs}, &message{jobs}}
}

// Codes of this package's results.
const (
	// CodeCancelled: the call was stopped before it asked anything of the application.
	CodeCancelled = "cancelled"
	// CodeJobUncertain: a foreground child's ending is unknown (its process was lost while it
	// ran); it is never re-run.
	CodeJobUncertain = "job_uncertain"
)

// Policies (docs/tools.md, "Declarations"). task runs child work that carries its own side
// effects: Delegating, replayed Never (a child is never started twice by a retry), and
// Exclusive, so the task calls of one response are admitted one after another in model order
// and the ledger sees the first before it judges the second (seeds 002 §7.5). job reads:
// ReadOnly, Safe, ParallelSafe. job_reconcile changes durable state on an authority's word:
// SideEffecting, Never (seeds 002 §7.5: the original operation is never replayed), Exclusive.
var (
	taskPolicy      = tools.Policy{SideEffect: tools.Delegating, Replay: tools.Never, Concurrency: tools.Exclusive}
	jobPolicy       = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	reconcilePolicy = tools.Policy{SideEffect: tools.SideEffecting, Replay: tools.Never, Concurrency: tools.Exclusive}
)

// refusal is the error object of an output: everything the model needs to act on it.
type refusal struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Fix     string   `json:"fix,omitempty"`
	Field   string   `json:"field,omitempty"`
	ID      string   `json:"id,omitempty"`
	Valid   []string `json:"valid,omitempty"`
}

// details is what Metadata.Details records of a result: the job and its status, and a
// refusal's typed facts, so nothing downstream parses Output.
type details struct {
	JobID          string `json:"jobId,omitempty"`
	SessionID      string `json:"sessionId,omitempty"`
	Status         string `json:"status,omitempty"`
	ReportDelivery string `json:"reportDelivery,omitempty"`
	Jobs           int    `json:"jobs,omitempty"`
	Code           string `json:"code,omitempty"`
	Field          string `json:"field,omitempty"`
}

// result renders o, the JSON the model reads, with its outcome and details.
func result(outcome tools.Outcome, code string, o any, d details) tools.Result {
	text, err := json.Marshal(o)
	if err != nil {
		// Only a report the application built wrong fails here; the outcome stands.
		text = []byte("the result could not be shown: " + err.Error())
	}
	r := tools.Result{Outcome: outcome, ErrorCode: code, Output: string(text)}
	if b, err := json.Marshal(d); err == nil {
		r.Metadata.Details = b
	}
	return r
}

// errorOutput is the output of a refusal or failure.
type errorOutput struct {
	Error *refusal `json:"error"`
	Note  string   `json:"note,omitempty"`
}

// refused renders a typed refusal of the application (*domain.Error): nothing was done.
func refused(de *domain.Error, note string) tools.Result {
	return result(tools.OutcomeError, de.Code(), errorOutput{Error: &refusal{Code: de.Code(), Message: de.Message,
		Fix: de.Fix, Field: de.Field, ID: de.ID, Valid: de.Valid}, Note: note},
		details{Code: de.Code(), Field: de.Field})
}

// failed renders an error that is not a refusal. A change that failed this way may or may not
// have been recorded (uncertain: the runtime never sends it again); a read that failed
// changed nothing (error).
func failed(err error, outcome tools.Outcome, message, fix string) tools.Result {
	code := codeOf(err)
	return result(outcome, code, errorOutput{Error: &refusal{Code: code, Message: message + ": " + err.Error(), Fix: fix}},
		details{Code: code})
}

// answer renders err from the port: a domain refusal as such, anything else as failed.
func answer(err error, note string, outcome tools.Outcome, message, fix string) tools.Result {
	var de *domain.Error
	if errors.As(err, &de) {
		return refused(de, note)
	}
	return failed(err, outcome, message, fix)
}

func cancelledBefore(ctx context.Context) (tools.Result, bool) {
	if err := ctx.Err(); err != nil {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: CodeCancelled,
			Output: "The call was cancelled before it started (" + err.Error() + "); nothing was done."}, true
	}
	return tools.Result{}, false
}

// codeOf is err's stable code, or internal for an untyped failure.
func codeOf(err error) string {
	if c := domain.CodeOf(err); c != "" {
		return c
	}
	return commands.CodeInternal
}

// quote writes v as JSON, for the computed parts of a schema's text.
func quote(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings and string slices always marshal
	}
	return string(b)
}
