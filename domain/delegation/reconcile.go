package delegation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// CodeJobNotFound: a job id names no job of the calling session. A job resolves only for the
// session whose task created it.
const CodeJobNotFound = "job_not_found"

// ReconcileOutcomes are the endings an authority may give an uncertain job (seeds 002 §7.5).
func ReconcileOutcomes() []string {
	return []string{events.JobCompleted, events.JobFailed, events.JobCancelled}
}

// CheckReconciliation applies the call's own rules of job_reconcile (seeds 002 §7.5):
// completed needs a non-empty finalText and no error; failed and cancelled need a non-empty
// error; authority and evidence are never empty. That the job is the caller's and uncertain
// is the job ledger's to decide (commands/app, Jobs.Reconcile).
func CheckReconciliation(r Reconciliation) error {
	if strings.TrimSpace(r.JobID) == "" {
		return domain.Invalid("jobID", "jobID is empty", "send the id of an uncertain job of this session (the job tool lists them)")
	}
	if !slices.Contains(ReconcileOutcomes(), r.Outcome) {
		e := domain.Invalid("outcome", fmt.Sprintf("outcome is %q, not one of %s", r.Outcome, strings.Join(ReconcileOutcomes(), ", ")),
			"send the ending the authority reports: completed, failed or cancelled")
		e.Valid = ReconcileOutcomes()
		return e
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch {
	case r.Outcome == events.JobCompleted && blank(r.FinalText):
		return domain.Invalid("finalText", "finalText is required for outcome completed",
			"say what the authority confirms was done, in finalText")
	case r.Outcome == events.JobCompleted && r.Error != "":
		return domain.Invalid("error", "error does not apply to outcome completed",
			"remove error; if the authority reports a failure, send outcome failed with the error")
	case r.Outcome != events.JobCompleted && blank(r.Error):
		return domain.Invalid("error", "error is required for outcome "+r.Outcome,
			"say what the authority reports went wrong, in error")
	case blank(r.Authority):
		return domain.Invalid("authority", "authority is empty",
			"name the authoritative system you checked (a CI run, a deployment API, the repository state)")
	case blank(r.Evidence):
		return domain.Invalid("evidence", "evidence is empty",
			"quote what the authority showed (a status, a digest, an exit code)")
	}
	return nil
}
