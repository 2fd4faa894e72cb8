package app

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Jobs reads the caller's jobs: one by id, or every job of the session.
func (j *Jobs) Jobs(ctx context.Context, sessionID, jobID string) ([]delegation.JobView, error) {
	l, _, err := commands.LoadJobs(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, sessionID)
	if err != nil {
		return nil, err
	}
	var out []delegation.JobView
	for _, jb := range l.Jobs() {
		if jobID == "" || jb.JobID == jobID {
			out = append(out, delegation.JobView{JobState: jb.JobState, Contract: jb.Contract, Result: jb.Result, Error: jb.Error})
		}
	}
	if jobID != "" && len(out) == 0 {
		return nil, job.NotFound(jobID)
	}
	return out, nil
}

// Reconcile settles an uncertain job of the caller on an authority's word (seeds 002 §7.5);
// a nextStep job's replacement report is admitted in the same append.
func (j *Jobs) Reconcile(ctx context.Context, inv tools.Invocation, r delegation.Reconciliation) (delegation.Outcome, error) {
	l, _, err := commands.LoadJobs(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, inv.SessionID)
	if err != nil {
		return delegation.Outcome{}, err
	}
	jb := l.Job(r.JobID)
	if jb == nil {
		return delegation.Outcome{}, job.NotFound(r.JobID)
	}
	report := events.TaskReport{SchemaVersion: 2, JobID: jb.JobID, SessionID: jb.ChildSessionID, ParentSessionID: jb.ParentSessionID,
		Agent: jb.Agent, Status: r.Outcome, FinalText: r.FinalText, ChangedPaths: []string{}, VerificationRecords: []events.TaskVerification{},
		UncertainSideEffects: []string{}, EvidenceErrors: []string{}}
	if jb.Result != nil {
		report.WorkContext, report.Usage = jb.Result.WorkContext, jb.Result.Usage
	}
	if r.Error != "" {
		report.EvidenceErrors = []string{r.Error}
	}
	input := ""
	if jb.ReportDelivery == events.DeliveryNextStep {
		input = "input_" + derived("reconcile", jb.JobID+"/"+inv.CallID)
	}
	cmd := job.Reconcile{JobReconciled: events.JobReconciled{Outcome: r.Outcome, FinalText: r.FinalText, Error: r.Error,
		Authority: r.Authority, Evidence: r.Evidence, ToolCallID: inv.CallID}, Result: report, InputID: input}
	cmd.JobID = r.JobID
	res, _ := j.c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jobMeta("job-reconcile/"+inv.SessionID+"/"+inv.CallID, inv.SessionID, inv.CallID),
		ParentSessionID: inv.SessionID, Cmd: cmd})
	if err := res.Err(); err != nil {
		return delegation.Outcome{}, err
	}
	if input != "" {
		j.wake(inv.SessionID) // the replacement report, after the reconciling turn
	}
	return delegation.Outcome{JobID: jb.JobID, SessionID: jb.ChildSessionID, Status: r.Outcome, Report: &report}, nil
}
