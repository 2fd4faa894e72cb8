package goal

import (
	"fmt"

	"github.com/zuno-run/zuno/domain/verification"
	"github.com/zuno-run/zuno/events"
)

// Facts is what the completion barrier reads besides the Goal: the Plan and the Todo items
// of the same work revision, the session's jobs as its ledger was read (at JobsRevision),
// and the verification receipts the completion cites, by id (a missing id: not recorded).
type Facts struct {
	Plans        []events.WorkPlan
	Todos        []events.WorkItem
	Jobs         []Job
	JobsRevision int64
	Receipts     map[string]verification.Receipt
}

// Job is one job of the ledger as the barrier reads it.
type Job struct {
	ID             string
	Status         string
	ReportDelivery string
	// ReportInputID names the nextStep report's inbox input once admitted; ReportConsumed
	// says the parent's transcript holds it (an input queued, steering or promoted is not).
	ReportInputID  string
	ReportConsumed bool
}

// Blocker kinds.
const (
	BlockPlanStep  = "plan_step"
	BlockTodo      = "todo"
	BlockJob       = "job"
	BlockReport    = "report"
	BlockUncertain = "uncertain_job"
	BlockEvidence  = "evidence"
)

// Blocker is one thing that keeps a Goal from completing.
type Blocker struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

func (b Blocker) String() string {
	s := fmt.Sprintf("%s %s [%s]", b.Kind, b.ID, b.Status)
	if b.Reason != "" {
		s += " " + b.Reason
	}
	return s
}

// Blockers lists, in a stable order, what in f blocks completion (seeds 002 §7.4): unfinished
// steps of the plans still open, unfinished Todo items, queued or running jobs, terminal
// nextStep jobs whose report was not consumed, and every uncertain job whatever became of
// its report. A consumed report and a terminal quiet job block nothing.
func Blockers(f Facts) []Blocker {
	var out []Blocker
	for _, p := range f.Plans {
		if p.Status == events.GoalComplete || terminalWork(p.Status) {
			continue
		}
		for _, st := range p.Steps {
			if !terminalWork(st.Status) {
				out = append(out, Blocker{Kind: BlockPlanStep, ID: st.ID, Status: st.Status})
			}
		}
	}
	for _, it := range f.Todos {
		if !terminalWork(it.Status) {
			out = append(out, Blocker{Kind: BlockTodo, ID: it.ID, Status: it.Status})
		}
	}
	for _, j := range f.Jobs {
		switch {
		case j.Status == events.JobUncertain:
			out = append(out, Blocker{Kind: BlockUncertain, ID: j.ID, Status: j.Status,
				Reason: "may have had side effects: reconcile it with job_reconcile from an authoritative source"})
		case j.Status == events.JobQueued || j.Status == events.JobRunning:
			out = append(out, Blocker{Kind: BlockJob, ID: j.ID, Status: j.Status})
		case j.ReportDelivery == events.DeliveryNextStep && j.ReportInputID != "" && !j.ReportConsumed:
			out = append(out, Blocker{Kind: BlockReport, ID: j.ReportInputID, Status: "unconsumed",
				Reason: "the report of job " + j.ID + " has not reached the transcript yet"})
		}
	}
	return out
}

// terminalWork mirrors domain/work.Terminal (completed, superseded, cancelled); domain/work
// imports this package, so it is not imported back.
func terminalWork(status string) bool {
	return status == "completed" || status == "superseded" || status == "cancelled"
}

// evidence checks the receipt cited for a criterion needing evidence; nil when it meets it.
func (f Facts) evidence(criterionID, receiptID string) *Blocker {
	b := &Blocker{Kind: BlockEvidence, ID: criterionID, Status: "unmet"}
	switch {
	case receiptID == "":
		b.Reason = "needs evidence: cite the [verification rcp_…] id of an authoritative passing check"
	case !verification.ValidReceiptID(receiptID):
		b.Reason = fmt.Sprintf("%q is not a verification receipt id (rcp_ and 32 lower-case hex digits)", receiptID)
	default:
		r, ok := f.Receipts[receiptID]
		if !ok {
			b.Reason = "receipt " + receiptID + " is not recorded in this session or its jobs' sessions"
		} else if err := verification.PassingEvidence(r); err != nil {
			b.Reason = err.Error()
		} else {
			return nil
		}
	}
	return b
}

// Actionable reports whether the work has something to do now (seeds 000: auto-continuation
// needs executable items): a Todo pending or in progress whose dependencies are all
// completed, or a step in progress of a plan still open. A blocked Todo, a Todo waiting on
// another, or a plan whose steps nobody took up is not, by itself, reason to continue.
func Actionable(plans []events.WorkPlan, todos []events.WorkItem) bool {
	status := make(map[string]string, len(todos))
	for _, it := range todos {
		status[it.ID] = it.Status
	}
	for _, it := range todos {
		if it.Status != "pending" && it.Status != "in_progress" {
			continue
		}
		ready := true
		for _, d := range it.Dependencies {
			ready = ready && status[d] == "completed"
		}
		if ready {
			return true
		}
	}
	for _, p := range plans {
		if terminalWork(p.Status) {
			continue
		}
		for _, st := range p.Steps {
			if st.Status == "in_progress" {
				return true
			}
		}
	}
	return false
}
