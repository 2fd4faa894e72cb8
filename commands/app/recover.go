package app

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/events"
)

// Recover applies the restart rules to a parent's jobs (seeds 002 §7.3, docs/delegation.md
// "Restart"): a queued job no live process will start is cancelled; a running job whose
// process is gone is uncertain, never run again; both tell a nextStep parent with a report.
// An input left in the inbox is delivered by the turn that called Recover, at its first
// tool-safe boundary, or right after it.
func (j *Jobs) Recover(ctx context.Context, parent string) error {
	l, rev, err := commands.LoadJobs(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, parent)
	if err != nil || rev < 0 {
		return err
	}
	pending := false
	for _, jb := range l.Jobs() {
		settled := false
		switch {
		case j.mine(jb.JobID):
		case jb.Status == events.JobQueued && !j.admitterAlive(ctx, parent, jb.ParentTurnID):
			settled, err = j.settleLost(ctx, jb, events.JobCancelled, "the process that admitted the job ended before its child started")
		case jb.Status == events.JobRunning && !j.alive(jb.Owner):
			settled, err = j.settleLost(ctx, jb, events.JobUncertain, "the process running the child was lost; what the child did last is not known, and it is not run again")
		}
		if err != nil {
			return err
		}
		if (settled && jb.ReportDelivery == events.DeliveryNextStep) || (jb.ReportInputID != "" && !jb.ReportConsumed) {
			pending = true
		}
	}
	for _, m := range l.Messages() {
		pending = pending || !m.Consumed
	}
	if pending {
		j.mu.Lock()
		j.missed[parent] = true
		j.mu.Unlock()
	}
	return nil
}

// settleLost settles a job its own process can no longer settle, with a report folded from
// what its child recorded. settled is false when the job was no longer queued or running: its
// own process settled it after Recover read the ledger (a child of this process that ends
// between that read and the mine check has left j.running by then). Nothing was lost then,
// and that settlement wakes the parent itself.
func (j *Jobs) settleLost(ctx context.Context, jb *job.Job, status, why string) (settled bool, err error) {
	adm := events.JobAdmitted{JobState: jb.JobState, Contract: jb.Contract}
	ev, err := j.evidence(ctx, adm)
	if err != nil {
		return false, err
	}
	report := ev.Report(jb.JobState, nil, status)
	report.EvidenceErrors = append(report.EvidenceErrors, why)
	if status == events.JobUncertain {
		report.UncertainSideEffects = append(report.UncertainSideEffects, "child session "+jb.ChildSessionID+": "+why)
	}
	input := ""
	if jb.ReportDelivery == events.DeliveryNextStep {
		input = "input_" + derived("report", jb.JobID)
	}
	res, _ := j.c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jobMeta("job-recover/"+jb.JobID, jb.ParentSessionID, jb.JobID),
		ParentSessionID: jb.ParentSessionID, Cmd: job.Settle{JobID: jb.JobID, Status: status, Result: &report, Error: why, Recovered: true, InputID: input}})
	if err := res.Err(); err != nil {
		if domain.CodeOf(err) == job.CodeJobState {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (j *Jobs) alive(o events.TurnOwner) bool {
	if o.Host == "" || j.c.ports.Driver.Alive == nil {
		return false
	}
	return j.c.ports.Driver.Alive(o)
}

// admitterAlive: the process whose turn admitted a queued job still runs, and starts the job
// when a slot frees (it waits for its delegated work before it exits).
func (j *Jobs) admitterAlive(ctx context.Context, parent, turnID string) bool {
	var owner *events.TurnOwner
	_, err := commands.Load(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, commands.SessionStream(parent), 0, func(_ events.Recorded, p events.Payload) error {
		if e, ok := p.(events.TurnStarted); ok && e.TurnID == turnID {
			owner = e.Owner
		}
		return nil
	})
	return err == nil && owner != nil && j.alive(*owner)
}

// mine reports whether this process runs the job now.
func (j *Jobs) mine(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.running[id]
}
