// Package delegation holds the rules of the task tool's typed DelegationContract (seeds 002
// §4) and what a parent's delegation is asked and answers: pure values, no I/O
// (docs/delegation.md).
package delegation

import "github.com/zuno-run/zuno/events"

// Request is one validated task call.
type Request struct {
	Contract events.DelegationContract
	// TaskID continues an earlier child session of the same parent; empty starts a new one.
	TaskID string
	// Background runs the child as a job the parent does not wait for.
	Background bool
	// ReportDelivery is nextStep or quiet for a background task; a foreground task is an
	// attached quiet job whatever this says.
	ReportDelivery string
	// Intent is a label for people (a UI); it does not reach the child.
	Intent string
}

// Outcome is what a task call answers the model.
type Outcome struct {
	JobID     string `json:"jobId"`
	SessionID string `json:"sessionId"`
	// Status is the job's: the child's ending for a foreground task (completed, failed,
	// cancelled, uncertain), queued or running for a background one.
	Status string `json:"status"`
	// Report is the foreground child's report; a background one's arrives in the parent's
	// inbox (nextStep) or is read with the job tool (quiet).
	Report *events.TaskReport `json:"report,omitempty"`
}

// Reconciliation is one validated job_reconcile call (seeds 002 §7.5).
type Reconciliation struct {
	JobID     string
	Outcome   string
	FinalText string
	Error     string
	Authority string
	Evidence  string
}

// JobView is one job as the job tool and `zuno job show` read it.
type JobView struct {
	events.JobState
	Contract    events.DelegationContract `json:"contract"`
	Result      *events.TaskReport        `json:"result,omitempty"`
	Error       string                    `json:"error,omitempty"`
	TimeCreated string                    `json:"timeCreated,omitempty"`
}
