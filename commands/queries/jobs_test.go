package queries_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/events"
)

// appendJobs appends one command's job events to the parent's job ledger, as the job runtime
// does: each carries the job's state after it.
func (r *rig) appendJobs(parent, cmd string, at time.Time, ps ...events.Payload) {
	r.t.Helper()
	md := events.Metadata{CommandID: cmd, Actor: "host", CorrelationID: parent, Time: at}
	evs := make([]events.Event, len(ps))
	for i, p := range ps {
		ev, err := events.Encode(events.DeriveID(cmd, i), p, md)
		if err != nil {
			r.t.Fatal(err)
		}
		evs[i] = ev
	}
	stream := "jobs-" + parent
	if _, ok := ps[0].(events.UserMessageAppended); ok {
		stream = "session-" + parent
	}
	if _, err := r.store.Append(context.Background(), stream, events.Any, evs...); err != nil {
		r.t.Fatal(err)
	}
}

// The jobs of a parent, one job, and the parent's inbox, as zuno job list, show and inbox read
// them: from the read models, which the queries bring up to the log's head.
func TestComponentJobs(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.create(r.handlers, "ses_p", "parent", "/ws/p")
	r.create(r.handlers, "ses_q", "other parent", "/ws/q")
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	contract := events.DelegationContract{Agent: "explorer", Objective: "map the parser", Deliverable: "a report",
		Instructions: "read only", SuccessEvidence: "citations", Scope: &events.ContractScope{Include: []string{"parser/"}}}
	a := events.JobState{JobID: "job_a", ParentSessionID: "ses_p", ChildSessionID: "ses_ca", Agent: "explorer",
		Status: events.JobQueued, Background: true, ReportDelivery: events.DeliveryNextStep, LogicalKey: "lk_a"}
	b := events.JobState{JobID: "job_b", ParentSessionID: "ses_p", ChildSessionID: "ses_cb", Agent: "reviewer",
		Status: events.JobQueued, ReportDelivery: events.DeliveryQuiet, LogicalKey: "lk_b"}
	q := events.JobState{JobID: "job_q", ParentSessionID: "ses_q", ChildSessionID: "ses_cq", Agent: "explorer",
		Status: events.JobQueued, Background: true, ReportDelivery: events.DeliveryQuiet, LogicalKey: "lk_q"}
	r.appendJobs("ses_p", "admit-a", at, events.JobAdmitted{JobState: a, Contract: contract, ParentTurnID: "turn_1", ToolCallID: "call_1"})
	r.appendJobs("ses_p", "admit-b", at.Add(time.Second), events.JobAdmitted{JobState: b, Contract: contract, ParentTurnID: "turn_1", ToolCallID: "call_2"})
	r.appendJobs("ses_q", "admit-q", at.Add(2*time.Second), events.JobAdmitted{JobState: q, Contract: contract, ParentTurnID: "turn_9", ToolCallID: "call_9"})
	a.Status, a.ReportInputID = events.JobCompleted, "in_a"
	report := events.TaskReport{SchemaVersion: 2, JobID: "job_a", SessionID: "ses_ca", ParentSessionID: "ses_p", Agent: "explorer",
		Status: events.JobCompleted, FinalText: "the parser drops the last token", ChangedPaths: []string{"parser.go"},
		VerificationRecords: []events.TaskVerification{}, UncertainSideEffects: []string{}, EvidenceErrors: []string{}}
	r.appendJobs("ses_p", "settle-a", at.Add(3*time.Second), events.JobSettled{JobState: a, Result: &report},
		events.JobReportAdmitted{JobState: a, InputID: "in_a", Report: report})

	jobs, err := r.q.Jobs(ctx, "ses_p")
	if err != nil {
		t.Fatal(err)
	}
	wantA := delegation.JobView{JobState: a, Contract: contract, Result: &report, TimeCreated: "2026-12-02T08:00:00.000000000Z"}
	wantB := delegation.JobView{JobState: b, Contract: contract, TimeCreated: "2026-12-02T08:00:01.000000000Z"}
	if !reflect.DeepEqual(jobs, []delegation.JobView{wantA, wantB}) {
		t.Fatalf("jobs of ses_p:\n got %+v\nwant %+v", jobs, []delegation.JobView{wantA, wantB})
	}
	all, err := r.q.Jobs(ctx, "")
	if err != nil || len(all) != 3 || all[2].JobID != "job_q" {
		t.Fatalf("every job: %+v %v", all, err)
	}
	got, err := r.q.Job(ctx, "job_a")
	if err != nil || !reflect.DeepEqual(got, wantA) {
		t.Fatalf("job_a: %+v %v", got, err)
	}

	inbox, err := r.q.Inbox(ctx, "ses_p")
	want := []queriesInput{{"in_a", "job_a", "queued", "", "the parser drops the last token"}}
	if err != nil || !reflect.DeepEqual(inputs(inbox), want) {
		t.Fatalf("inbox: %+v %v", inbox, err)
	}
	r.appendJobs("ses_p", "deliver-a", at.Add(4*time.Second), events.UserMessageAppended{SessionID: "ses_p", MessageID: "msg_a",
		Text: "job_a completed", InputID: "in_a", TaskReport: &report})
	inbox, err = r.q.Inbox(ctx, "ses_p")
	want[0].status, want[0].message = "consumed", "msg_a"
	if err != nil || !reflect.DeepEqual(inputs(inbox), want) || inbox[0].TimeConsumed != "2026-12-02T08:00:04.000000000Z" {
		t.Fatalf("inbox after the report was delivered: %+v %v", inbox, err)
	}
	if other, err := r.q.Inbox(ctx, "ses_q"); err != nil || len(other) != 0 {
		t.Fatalf("inbox of ses_q: %+v %v", other, err)
	}

	// Unknown subjects are typed: a job by id, a session's jobs and inbox.
	_, err = r.q.Job(ctx, "job_nope")
	code(t, err, "not_found")
	_, err = r.q.Job(ctx, "job_a' OR '1'='1")
	code(t, err, "not_found")
	_, err = r.q.Jobs(ctx, "ses_nope")
	code(t, err, domain.CodeSessionNotFound)
	_, err = r.q.Inbox(ctx, "ses_nope")
	code(t, err, domain.CodeSessionNotFound)
}

// queriesInput is the part of an inbox input the test compares.
type queriesInput struct{ input, job, status, message, finalText string }

func inputs(in []queries.InboxInput) []queriesInput {
	out := []queriesInput{}
	for _, i := range in {
		out = append(out, queriesInput{i.InputID, i.JobID, i.Status, i.MessageID, i.Report.FinalText})
	}
	return out
}
