package delegate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
)

type reconcile struct{ jobs Jobs }

var reconcileSchema = schema.MustCompile(tools.NameJobReconcile, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "jobID": {"type": "string", "minLength": 1, "description": "an uncertain job of this session"},
    "outcome": {"type": "string", "enum": %[1]s, "description": "how the authority says the job ended"},
    "finalText": {"type": "string", "description": "required for completed: what the authority confirms was done"},
    "error": {"type": "string", "description": "required for failed and cancelled, not allowed for completed: what went wrong"},
    "authority": {"type": "string", "minLength": 1, "description": "the authoritative system you checked, e.g. CI run 123 or a deployment API"},
    "evidence": {"type": "string", "minLength": 1, "description": "what the authority showed, e.g. terminal status=success, artifact digest"}
  },
  "required": ["jobID", "outcome", "authority", "evidence"],
  "additionalProperties": false
}`, quote(delegation.ReconcileOutcomes()))), schema.Rules{
	Example: `{"jobID": "job_1", "outcome": "completed", "finalText": "The deployment finished", ` +
		`"authority": "deployment API", "evidence": "release 42 status=live"}`,
	NullIsAbsent: true, StrictText: true})

// reconcileArgs is job_reconcile's arguments as the schema names them.
type reconcileArgs struct {
	JobID     string `json:"jobID"`
	Outcome   string `json:"outcome"`
	FinalText string `json:"finalText"`
	Error     string `json:"error"`
	Authority string `json:"authority"`
	Evidence  string `json:"evidence"`
}

func (t *reconcile) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameJobReconcile, Policy: reconcilePolicy}
}

func (t *reconcile) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameJobReconcile, Schema: reconcileSchema.Raw(), Description: "Settle an uncertain job of " +
		"this session (its process was lost while it ran) on an authoritative system's word, never by re-running it. " +
		"Check the authority first (CI, a deployment API, the repository state), then send what it showed: completed " +
		"needs finalText and no error; failed and cancelled need error; authority and evidence are always required. " +
		"A nextStep job delivers one replacement report."}
}

func (t *reconcile) WritesWorkspace() bool { return false }

func (t *reconcile) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a reconcileArgs
	if err := reconcileSchema.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	r := delegation.Reconciliation(a)
	if err := delegation.CheckReconciliation(r); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: r}, nil
}

// reconcileOutput is what the model reads of a reconciliation.
type reconcileOutput struct {
	JobID     string `json:"jobId"`
	SessionID string `json:"sessionId,omitempty"`
	Status    string `json:"status"`
	Note      string `json:"note"`
}

func (t *reconcile) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	r, ok := inv.Args.(delegation.Reconciliation)
	if !ok {
		return tools.NotValidated(inv)
	}
	if res, done := cancelledBefore(ctx); done {
		return res
	}
	out, err := t.jobs.Reconcile(ctx, inv, r)
	if err != nil {
		return answer(err, "Nothing was reconciled.", tools.OutcomeUncertain, "the reconciliation may or may not have been recorded",
			"call job with this jobID to see whether the job is still uncertain before reconciling again")
	}
	o := reconcileOutput{JobID: out.JobID, SessionID: out.SessionID, Status: out.Status,
		Note: fmt.Sprintf("The job is settled %s on %s's word; nothing was re-run.", out.Status, r.Authority)}
	return result(tools.OutcomeCompleted, "", o, details{JobID: out.JobID, SessionID: out.SessionID, Status: out.Status})
}
