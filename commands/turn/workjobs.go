package turn

import (
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// promptJobs is the session's job ledger as runtime.work_state shows it (seeds 002 §9): every
// job, and a report input for each admitted nextStep report, queued until the session
// consumes it. The renderer picks what is shown (active and uncertain jobs, terminal ones
// whose plan step is still open, unconsumed reports). The ledger does not tell a report that
// steers a running turn from a queued one, so both show as queued (docs/goals.md).
func promptJobs(l *job.Ledger) ([]prompt.Job, []prompt.Report) {
	if l == nil {
		return nil, nil
	}
	var jobs []prompt.Job
	var reports []prompt.Report
	for _, j := range l.Jobs() {
		pj := prompt.Job{ID: j.JobID, Agent: j.Agent, Status: j.Status, ReportDelivery: j.ReportDelivery,
			Objective: j.Contract.Objective, Error: j.Error, Reconciliation: j.Reconciliation}
		if j.WorkContext != nil {
			pj.PlanStepID = j.WorkContext.PlanStepID
		}
		if j.Result != nil {
			pj.FinalText = j.Result.FinalText
		}
		jobs = append(jobs, pj)
		if j.ReportInputID != "" && j.ReportDelivery == events.DeliveryNextStep {
			status := prompt.ReportQueued
			if j.ReportConsumed {
				status = prompt.ReportConsumed
			}
			reports = append(reports, prompt.Report{InputID: j.ReportInputID, JobID: j.JobID, Agent: j.Agent, Status: status,
				FinalText: pj.FinalText})
		}
	}
	return jobs, reports
}
