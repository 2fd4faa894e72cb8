package projections

import (
	"context"
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// Jobs is the "agent_job" table: one row per job a parent session delegated, as it is after
// the job's last event (docs/readmodels.md). Every job event carries the job's resulting state
// (events.JobState), so each writes the row's state columns whole; the rest is written by the
// event that knows it:
//
//   - job.admitted.1 creates the row: the contract, the task call, time_created;
//   - job.settled.1 sets result (the TaskReport, or NULL when the settlement has none) and error;
//   - job.reconciled.1 sets error and result: the reconciliation's report, made as the host
//     makes it (reconcileJob), so a quiet job, which gets no replacement report, still reads
//     as reconciled;
//   - job.report.admitted.1 sets result to the report it delivers: the settlement's own, which
//     is the same metadata, or a reconciliation's replacement, the host's word on the job.
//
// Every write gives the same row when applied again.
type Jobs struct{}

func (Jobs) Name() string     { return "agent_job" }
func (Jobs) Tables() []string { return []string{"agent_job"} }

func (Jobs) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.JobAdmitted:
		return admitJob(ctx, tx, ev, e)
	case events.JobStarted:
		return updateJobState(ctx, tx, ev, e.JobState)
	case events.JobSettled:
		if err := updateJobState(ctx, tx, ev, e.JobState); err != nil {
			return err
		}
		return setJobResult(ctx, tx, e.JobID, e.Result, e.Error)
	case events.JobReconciled:
		if err := updateJobState(ctx, tx, ev, e.JobState); err != nil {
			return err
		}
		return reconcileJob(ctx, tx, e)
	case events.JobReportAdmitted:
		if err := updateJobState(ctx, tx, ev, e.JobState); err != nil {
			return err
		}
		report, err := json.Marshal(e.Report)
		if err != nil {
			return err
		}
		return tx.Exec(ctx, `UPDATE agent_job SET result = ? WHERE id = ?`, string(report), e.JobID)
	case events.JobReportConsumed:
		return updateJobState(ctx, tx, ev, e.JobState)
	}
	return nil
}

func admitJob(ctx context.Context, tx *Tx, ev events.Recorded, e events.JobAdmitted) error {
	contract, err := json.Marshal(e.Contract)
	if err != nil {
		return err
	}
	s, at := e.JobState, tx.eventTime(ev)
	return tx.Exec(ctx, `INSERT INTO agent_job (id, parent_session_id, child_session_id, agent, status, background,
			report_delivery, report_input_id, logical_key, contract, parent_turn_id, tool_call_id, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET parent_session_id = excluded.parent_session_id,
			child_session_id = excluded.child_session_id, agent = excluded.agent, status = excluded.status,
			background = excluded.background, report_delivery = excluded.report_delivery,
			report_input_id = excluded.report_input_id, logical_key = excluded.logical_key, contract = excluded.contract,
			parent_turn_id = excluded.parent_turn_id, tool_call_id = excluded.tool_call_id, time_updated = excluded.time_updated`,
		s.JobID, s.ParentSessionID, s.ChildSessionID, s.Agent, s.Status, flag(s.Background), s.ReportDelivery,
		nullable(s.ReportInputID), s.LogicalKey, string(contract), e.ParentTurnID, e.ToolCallID, at, at)
}

// updateJobState writes the state an event leaves the job in.
func updateJobState(ctx context.Context, tx *Tx, ev events.Recorded, s events.JobState) error {
	return tx.Exec(ctx, `UPDATE agent_job SET parent_session_id = ?, child_session_id = ?, agent = ?, status = ?,
			background = ?, report_delivery = ?, report_input_id = ?, logical_key = ?, time_updated = ?
		WHERE id = ?`,
		s.ParentSessionID, s.ChildSessionID, s.Agent, s.Status, flag(s.Background), s.ReportDelivery,
		nullable(s.ReportInputID), s.LogicalKey, tx.eventTime(ev), s.JobID)
}

func setJobResult(ctx context.Context, tx *Tx, jobID string, result *events.TaskReport, errText string) error {
	var doc any
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return err
		}
		doc = string(b)
	}
	return tx.Exec(ctx, `UPDATE agent_job SET result = ?, error = ? WHERE id = ?`, doc, nullable(errText), jobID)
}

// reconcileJob writes the report the reconciliation carries (the host made it).
func reconcileJob(ctx context.Context, tx *Tx, e events.JobReconciled) error {
	return setJobResult(ctx, tx, e.JobID, &e.Result, e.Error)
}

// flag stores a boolean as 1 or 0, the same on both databases.
func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Inbox is the "inbox" table: the nextStep reports a parent session received, one row per
// input (docs/readmodels.md). job.report.admitted.1 creates a row queued; the parent's user
// message that carries the report (session.user_message.appended.1 naming its inputId), which
// is the authority, or job.report.consumed.1, which follows it, makes it consumed: whichever
// the log holds first sets message_id and time_consumed.
type Inbox struct{}

func (Inbox) Name() string     { return "inbox" }
func (Inbox) Tables() []string { return []string{"inbox"} }

func (Inbox) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.JobReportAdmitted:
		report, err := json.Marshal(e.Report)
		if err != nil {
			return err
		}
		return tx.Exec(ctx, `INSERT INTO inbox (input_id, session_id, job_id, status, report, replaces, time_created)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (session_id, input_id) DO NOTHING`,
			e.InputID, e.ParentSessionID, e.JobID, InputQueued, string(report), nullable(e.Replaces), tx.eventTime(ev))
	case events.JobReportConsumed:
		return consumeInput(ctx, tx, ev, e.ParentSessionID, e.InputID, e.MessageID)
	case events.UserMessageAppended:
		if e.InputID != "" {
			return consumeInput(ctx, tx, ev, e.SessionID, e.InputID, e.MessageID)
		}
	}
	return nil
}

// Inbox statuses (inbox.status).
const (
	InputQueued   = "queued"
	InputConsumed = "consumed"
)

func consumeInput(ctx context.Context, tx *Tx, ev events.Recorded, sessionID, inputID, messageID string) error {
	return tx.Exec(ctx, `UPDATE inbox SET status = ?, message_id = ?, time_consumed = ?
		WHERE session_id = ? AND input_id = ? AND status = ?`,
		InputConsumed, messageID, tx.eventTime(ev), sessionID, inputID, InputQueued)
}
