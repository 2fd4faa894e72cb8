package queries

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Jobs lists the jobs a parent session delegated, in admission order, or every session's
// jobs when sessionID is "" (zuno job list), read from the agent_job read model.
func (q *Queries) Jobs(ctx context.Context, sessionID string) ([]delegation.JobView, error) {
	if sessionID != "" {
		if err := q.RequireSession(ctx, sessionID); err != nil {
			return nil, err
		}
	}
	query, args := projections.JobsQuery(sessionID)
	t, err := q.SQL(ctx, query, 0, args...)
	if err != nil {
		return nil, err
	}
	out := make([]delegation.JobView, 0, len(t.Rows))
	for _, row := range t.Rows {
		v, err := jobView(t.Columns, row)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Job reads one job by id (zuno job show): its state, contract, result and error.
func (q *Queries) Job(ctx context.Context, jobID string) (delegation.JobView, error) {
	t, err := q.SQL(ctx, projections.JobQuery, 1, jobID)
	if err != nil {
		return delegation.JobView{}, err
	}
	if len(t.Rows) == 0 {
		return delegation.JobView{}, &NotFoundError{Message: fmt.Sprintf(
			"job %s does not exist; zuno job list shows the jobs (--session S: one parent session's)", jobID)}
	}
	return jobView(t.Columns, t.Rows[0])
}

// SessionJob reads one job a parent session delegated: a job of another parent is not found,
// as one never admitted is (the HTTP face names the session in the path).
func (q *Queries) SessionJob(ctx context.Context, sessionID, jobID string) (delegation.JobView, error) {
	if err := q.RequireSession(ctx, sessionID); err != nil {
		return delegation.JobView{}, err
	}
	v, err := q.Job(ctx, jobID)
	if err == nil && v.ParentSessionID != sessionID {
		err = &NotFoundError{Message: fmt.Sprintf("session %s delegated no job %s; its jobs are listed at GET /api/sessions/%s/jobs", sessionID, jobID, sessionID)}
	}
	return v, err
}

// InboxInput is one report in a parent session's inbox.
type InboxInput struct {
	InputID   string            `json:"inputId"`
	SessionID string            `json:"sessionId"`
	JobID     string            `json:"jobId"`
	Status    string            `json:"status"`
	Report    events.TaskReport `json:"report"`
	// Replaces names the input of the report this one replaced (a reconciliation's).
	Replaces     string `json:"replaces,omitempty"`
	MessageID    string `json:"messageId,omitempty"`
	TimeCreated  string `json:"timeCreated"`
	TimeConsumed string `json:"timeConsumed,omitempty"`
}

// Inbox lists the reports a parent session received, in the order they arrived, queued or
// consumed (zuno job inbox), read from the inbox read model.
func (q *Queries) Inbox(ctx context.Context, sessionID string) ([]InboxInput, error) {
	if err := q.RequireSession(ctx, sessionID); err != nil {
		return nil, err
	}
	t, err := q.SQL(ctx, projections.InboxQuery, 0, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]InboxInput, 0, len(t.Rows))
	for _, row := range t.Rows {
		r := rowReader{columns: t.Columns, row: row}
		in := InboxInput{InputID: r.text("input_id"), SessionID: r.text("session_id"), JobID: r.text("job_id"),
			Status: r.text("status"), Replaces: r.text("replaces"), MessageID: r.text("message_id"),
			TimeCreated: r.text("time_created"), TimeConsumed: r.text("time_consumed")}
		r.json("report", &in.Report)
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, in)
	}
	return out, nil
}

// jobView reads an agent_job row.
func jobView(columns []string, row []any) (delegation.JobView, error) {
	r := rowReader{columns: columns, row: row}
	v := delegation.JobView{JobState: events.JobState{JobID: r.text("id"), ParentSessionID: r.text("parent_session_id"),
		ChildSessionID: r.text("child_session_id"), Agent: r.text("agent"), Status: r.text("status"),
		Background: r.text("background") == "1", ReportDelivery: r.text("report_delivery"),
		LogicalKey: r.text("logical_key"), ReportInputID: r.text("report_input_id")},
		Error: r.text("error"), TimeCreated: r.text("time_created")}
	r.json("contract", &v.Contract)
	if r.present("result") {
		v.Result = &events.TaskReport{}
		r.json("result", v.Result)
	}
	return v, r.err
}

// rowReader reads a row's values by column name: text as the read models hold it ("" for
// NULL), and JSON documents stored as text. The first problem is kept in err.
type rowReader struct {
	columns []string
	row     []any
	err     error
}

func (r *rowReader) value(column string) any {
	for i, c := range r.columns {
		if c == column {
			return r.row[i]
		}
	}
	if r.err == nil {
		r.err = fmt.Errorf("read model row has no column %s (columns %v)", column, r.columns)
	}
	return nil
}

func (r *rowReader) present(column string) bool { return r.value(column) != nil }

func (r *rowReader) text(column string) string {
	v := r.value(column)
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func (r *rowReader) json(column string, into any) {
	doc := r.text(column)
	if doc == "" || r.err != nil {
		return
	}
	if err := json.Unmarshal([]byte(doc), into); err != nil {
		r.err = fmt.Errorf("read model column %s is not the JSON it should hold: %w", column, err)
	}
}
