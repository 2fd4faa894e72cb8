package delegation

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// CodeNotDelegate: a task names an agent outside the parent agent's delegate roster. The
// error lists the roster (Valid), so the model can pick again without another call.
const CodeNotDelegate = "not_a_delegate"

// The report deliveries a background task may ask for (seeds 002 §4).
var deliveries = []string{events.DeliveryNextStep, events.DeliveryQuiet}

// Deliveries returns the reportDelivery values a background task accepts.
func Deliveries() []string { return slices.Clone(deliveries) }

// Check applies every rule of seeds 002 §4 to one task call: CheckShape, and the agent is one
// of roster, the parent agent's delegate roster. The job runtime calls it when a parent
// delegates (commands/app, Jobs.Delegate), because only it knows the parent's agent; the task
// tool's Validate applies CheckShape, which needs no session.
func Check(req Request, roster []string) error {
	if err := CheckShape(req); err != nil {
		return err
	}
	agent := strings.TrimSpace(req.Contract.Agent)
	if slices.Contains(roster, agent) {
		return nil
	}
	fix := "delegate to one of: " + strings.Join(roster, ", ")
	if len(roster) == 0 {
		fix = "this agent has no delegates: do the work yourself instead of calling task"
	}
	e := domain.NewError(CodeNotDelegate,
		fmt.Sprintf("agent %q is not in this agent's delegate roster", agent), fix)
	e.Field, e.ID, e.Valid = "agent", agent, slices.Clone(roster)
	return e
}

// CheckShape is the part of Check that reads only the call: the four contract texts and the
// agent are required and not blank, also when continuing a child by task_id (a continuation
// is a new contract, not a follow-up message); no list entry is blank; reportDelivery is
// nextStep or quiet, and only on a background task. Refusals are invalid_argument
// *domain.Errors naming the field and what to send.
func CheckShape(req Request) error {
	c := req.Contract
	for _, f := range []struct{ name, value, fix string }{
		{"agent", c.Agent, "name the child agent to delegate to, one of this agent's delegates"},
		{"objective", c.Objective, "say what the child must achieve, in one or two sentences"},
		{"deliverable", c.Deliverable, "say what the child hands back (a diagnosis, a changed file set, a report)"},
		{"instructions", c.Instructions, "say how the child should work: the approach, what to read, what not to touch"},
		{"success_evidence", c.SuccessEvidence, "say what evidence proves the deliverable (a passing test, exact files and symbols)"},
	} {
		if err := required(f.name, f.value, f.fix, req.TaskID != ""); err != nil {
			return err
		}
	}
	if err := checkLists(c); err != nil {
		return err
	}
	if req.TaskID != "" && strings.TrimSpace(req.TaskID) == "" {
		return domain.Invalid("task_id", "task_id is blank",
			"send the session id of an earlier child of this session to continue it, or leave task_id out to start a new child")
	}
	return checkDelivery(req)
}

// required refuses a blank contract text. continuing adds why a task_id does not spare it.
func required(field, value, fix string, continuing bool) error {
	if !utf8.ValidString(value) {
		return domain.Invalid(field, field+" is not valid UTF-8", "send "+field+" as UTF-8 text")
	}
	if strings.TrimSpace(value) != "" {
		return nil
	}
	msg := field + " is empty"
	if continuing {
		msg += " (continuing a child by task_id needs the whole contract again)"
	}
	return domain.Invalid(field, msg, fix)
}

// checkLists refuses a blank entry of an optional list: it would say nothing to the child and
// still change the contract's logical key.
func checkLists(c events.DelegationContract) error {
	type list struct {
		name  string
		items []string
	}
	var lists []list
	if s := c.Scope; s != nil {
		lists = append(lists, list{"scope.include", s.Include}, list{"scope.exclude", s.Exclude})
	}
	if k := c.Constraints; k != nil {
		lists = append(lists, list{"constraints.must", k.Must}, list{"constraints.must_not", k.MustNot})
	}
	lists = append(lists, list{"dependencies", c.Dependencies})
	for _, l := range lists {
		for i, item := range l.items {
			field := fmt.Sprintf("%s[%d]", l.name, i)
			if !utf8.ValidString(item) {
				return domain.Invalid(field, field+" is not valid UTF-8", "send each entry as UTF-8 text")
			}
			if strings.TrimSpace(item) == "" {
				return domain.Invalid(field, field+" is empty", "remove the blank entry, or write what it should say")
			}
		}
	}
	return nil
}

// checkDelivery: a foreground task is refused a reportDelivery rather than having it ignored
// (docs/delegation.md, "The contract"): its report is the call's own result, so a model that
// asked for nextStep would wait for an input that never comes.
func checkDelivery(req Request) error {
	d := req.ReportDelivery
	if d == "" {
		return nil
	}
	if !req.Background {
		return domain.Invalid("reportDelivery", "reportDelivery applies only to a background task",
			"remove reportDelivery: a foreground task returns its report as this call's result; or send background: true")
	}
	if !slices.Contains(deliveries, d) {
		e := domain.Invalid("reportDelivery", fmt.Sprintf("reportDelivery is %q, not one of %s", d, strings.Join(deliveries, ", ")),
			"send nextStep (the report arrives as your next input; the default) or quiet (read it with the job tool)")
		e.Valid = Deliveries()
		return e
	}
	return nil
}

// Normalize returns req as it is admitted: every text of the contract trimmed of surrounding
// space, and a background task's delivery nextStep unless it asked for quiet. A foreground
// task keeps no delivery (Check refuses one); Delivery says what it gets. Call it after
// CheckShape.
func Normalize(req Request) Request {
	c := req.Contract
	c.Agent, c.Objective, c.Deliverable = trim(c.Agent), trim(c.Objective), trim(c.Deliverable)
	c.Instructions, c.SuccessEvidence = trim(c.Instructions), trim(c.SuccessEvidence)
	c.Dependencies = trimAll(c.Dependencies)
	if s := c.Scope; s != nil {
		c.Scope = &events.ContractScope{Include: trimAll(s.Include), Exclude: trimAll(s.Exclude)}
		if c.Scope.Include == nil && c.Scope.Exclude == nil {
			c.Scope = nil
		}
	}
	if k := c.Constraints; k != nil {
		c.Constraints = &events.ContractConstraints{Must: trimAll(k.Must), MustNot: trimAll(k.MustNot)}
		if c.Constraints.Must == nil && c.Constraints.MustNot == nil {
			c.Constraints = nil
		}
	}
	req.Contract = c
	req.TaskID, req.Intent = trim(req.TaskID), trim(req.Intent)
	if req.Background && req.ReportDelivery == "" {
		req.ReportDelivery = events.DeliveryNextStep
	}
	return req
}

// Delivery is how the job's report is delivered: a foreground task is an attached quiet job
// (seeds 002 §6), a background one nextStep unless it asked for quiet.
func (r Request) Delivery() string {
	switch {
	case !r.Background:
		return events.DeliveryQuiet
	case r.ReportDelivery == "":
		return events.DeliveryNextStep
	}
	return r.ReportDelivery
}

func trim(s string) string { return strings.TrimSpace(s) }

// trimAll trims each entry; an empty list is nil, so absent and [] are one contract.
func trimAll(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = trim(s)
	}
	return out
}

// legacy are the arguments of older task tools (and of other harnesses) that the model may
// still send, with what to send instead. They are refused, never translated: there is no
// migration layer (seeds 002 §4).
var legacy = map[string]string{
	"description":   "there is no description: say what to achieve in objective and what to hand back in deliverable",
	"prompt":        "there is no free-form prompt: split it into objective (what to achieve) and instructions (how), with deliverable and success_evidence",
	"subagent_type": "name the child agent in agent",
	"category":      "there are no task categories: name the child agent in agent",
	"model":         "the child's model comes from this session's configuration and cannot be chosen per call: remove model",
	"effort":        "the child's reasoning effort comes from this session's configuration and cannot be chosen per call: remove effort",
	"load_skills":   "Skills are not chosen per call: the child loads its own agent's Skills; remove load_skills",
	"contract":      "do not nest the contract: send agent, objective, deliverable, instructions and success_evidence at the top level of the arguments",
}

// LegacyNames are the arguments Legacy refuses, sorted.
func LegacyNames() []string { return slices.Sorted(maps.Keys(legacy)) }

// Legacy reports whether name is an argument of an older task tool, and the refusal that says
// what to send instead. The task tool applies it before its schema, so the model reads this
// fix rather than a bare "unknown argument".
func Legacy(name string) (*domain.Error, bool) {
	fix, ok := legacy[name]
	if !ok {
		return nil, false
	}
	return domain.Invalid(name, fmt.Sprintf("task does not take %q", name), fix), true
}
