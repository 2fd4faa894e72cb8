package delegate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

type job struct{ jobs Jobs }

var jobSchema = schema.MustCompile(tools.NameJob, schema.Compact(`{
  "type": "object",
  "properties": {
    "jobID": {"type": "string", "minLength": 1, "description": "one job of this session; leave it out for all of them"}
  },
  "required": [],
  "additionalProperties": false
}`), schema.Rules{Example: `{"jobID": "job_1"}`, EmptyIsObject: true, NullIsEmpty: true, NullIsAbsent: true})

// jobArgs is job's validated arguments.
type jobArgs struct {
	JobID string `json:"jobID"`
}

func (t *job) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameJob, Policy: jobPolicy}
}

func (t *job) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameJob, Schema: jobSchema.Raw(), Description: "Read the jobs this session's task calls " +
		"started: status (queued, running, completed, failed, cancelled, uncertain), the child session, and the report " +
		"of a finished one. With jobID, that job only. Do not poll a running job: a nextStep report arrives as your next " +
		"input by itself. Use it for quiet jobs and to find uncertain ones, which job_reconcile settles."}
}

func (t *job) WritesWorkspace() bool { return false }

func (t *job) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a jobArgs
	if err := jobSchema.Decode(args, &a); err != nil {
		return tools.Parsed{}, err
	}
	return tools.Parsed{Args: a}, nil
}

// jobEntry is one job as the model reads it: the contract's objective names it; the whole
// contract is the caller's own words and stays in its transcript.
type jobEntry struct {
	JobID          string             `json:"jobId"`
	SessionID      string             `json:"sessionId"`
	Agent          string             `json:"agent"`
	Status         string             `json:"status"`
	Background     bool               `json:"background"`
	ReportDelivery string             `json:"reportDelivery"`
	Objective      string             `json:"objective"`
	Report         *events.TaskReport `json:"report,omitempty"`
	Error          string             `json:"error,omitempty"`
	TimeCreated    string             `json:"timeCreated,omitempty"`
}

type jobOutput struct {
	Jobs []jobEntry `json:"jobs"`
	Note string     `json:"note,omitempty"`
}

func (t *job) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(jobArgs)
	if !ok {
		return tools.NotValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	views, err := t.jobs.Jobs(ctx, inv.SessionID, a.JobID)
	if err != nil {
		return answer(err, "", tools.OutcomeError, "reading the jobs failed; nothing was changed",
			"try again later; if it keeps failing, report it to the user")
	}
	if a.JobID != "" && len(views) == 0 {
		e := domain.NewError(delegation.CodeJobNotFound, fmt.Sprintf("no job %q was started by this session", a.JobID),
			"call job without jobID to list this session's jobs")
		e.Field, e.ID = "jobID", a.JobID
		return refused(e, "")
	}
	o := jobOutput{Jobs: make([]jobEntry, 0, len(views))}
	uncertain := 0
	for _, v := range views {
		o.Jobs = append(o.Jobs, jobEntry{JobID: v.JobID, SessionID: v.ChildSessionID, Agent: v.Agent, Status: v.Status,
			Background: v.Background, ReportDelivery: v.ReportDelivery, Objective: v.Contract.Objective, Report: v.Result,
			Error: v.Error, TimeCreated: v.TimeCreated})
		if v.Status == events.JobUncertain {
			uncertain++
		}
	}
	switch {
	case len(views) == 0:
		o.Note = "This session has started no jobs."
	case uncertain > 0:
		o.Note = fmt.Sprintf("%d job(s) are uncertain: their process was lost and they are never re-run. Inspect the real "+
			"state, then settle each with job_reconcile on an authority's word.", uncertain)
	}
	d := details{Jobs: len(views)}
	if a.JobID != "" {
		d.JobID, d.Status = a.JobID, views[0].Status
	}
	return result(tools.OutcomeCompleted, "", o, d)
}
