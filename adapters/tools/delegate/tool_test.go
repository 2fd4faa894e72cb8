package delegate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/delegate"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// fakeJobs is a test double of the Jobs port: it records what it was asked and answers what
// the test sets. The real port is the job runtime (commands/app).
type fakeJobs struct {
	delegated  []delegation.Request
	reconciled []delegation.Reconciliation
	asked      []string
	inv        tools.Invocation
	outcome    delegation.Outcome
	views      []delegation.JobView
	messages   []delegation.Message
	err        error
}

func (f *fakeJobs) Message(_ context.Context, inv tools.Invocation, m delegation.Message) (delegation.MessageOutcome, error) {
	f.inv = inv
	f.messages = append(f.messages, m)
	return delegation.MessageOutcome{Target: m.Target, InputID: "input_1"}, f.err
}

func (f *fakeJobs) Delegate(_ context.Context, inv tools.Invocation, req delegation.Request) (delegation.Outcome, error) {
	f.inv = inv
	f.delegated = append(f.delegated, req)
	return f.outcome, f.err
}

func (f *fakeJobs) Jobs(_ context.Context, sessionID, jobID string) ([]delegation.JobView, error) {
	f.asked = append(f.asked, sessionID+"/"+jobID)
	return f.views, f.err
}

func (f *fakeJobs) Reconcile(_ context.Context, inv tools.Invocation, r delegation.Reconciliation) (delegation.Outcome, error) {
	f.inv = inv
	f.reconciled = append(f.reconciled, r)
	return f.outcome, f.err
}

// call validates and executes one call as the turn driver does.
func call(t *testing.T, ctx context.Context, jobs *fakeJobs, name, args string) tools.Result {
	t.Helper()
	tl := byName(jobs)[name]
	p, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("Validate(%s): %v", args, err)
	}
	return tl.Execute(ctx, tools.Invocation{SessionID: "ses_parent", CallID: "call_1", Parsed: p})
}

// decoded is a result's Output and Details as JSON objects.
func decoded(t *testing.T, r tools.Result) (out, details map[string]any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Output), &out); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, r.Output)
	}
	if len(r.Metadata.Details) > 0 {
		if err := json.Unmarshal(r.Metadata.Details, &details); err != nil {
			t.Fatal(err)
		}
	}
	return out, details
}

func report(status string) *events.TaskReport {
	return &events.TaskReport{SchemaVersion: 2, JobID: "job_1", SessionID: "ses_child", ParentSessionID: "ses_parent",
		Agent: "explorer", Status: status, FinalText: "Found it in commands/turn/driver.go", ChangedPaths: []string{}}
}

// TestTaskForeground: a foreground task hands the normalized request to the port and shows
// the model the child's report and what to do next.
func TestTaskForeground(t *testing.T) {
	jobs := &fakeJobs{outcome: delegation.Outcome{JobID: "job_1", SessionID: "ses_child", Status: "completed", Report: report("completed")}}
	r := call(t, context.Background(), jobs, tools.NameTask,
		`{"agent":"explorer","objective":" Find the gap ","deliverable":"d","instructions":"i","success_evidence":"s"}`)
	if r.Outcome != tools.OutcomeCompleted || r.ErrorCode != "" {
		t.Fatalf("%+v", r)
	}
	if len(jobs.delegated) != 1 || jobs.delegated[0].Contract.Objective != "Find the gap" || jobs.inv.CallID != "call_1" ||
		jobs.inv.SessionID != "ses_parent" {
		t.Fatalf("port got %+v with %+v", jobs.delegated, jobs.inv)
	}
	out, d := decoded(t, r)
	rep, _ := out["report"].(map[string]any)
	if out["jobId"] != "job_1" || out["sessionId"] != "ses_child" || out["status"] != "completed" ||
		out["reportDelivery"] != "quiet" || out["background"] != false || rep["finalText"] != "Found it in commands/turn/driver.go" ||
		!strings.Contains(out["note"].(string), `task_id "ses_child"`) {
		t.Fatalf("output %s", r.Output)
	}
	if d["jobId"] != "job_1" || d["status"] != "completed" || d["reportDelivery"] != "quiet" {
		t.Fatalf("details %s", r.Metadata.Details)
	}
}

// TestTaskBackground: a background task returns the job at once; nextStep says the report
// arrives by itself, quiet says to read it with job.
func TestTaskBackground(t *testing.T) {
	jobs := &fakeJobs{outcome: delegation.Outcome{JobID: "job_2", SessionID: "ses_c2", Status: "queued"}}
	r := call(t, context.Background(), jobs, tools.NameTask, contractArgs(`"background":true`))
	out, _ := decoded(t, r)
	if r.Outcome != tools.OutcomeCompleted || out["reportDelivery"] != "nextStep" || out["report"] != nil ||
		!strings.Contains(out["note"].(string), "do not poll") || jobs.delegated[0].ReportDelivery != "nextStep" {
		t.Fatalf("nextStep: %s", r.Output)
	}
	r = call(t, context.Background(), jobs, tools.NameTask, contractArgs(`"background":true,"reportDelivery":"quiet"`))
	out, _ = decoded(t, r)
	if out["reportDelivery"] != "quiet" || !strings.Contains(out["note"].(string), `job {"jobID": "job_2"}`) {
		t.Fatalf("quiet: %s", r.Output)
	}
}

// TestTaskChildEndings: a failed child is a completed call with the child's status; an
// uncertain one is an uncertain call (never replayed) that points at job_reconcile.
func TestTaskChildEndings(t *testing.T) {
	jobs := &fakeJobs{outcome: delegation.Outcome{JobID: "job_1", SessionID: "ses_c", Status: "failed", Report: report("failed")}}
	r := call(t, context.Background(), jobs, tools.NameTask, contractArgs(""))
	out, _ := decoded(t, r)
	if r.Outcome != tools.OutcomeCompleted || out["status"] != "failed" || !strings.Contains(out["note"].(string), "ended failed") {
		t.Fatalf("failed: %+v", r)
	}
	jobs.outcome.Status = "uncertain"
	r = call(t, context.Background(), jobs, tools.NameTask, contractArgs(""))
	out, _ = decoded(t, r)
	if r.Outcome != tools.OutcomeUncertain || r.ErrorCode != delegate.CodeJobUncertain ||
		!strings.Contains(out["note"].(string), "job_reconcile") {
		t.Fatalf("uncertain: %+v", r)
	}
}

// TestTaskRefusedByPort: the ledger's refusals (not a delegate, a duplicate logical task)
// reach the model as the typed error, with the roster, and say nothing was delegated.
func TestTaskRefusedByPort(t *testing.T) {
	roster := delegation.Check(delegation.Request{Contract: events.DelegationContract{Agent: "build", Objective: "o",
		Deliverable: "d", Instructions: "i", SuccessEvidence: "s"}}, []string{"explorer"})
	jobs := &fakeJobs{err: roster}
	r := call(t, context.Background(), jobs, tools.NameTask, contractArgs(""))
	out, d := decoded(t, r)
	e, _ := out["error"].(map[string]any)
	if r.Outcome != tools.OutcomeError || r.ErrorCode != delegation.CodeNotDelegate || e["field"] != "agent" ||
		e["valid"].([]any)[0] != "explorer" || !strings.Contains(e["fix"].(string), "explorer") ||
		out["note"] != "Nothing was delegated." || d["code"] != delegation.CodeNotDelegate {
		t.Fatalf("%+v", r)
	}
}

// TestTaskStoreFailure: an untyped failure may have admitted the job: uncertain, with the
// advice to look before delegating again.
func TestTaskStoreFailure(t *testing.T) {
	jobs := &fakeJobs{err: errors.New("database is locked")}
	r := call(t, context.Background(), jobs, tools.NameTask, contractArgs(""))
	out, _ := decoded(t, r)
	e, _ := out["error"].(map[string]any)
	if r.Outcome != tools.OutcomeUncertain || r.ErrorCode != "internal" || !strings.Contains(e["message"].(string), "database is locked") ||
		!strings.Contains(e["fix"].(string), "call job") {
		t.Fatalf("%+v", r)
	}
}

// TestCancelledBeforeAsking: a cancelled call asks the port nothing.
func TestCancelledBeforeAsking(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	jobs := &fakeJobs{}
	for name, args := range map[string]string{tools.NameTask: contractArgs(""), tools.NameJob: `{}`,
		tools.NameJobReconcile: `{"jobID":"j","outcome":"failed","error":"e","authority":"a","evidence":"v"}`} {
		if r := call(t, ctx, jobs, name, args); r.Outcome != tools.OutcomeCancelled || r.ErrorCode != delegate.CodeCancelled {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if len(jobs.delegated)+len(jobs.asked)+len(jobs.reconciled) != 0 {
		t.Fatalf("the port was asked: %+v", jobs)
	}
}

// TestExecuteNotValidated: arguments Validate did not produce run nothing.
func TestExecuteNotValidated(t *testing.T) {
	jobs := &fakeJobs{}
	for name, tl := range byName(jobs) {
		r := tl.Execute(context.Background(), tools.Invocation{SessionID: "s", CallID: "c", Parsed: tools.Parsed{Args: "x"}})
		if r.ErrorCode != tools.CodeNotValidated {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

func view(id, status string) delegation.JobView {
	return delegation.JobView{JobState: events.JobState{JobID: id, ParentSessionID: "ses_parent", ChildSessionID: "ses_" + id,
		Agent: "explorer", Status: status, Background: true, ReportDelivery: "quiet"},
		Contract: events.DelegationContract{Agent: "explorer", Objective: "Objective of " + id}, TimeCreated: "2026-12-02T08:00:00Z"}
}

// TestJob: job reads the caller's jobs (the port is asked for the invocation's session), shows
// each one's status, objective and report, and points at job_reconcile for uncertain ones.
func TestJob(t *testing.T) {
	done := view("job_1", "completed")
	done.Result = report("completed")
	jobs := &fakeJobs{views: []delegation.JobView{done, view("job_2", "uncertain")}}
	r := call(t, context.Background(), jobs, tools.NameJob, `{}`)
	out, d := decoded(t, r)
	list, _ := out["jobs"].([]any)
	if r.Outcome != tools.OutcomeCompleted || len(list) != 2 || jobs.asked[0] != "ses_parent/" || d["jobs"] != 2.0 {
		t.Fatalf("%+v asked %v", r, jobs.asked)
	}
	first := list[0].(map[string]any)
	if first["objective"] != "Objective of job_1" || first["sessionId"] != "ses_job_1" ||
		first["report"].(map[string]any)["status"] != "completed" || !strings.Contains(out["note"].(string), "job_reconcile") {
		t.Fatalf("%s", r.Output)
	}

	jobs = &fakeJobs{views: []delegation.JobView{view("job_2", "running")}}
	r = call(t, context.Background(), jobs, tools.NameJob, `{"jobID":"job_2"}`)
	_, d = decoded(t, r)
	if jobs.asked[0] != "ses_parent/job_2" || d["jobId"] != "job_2" || d["status"] != "running" {
		t.Fatalf("one job: %+v", r)
	}

	jobs = &fakeJobs{}
	r = call(t, context.Background(), jobs, tools.NameJob, `{}`)
	if out, _ := decoded(t, r); r.Outcome != tools.OutcomeCompleted || len(out["jobs"].([]any)) != 0 ||
		out["note"] != "This session has started no jobs." {
		t.Fatalf("none: %s", r.Output)
	}
}

// TestJobNotFound: a job id of no job of this session is a typed refusal; a job resolves only
// for the session whose task created it.
func TestJobNotFound(t *testing.T) {
	r := call(t, context.Background(), &fakeJobs{}, tools.NameJob, `{"jobID":"job_other"}`)
	out, _ := decoded(t, r)
	e, _ := out["error"].(map[string]any)
	if r.Outcome != tools.OutcomeError || r.ErrorCode != delegation.CodeJobNotFound || e["id"] != "job_other" ||
		e["field"] != "jobID" {
		t.Fatalf("%+v", r)
	}
	// A read that fails changed nothing: an error, not uncertain.
	r = call(t, context.Background(), &fakeJobs{err: errors.New("disk")}, tools.NameJob, `{}`)
	if r.Outcome != tools.OutcomeError || r.ErrorCode != "internal" {
		t.Fatalf("failed read: %+v", r)
	}
}

// TestReconcile: the validated reconciliation reaches the port as sent; the answer says the
// job was settled on the authority's word and nothing re-ran; the ledger's refusal (the job
// is not uncertain) is typed; a lost reply is uncertain.
func TestReconcile(t *testing.T) {
	args := `{"jobID":"job_2","outcome":"completed","finalText":"deployed","authority":"CI run 123","evidence":"status=success"}`
	jobs := &fakeJobs{outcome: delegation.Outcome{JobID: "job_2", SessionID: "ses_c", Status: "completed"}}
	r := call(t, context.Background(), jobs, tools.NameJobReconcile, args)
	out, d := decoded(t, r)
	want := delegation.Reconciliation{JobID: "job_2", Outcome: "completed", FinalText: "deployed", Authority: "CI run 123", Evidence: "status=success"}
	if r.Outcome != tools.OutcomeCompleted || len(jobs.reconciled) != 1 || jobs.reconciled[0] != want ||
		out["status"] != "completed" || !strings.Contains(out["note"].(string), "CI run 123's word; nothing was re-run") ||
		d["jobId"] != "job_2" {
		t.Fatalf("%+v", r)
	}
	notUncertain := domain.NewError(domain.CodeTerminalState, "job job_2 is completed, not uncertain", "only an uncertain job is reconciled")
	r = call(t, context.Background(), &fakeJobs{err: notUncertain}, tools.NameJobReconcile, args)
	out, _ = decoded(t, r)
	if r.Outcome != tools.OutcomeError || r.ErrorCode != domain.CodeTerminalState || out["note"] != "Nothing was reconciled." {
		t.Fatalf("refused: %+v", r)
	}
	r = call(t, context.Background(), &fakeJobs{err: errors.New("connection reset")}, tools.NameJobReconcile, args)
	if r.Outcome != tools.OutcomeUncertain {
		t.Fatalf("lost reply: %+v", r)
	}
}
