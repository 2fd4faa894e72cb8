package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

type task struct{ jobs Jobs }

// taskExample is a complete call, quoted in the description and in the fix of an unknown
// argument: seeds 000 asks the tool to show one, so the model does not nest the contract.
const taskExample = `{"agent": "explorer", "objective": "Find where prompt receipts lose the provider request id", ` +
	`"deliverable": "The call chain, the gap and the smallest set of files to change", ` +
	`"instructions": "Read only; start from commands/turn", "success_evidence": "Exact files and symbols, facts apart from inferences", ` +
	`"scope": {"include": ["commands/turn"], "exclude": ["adapters/credentials"]}, ` +
	`"constraints": {"must": ["keep uncommitted changes"], "must_not": ["edit files"]}, "background": true}`

// taskSchema is the DelegationContract of seeds 002 §4 and the call's own options, exactly.
// intent is listed, unlike on other tools, because seeds 000 says it cannot replace
// objective: the model is told so where it reads the arguments.
var taskSchema = schema.MustCompile(tools.NameTask, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "agent": {"type": "string", "minLength": 1, "description": "the child agent, one of the delegates the runtime.delegation section lists"},
    "objective": {"type": "string", "minLength": 1, "description": "what the child must achieve"},
    "deliverable": {"type": "string", "minLength": 1, "description": "what the child hands back"},
    "instructions": {"type": "string", "minLength": 1, "description": "how the child should work: approach, what to read, what not to touch"},
    "success_evidence": {"type": "string", "minLength": 1, "description": "the evidence that proves the deliverable"},
    "scope": {"type": "object", "properties": {
      "include": {"type": "array", "items": {"type": "string"}, "description": "paths or areas the child works in"},
      "exclude": {"type": "array", "items": {"type": "string"}, "description": "paths or areas the child leaves alone"}
    }, "required": [], "additionalProperties": false, "description": "optional; keep the scopes of parallel tasks apart"},
    "constraints": {"type": "object", "properties": {
      "must": {"type": "array", "items": {"type": "string"}, "description": "what the child must do or keep"},
      "must_not": {"type": "array", "items": {"type": "string"}, "description": "what the child must not do"}
    }, "required": [], "additionalProperties": false, "description": "optional"},
    "dependencies": {"type": "array", "items": {"type": "string"}, "description": "optional: what the task assumes is already true"},
    "background": {"type": "boolean", "description": "true: start the child and return at once; default false: wait for its report"},
    "reportDelivery": {"type": "string", "enum": %[1]s, "description": "background only: nextStep (default) delivers the report as your next input; quiet stores it for the job tool"},
    "task_id": {"type": "string", "minLength": 1, "description": "continue an earlier child of this session (its session id) with this new, complete contract"},
    "intent": {"type": "string", "description": "a short label for people watching; it does not reach the child and cannot replace objective"}
  },
  "required": ["agent", "objective", "deliverable", "instructions", "success_evidence"],
  "additionalProperties": false
}`, quote(delegation.Deliveries()))), schema.Rules{Example: taskExample, NullIsAbsent: true, StrictText: true})

// taskArgs is task's arguments as the schema names them (flat: schema.Decode fills the
// fields a struct declares itself, not those of an embedded one).
type taskArgs struct {
	Agent           string                      `json:"agent"`
	Objective       string                      `json:"objective"`
	Deliverable     string                      `json:"deliverable"`
	Instructions    string                      `json:"instructions"`
	SuccessEvidence string                      `json:"success_evidence"`
	Scope           *events.ContractScope       `json:"scope"`
	Constraints     *events.ContractConstraints `json:"constraints"`
	Dependencies    []string                    `json:"dependencies"`
	Background      bool                        `json:"background"`
	ReportDelivery  string                      `json:"reportDelivery"`
	TaskID          string                      `json:"task_id"`
	Intent          string                      `json:"intent"`
}

func (t *task) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameTask, Policy: taskPolicy}
}

func (t *task) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameTask, Schema: taskSchema.Raw(), Description: "Delegate one bounded task to a child " +
		"agent with a typed contract. agent, objective, deliverable, instructions and success_evidence are required at the " +
		"top level, also with task_id; scope, constraints and dependencies are optional. In the foreground (the default) " +
		"the call waits and returns the child's report; with background: true it returns a job at once and the report " +
		"arrives as your next input (reportDelivery nextStep) or is kept for the job tool (quiet). Never poll a job or " +
		"send the same task twice: an identical task still in flight is refused. The child's model, tools and sandbox " +
		"come from this session; it reports to you, never to the user. Example: " + taskExample}
}

func (t *task) WritesWorkspace() bool { return false }

// Validate decodes a call and applies the contract's rules that need no session
// (delegation.CheckShape); the roster and the ledger's rules are the application's, at
// execution. An argument of an older task tool is refused first, with what to send instead.
func (t *task) Validate(args json.RawMessage) (tools.Parsed, error) {
	if err := legacyArgument(args); err != nil {
		return tools.Parsed{}, err
	}
	var a taskArgs
	if err := taskSchema.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	c := events.DelegationContract{Agent: a.Agent, Objective: a.Objective, Deliverable: a.Deliverable,
		Instructions: a.Instructions, SuccessEvidence: a.SuccessEvidence, Scope: a.Scope, Constraints: a.Constraints,
		Dependencies: a.Dependencies}
	req := delegation.Request{Contract: c, TaskID: a.TaskID, Background: a.Background,
		ReportDelivery: a.ReportDelivery, Intent: a.Intent}
	if err := delegation.CheckShape(req); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: delegation.Normalize(req)}, nil
}

// legacyArgument is the refusal of the first top-level member, in the call's text, that an
// older task tool took (delegation.Legacy). Anything that is not a readable object is left
// to the schema to refuse. Most calls name no legacy argument anywhere, and a scan for the
// quoted names spares them the decoding (a third of Validate's cost otherwise).
func legacyArgument(args json.RawMessage) error {
	if !mentionsLegacy(args) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if key, _ := tok.(string); key != "" {
			if e, ok := delegation.Legacy(key); ok {
				return e
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// taskOutput is what the model reads of a delegation.
type taskOutput struct {
	JobID          string             `json:"jobId"`
	SessionID      string             `json:"sessionId"`
	Agent          string             `json:"agent"`
	Status         string             `json:"status"`
	Background     bool               `json:"background"`
	ReportDelivery string             `json:"reportDelivery"`
	Report         *events.TaskReport `json:"report,omitempty"`
	Note           string             `json:"note"`
}

func (t *task) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	req, ok := inv.Args.(delegation.Request)
	if !ok {
		return tools.NotValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	out, err := t.jobs.Delegate(ctx, inv, req)
	if err != nil {
		return answer(err, "Nothing was delegated.", tools.OutcomeUncertain, "the delegation may or may not have been admitted",
			"call job to see whether the job exists before delegating again")
	}
	o := taskOutput{JobID: out.JobID, SessionID: out.SessionID, Agent: req.Contract.Agent, Status: out.Status,
		Background: req.Background, ReportDelivery: req.Delivery(), Report: out.Report}
	outcome, code := tools.OutcomeCompleted, ""
	o.Note = taskNote(o)
	if out.Status == events.JobUncertain {
		// The child may have had effects nobody observed; like any uncertain call, the model
		// inspects the real state before anything else.
		outcome, code = tools.OutcomeUncertain, CodeJobUncertain
	}
	return result(outcome, code, o, details{JobID: out.JobID, SessionID: out.SessionID, Status: out.Status,
		ReportDelivery: o.ReportDelivery, Code: code})
}

// taskNote says what the model does next, by how the job stands.
func taskNote(o taskOutput) string {
	switch {
	case o.Background && o.ReportDelivery == events.DeliveryQuiet:
		return fmt.Sprintf("The child runs in the background and its report is quiet: nothing will wake you. Read it with "+
			"job {\"jobID\": %q} when you need it.", o.JobID)
	case o.Background:
		return "The child runs in the background. Its report arrives as your next input when it ends: do not poll it " +
			"with job, and do not send this task again."
	case o.Status == events.JobCompleted:
		return fmt.Sprintf("The child finished; check its report against the success evidence. To give the same child "+
			"more work, call task with task_id %q and a new complete contract.", o.SessionID)
	case o.Status == events.JobUncertain:
		return "The child's process was lost while it ran: what it did is unknown, and it is never re-run. Inspect the " +
			"real state; once an authority confirms how it ended, settle it with job_reconcile."
	}
	return fmt.Sprintf("The child ended %s; its report says what it did. Decide from it rather than sending the same "+
		"task again.", o.Status)
}

// mentionsLegacy reports whether args hold a legacy argument's name in quotes, anywhere: a
// member of that name cannot be written otherwise (an escaped spelling is refused by the
// schema as unknown, with the generic fix).
func mentionsLegacy(args []byte) bool {
	for _, q := range legacyQuoted {
		if bytes.Contains(args, q) {
			return true
		}
	}
	return false
}

// legacyQuoted are the legacy names as a member of that name is written: in quotes.
var legacyQuoted = func() [][]byte {
	var out [][]byte
	for _, name := range delegation.LegacyNames() {
		out = append(out, []byte(`"`+name+`"`))
	}
	return out
}()
