package delegation_test

import (
	"errors"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
)

// TestCheckReconciliation: the rules of job_reconcile in seeds 002 §7.5, one row each.
func TestCheckReconciliation(t *testing.T) {
	ok := delegation.Reconciliation{JobID: "job_1", Outcome: "completed", FinalText: "deployed",
		Authority: "CI run 123", Evidence: "status=success"}
	rows := []struct {
		seed  string
		edit  func(*delegation.Reconciliation)
		field string
	}{
		{"completed with finalText, authority and evidence is accepted", func(*delegation.Reconciliation) {}, ""},
		{"completed needs a non-empty finalText", func(r *delegation.Reconciliation) { r.FinalText = " " }, "finalText"},
		{"completed takes no error", func(r *delegation.Reconciliation) { r.Error = "boom" }, "error"},
		{"failed needs a non-empty error", func(r *delegation.Reconciliation) { r.Outcome = "failed" }, "error"},
		{"cancelled needs a non-empty error", func(r *delegation.Reconciliation) { r.Outcome, r.Error = "cancelled", "\t" }, "error"},
		{"failed with an error is accepted", func(r *delegation.Reconciliation) { r.Outcome, r.Error = "failed", "exit 1" }, ""},
		{"authority is never empty", func(r *delegation.Reconciliation) { r.Authority = "" }, "authority"},
		{"evidence is never empty", func(r *delegation.Reconciliation) { r.Evidence = " " }, "evidence"},
		{"the outcome is completed, failed or cancelled", func(r *delegation.Reconciliation) { r.Outcome = "uncertain" }, "outcome"},
		{"the job id is required", func(r *delegation.Reconciliation) { r.JobID = "" }, "jobID"},
	}
	for _, r := range rows {
		rec := ok
		r.edit(&rec)
		err := delegation.CheckReconciliation(rec)
		if r.field == "" {
			if err != nil {
				t.Errorf("%s: %v", r.seed, err)
			}
			continue
		}
		var de *domain.Error
		if !errors.As(err, &de) || de.Field != r.field || de.Code() != domain.CodeInvalidArgument || de.Fix == "" {
			t.Errorf("%s: got %v, want a refusal of %s", r.seed, err, r.field)
		}
	}
}
