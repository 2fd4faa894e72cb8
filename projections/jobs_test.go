package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/events"
)

// jobLog is one parent session's delegation as the job runtime records it: the parent
// session stream, and its job ledger (jobs-<parent>), whose events the real ledger decides
// (domain/job), so every one is an event the runtime could append. Job, child and input ids
// end in tag, as the runtime makes them unique.
//
//   - job_a: background, nextStep; runs, completes, and its report is admitted with the
//     settlement, delivered as the parent's user message, then marked consumed.
//   - job_b: background, quiet; its process is lost while it runs: a restart settles it
//     uncertain with no report, and job_reconcile says it completed.
//   - job_c: foreground (an attached, quiet job); completes, and no report reaches the inbox.
//   - job_d: background, nextStep; settled uncertain with its report, which the parent
//     consumes; job_reconcile says it failed, with the replacement report in the same append.
//   - job_e: background, nextStep; still queued at a restart, which cancels it and reports so.
type jobLog struct {
	parent, tag string
	reports     map[string]events.TaskReport // by job, the last report each was given
	ledger      job.Ledger
}

func newJobLog(parent, tag string) *jobLog {
	return &jobLog{parent: parent, tag: tag, reports: map[string]events.TaskReport{}}
}

func (d *jobLog) id(s string) string { return s + d.tag }

// decide runs one command on the ledger and evolves it with the events decided.
func (d *jobLog) decide(t testing.TB, cmd any) []events.Payload {
	t.Helper()
	ps, err := job.Decide(&d.ledger, cmd)
	if err != nil {
		t.Fatalf("ledger refused %T: %v", cmd, err)
	}
	for _, p := range ps {
		if err := d.ledger.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

// admit is the task call that admits a job.
func (d *jobLog) admit(name string, background bool, delivery, call string) job.Admit {
	agent := "explorer"
	if name == "job_c" {
		agent = "reviewer"
	}
	contract := events.DelegationContract{Agent: agent, Objective: "investigate " + d.id(name), Deliverable: "a report",
		Instructions: "read only", SuccessEvidence: "file:line citations",
		Scope: &events.ContractScope{Include: []string{"lane/" + name}}}
	return job.Admit{JobAdmitted: events.JobAdmitted{JobState: events.JobState{JobID: d.id(name), ParentSessionID: d.parent,
		ChildSessionID: d.id("ses_child" + strings.TrimPrefix(name, "job")), Agent: agent, Background: background,
		ReportDelivery: delivery, LogicalKey: delegation.LogicalKey(contract)},
		Contract: contract, ParentTurnID: d.id("turn_1"), ToolCallID: call,
		WorkContext: &events.WorkContext{SchemaVersion: 1, PlanID: "plan_1", PlanRevision: 3, PlanStepID: "investigate"}}}
}

// report is the job's report as the host makes it, with the status it settles with.
func (d *jobLog) report(name, status, final string, uncertain ...string) *events.TaskReport {
	j := d.ledger.Job(d.id(name))
	if uncertain == nil {
		uncertain = []string{}
	}
	r := events.TaskReport{SchemaVersion: 2, JobID: j.JobID, SessionID: j.ChildSessionID, ParentSessionID: d.parent,
		Agent: j.Agent, Status: status, FinalText: final, Usage: events.Usage{InputTokens: 1200, OutputTokens: 80},
		WorkContext:  &events.WorkContext{SchemaVersion: 1, PlanID: "plan_1", PlanRevision: 3, PlanStepID: "investigate"},
		ChangedPaths: []string{}, VerificationRecords: []events.TaskVerification{{ReceiptID: "rcp_1", CallID: "call_9",
			Command: "go test ./...", Verdict: "passed", Authority: "authoritative"}},
		UncertainSideEffects: uncertain, EvidenceErrors: []string{}}
	d.reports[name] = r
	return &r
}

// reconciledB is job_b's result after job_reconcile: its settlement recorded no report, and a
// quiet job's reconciliation records none, so the projector makes it as the host does.
func (d *jobLog) reconciledB() events.TaskReport {
	return events.TaskReport{SchemaVersion: 2, JobID: d.id("job_b"), SessionID: d.id("ses_child_b"), ParentSessionID: d.parent,
		Agent: "explorer", Status: events.JobCompleted, FinalText: "CI run 123 confirms the lane finished", ChangedPaths: []string{},
		VerificationRecords: []events.TaskVerification{}, UncertainSideEffects: []string{}, EvidenceErrors: []string{}}
}

// steps returns the delegation's commands in log order.
func (d *jobLog) steps(t testing.TB) []turnStep {
	jobs, session := "jobs-"+d.parent, "session-"+d.parent
	var steps []turnStep
	add := func(name string, cmds ...any) {
		var ps []events.Payload
		for _, c := range cmds {
			ps = append(ps, d.decide(t, c)...)
		}
		steps = append(steps, turnStep{name: name, stream: jobs, payloads: ps})
	}
	const bg, fg = true, false
	nx, qt := events.DeliveryNextStep, events.DeliveryQuiet
	owner := events.TurnOwner{Host: "h", PID: 7}
	reconcile := func(name, outcome, final, errText string, result events.TaskReport, input string) job.Reconcile {
		rec := job.Reconcile{JobReconciled: events.JobReconciled{Outcome: outcome, FinalText: final, Error: errText,
			Authority: "an authority", Evidence: "its record", ToolCallID: "call_r" + name}, Result: result, InputID: input}
		rec.JobID = d.id(name)
		return rec
	}

	steps = append(steps, turnStep{name: "created", stream: session, payloads: []events.Payload{
		&events.SessionCreated{SessionID: d.parent, Title: "Parallel delegation", Agent: "orchestrator"}}})
	add("admit-a-b", d.admit("job_a", bg, nx, "call_1"), d.admit("job_b", bg, qt, "call_2"))
	add("admit-c", d.admit("job_c", fg, qt, "call_3"))
	add("start-a", job.Start{JobID: d.id("job_a"), Owner: owner})
	add("start-b", job.Start{JobID: d.id("job_b"), Owner: owner})
	add("start-c", job.Start{JobID: d.id("job_c"), Owner: owner})
	add("settle-c", job.Settle{JobID: d.id("job_c"), Status: events.JobCompleted, Result: d.report("job_c", events.JobCompleted, "reviewed: no findings")})
	ra := d.report("job_a", events.JobCompleted, "lane a: the parser drops the last token")
	add("settle-a", job.Settle{JobID: d.id("job_a"), Status: events.JobCompleted, Result: ra, InputID: d.id("in_a")})
	steps = append(steps, turnStep{name: "deliver-a", stream: session, payloads: []events.Payload{
		&events.UserMessageAppended{SessionID: d.parent, MessageID: d.id("msg_a"), Text: "job_a completed", InputID: d.id("in_a"), TaskReport: ra}}})
	add("consumed-a", job.Consume{JobID: d.id("job_a"), InputID: d.id("in_a"), MessageID: d.id("msg_a")})
	add("settle-b", job.Settle{JobID: d.id("job_b"), Status: events.JobUncertain, Error: "uncertain: the process running the child was lost", Recovered: true})
	add("admit-d", d.admit("job_d", bg, nx, "call_4"))
	add("start-d", job.Start{JobID: d.id("job_d"), Owner: owner})
	add("settle-d", job.Settle{JobID: d.id("job_d"), Status: events.JobUncertain, Error: "uncertain: the deploy may have run", Recovered: true,
		Result: d.report("job_d", events.JobUncertain, "", "shell call_12: deploy ./release.sh"), InputID: d.id("in_d")})
	add("consumed-d", job.Consume{JobID: d.id("job_d"), InputID: d.id("in_d"), MessageID: d.id("msg_d")})
	add("reconcile-b", reconcile("job_b", events.JobCompleted, "CI run 123 confirms the lane finished", "", d.reconciledB(), ""))
	add("reconcile-d", reconcile("job_d", events.JobFailed, "", "deploy API: rolled back",
		*d.report("job_d", events.JobFailed, "", "shell call_12: deploy ./release.sh"), d.id("in_d2")))
	add("admit-e", d.admit("job_e", bg, nx, "call_5"))
	add("restart", job.Settle{JobID: d.id("job_e"), Status: events.JobCancelled, Recovered: true,
		Error: "cancelled: the job had not started when its process ended", InputID: d.id("in_e"),
		Result: d.report("job_e", events.JobCancelled, "")})
	return steps
}

// jobScenario writes n delegations (parents "ses_parent_NNNN") and returns the events written.
func jobScenario(t testing.TB, store appender, n int) int {
	t.Helper()
	clock, written := &turnClock{}, 0
	for i := range n {
		parent := fmt.Sprintf("ses_parent_%04d", i)
		written += writeSteps(t, store, parent, clock, newJobLog(parent, "@"+parent).steps(t), nil)
	}
	return written
}

// jobRows and inboxRows read a parent's jobs and inbox as the tests compare them.
const (
	jobRows = `SELECT id, status, background, report_delivery, COALESCE(report_input_id, '-'),
			COALESCE(json_extract(result, '$.status'), '-'), COALESCE(json_extract(result, '$.finalText'), '-'), COALESCE(error, '-')
		FROM agent_job WHERE parent_session_id = ? ORDER BY time_created, id`
	inboxRows = `SELECT input_id, job_id, status, COALESCE(replaces, '-'), COALESCE(message_id, '-'),
			json_extract(report, '$.status'), CASE WHEN time_consumed IS NULL THEN 'waiting' ELSE 'taken' END
		FROM inbox WHERE session_id = ? ORDER BY time_created, input_id`
)

// testJobTransitions follows a delegation live, one command at a time, and checks the job rows
// and the parent's inbox after every step: the state each event leaves.
func testJobTransitions(t *testing.T, e *env) {
	ctx := context.Background()
	const parent = "ses_parent"
	const (
		aQueued     = "job_a|queued|1|nextStep|-|-|-|-"
		bQueued     = "job_b|queued|1|quiet|-|-|-|-"
		cQueued     = "job_c|queued|0|quiet|-|-|-|-"
		aRunning    = "job_a|running|1|nextStep|-|-|-|-"
		bRunning    = "job_b|running|1|quiet|-|-|-|-"
		cRunning    = "job_c|running|0|quiet|-|-|-|-"
		cDone       = "job_c|completed|0|quiet|-|completed|reviewed: no findings|-"
		aDone       = "job_a|completed|1|nextStep|in_a|completed|lane a: the parser drops the last token|-"
		bLost       = "job_b|uncertain|1|quiet|-|-|-|uncertain: the process running the child was lost"
		dRunning    = "job_d|running|1|nextStep|-|-|-|-"
		dLost       = "job_d|uncertain|1|nextStep|in_d|uncertain||uncertain: the deploy may have run"
		bDone       = "job_b|completed|1|quiet|-|completed|CI run 123 confirms the lane finished|-"
		dFailed     = "job_d|failed|1|nextStep|in_d2|failed||deploy API: rolled back"
		eQueued     = "job_e|queued|1|nextStep|-|-|-|-"
		eCancel     = "job_e|cancelled|1|nextStep|in_e|cancelled||cancelled: the job had not started when its process ended"
		aQueuedIn   = "in_a|job_a|queued|-|-|completed|waiting"
		aConsumedIn = "in_a|job_a|consumed|-|msg_a|completed|taken"
		dQueuedIn   = "in_d|job_d|queued|-|-|uncertain|waiting"
		dConsumedIn = "in_d|job_d|consumed|-|msg_d|uncertain|taken"
		d2QueuedIn  = "in_d2|job_d|queued|in_d|-|failed|waiting"
	)
	want := map[string]struct{ jobs, inbox []string }{
		"created":     {nil, nil},
		"admit-a-b":   {[]string{aQueued, bQueued}, nil},
		"admit-c":     {[]string{aQueued, bQueued, cQueued}, nil},
		"start-a":     {[]string{aRunning, bQueued, cQueued}, nil},
		"start-b":     {[]string{aRunning, bRunning, cQueued}, nil},
		"start-c":     {[]string{aRunning, bRunning, cRunning}, nil},
		"settle-c":    {[]string{aRunning, bRunning, cDone}, nil},
		"settle-a":    {[]string{aDone, bRunning, cDone}, []string{aQueuedIn}},
		"deliver-a":   {[]string{aDone, bRunning, cDone}, []string{aConsumedIn}},
		"consumed-a":  {[]string{aDone, bRunning, cDone}, []string{aConsumedIn}},
		"settle-b":    {[]string{aDone, bLost, cDone}, []string{aConsumedIn}},
		"admit-d":     {[]string{aDone, bLost, cDone, "job_d|queued|1|nextStep|-|-|-|-"}, []string{aConsumedIn}},
		"start-d":     {[]string{aDone, bLost, cDone, dRunning}, []string{aConsumedIn}},
		"settle-d":    {[]string{aDone, bLost, cDone, dLost}, []string{aConsumedIn, dQueuedIn}},
		"consumed-d":  {[]string{aDone, bLost, cDone, dLost}, []string{aConsumedIn, dConsumedIn}},
		"reconcile-b": {[]string{aDone, bDone, cDone, dLost}, []string{aConsumedIn, dConsumedIn}},
		"reconcile-d": {[]string{aDone, bDone, cDone, dFailed}, []string{aConsumedIn, dConsumedIn, d2QueuedIn}},
		"admit-e":     {[]string{aDone, bDone, cDone, dFailed, eQueued}, []string{aConsumedIn, dConsumedIn, d2QueuedIn}},
		"restart": {[]string{aDone, bDone, cDone, dFailed, eCancel},
			[]string{aConsumedIn, dConsumedIn, d2QueuedIn, "in_e|job_e|queued|-|-|cancelled|waiting"}},
	}
	d := newJobLog(parent, "")
	steps := d.steps(t)
	seen := map[string]bool{}
	for _, st := range steps {
		for _, p := range st.payloads {
			seen[p.EventType()] = true
		}
	}
	for _, typ := range []string{events.TypeJobAdmitted, events.TypeJobStarted, events.TypeJobSettled, events.TypeJobReportAdmitted,
		events.TypeJobReportConsumed, events.TypeJobReconciled, events.TypeUserMessageAppended} {
		if !seen[typ] {
			t.Fatalf("the delegation fixture writes no %s", typ)
		}
	}
	checked := 0
	writeSteps(t, e.store, parent, &turnClock{}, steps, func(step string) {
		if _, err := e.runner.CatchUp(ctx); err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
		w, ok := want[step]
		if !ok {
			t.Fatalf("no expected rows after %s", step)
		}
		checked++
		wantRows(t, "jobs after "+step, e.query(t, jobRows, parent), w.jobs)
		wantRows(t, "inbox after "+step, e.query(t, inboxRows, parent), w.inbox)
	})
	if checked != len(want) {
		t.Fatalf("checked %d of %d steps", checked, len(want))
	}

	// Whole documents, the same text on both databases: a settlement's report, the one a
	// reconciliation made of the state alone, a replacement, and the contract.
	doc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wantRows(t, "job_a result", e.query(t, `SELECT result FROM agent_job WHERE id = 'job_a'`), []string{doc(d.reports["job_a"])})
	wantRows(t, "job_d result", e.query(t, `SELECT result FROM agent_job WHERE id = 'job_d'`), []string{doc(d.reports["job_d"])})
	wantRows(t, "job_b result", e.query(t, `SELECT result FROM agent_job WHERE id = 'job_b'`), []string{doc(d.reconciledB())})
	wantRows(t, "inbox report", e.query(t, `SELECT report FROM inbox WHERE input_id = 'in_a'`), []string{doc(d.reports["job_a"])})
	admitted := steps[1].payloads[0].(events.JobAdmitted)
	wantRows(t, "job_a row", e.query(t, `SELECT child_session_id, agent, logical_key, contract, parent_turn_id, tool_call_id
		FROM agent_job WHERE id = 'job_a'`), []string{"ses_child_a|explorer|" + admitted.LogicalKey + "|" + doc(admitted.Contract) + "|turn_1|call_1"})
	wantRows(t, "times", e.query(t, `SELECT id FROM agent_job j WHERE parent_session_id = ?
			AND time_created = (SELECT MIN(time) FROM event WHERE aggregate_id = ? AND json_extract(data, '$.jobId') = j.id)
			AND time_updated = (SELECT MAX(time) FROM event WHERE aggregate_id = ? AND json_extract(data, '$.jobId') = j.id)
		ORDER BY id`, parent, parent, parent), []string{"job_a", "job_b", "job_c", "job_d", "job_e"})
	wantRows(t, "consumed when the message held it", e.query(t, `SELECT i.input_id FROM inbox i JOIN event ev
			ON ev.aggregate_id = i.session_id AND ev.type = 'session.user_message.appended.1' AND json_extract(ev.data, '$.inputId') = i.input_id
		WHERE i.time_consumed = ev.time`), []string{"in_a"})
}

func TestJobTransitionsSQLite(t *testing.T)   { testJobTransitions(t, sqliteEnv(t)) }
func TestJobTransitionsPostgres(t *testing.T) { testJobTransitions(t, postgresEnv(t)) }

// The seeds' evidence query of a parent's jobs (seedJobs), verbatim through `zuno db`'s
// path (UserQuery: the reader connection, its checks): one row per job in admission order,
// result the report's JSON text, the same on both databases.
func testSeedJobQuery(t *testing.T, e *env) {
	ctx := context.Background()
	d := newJobLog("ses_p", "")
	writeSteps(t, e.store, "ses_p", &turnClock{}, d.steps(t), nil)
	jobScenario(t, e.store, 1) // another parent's jobs, which the query leaves out
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := userRows(e.rm, ctx, seedSQL(seedJobs, "ses_p"), readmodel.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Columns, ",") != "id,status,report_delivery,report_input_id,result" {
		t.Fatalf("columns %v", res.Columns)
	}
	doc := func(job string) string {
		b, _ := json.Marshal(d.reports[job])
		return string(b)
	}
	reconciledB, _ := json.Marshal(d.reconciledB())
	wantRows(t, "seed jobs", rowsText(res.Rows), []string{
		"job_a|completed|nextStep|in_a|" + doc("job_a"),
		"job_b|completed|quiet|NULL|" + string(reconciledB),
		"job_c|completed|quiet|NULL|" + doc("job_c"),
		"job_d|failed|nextStep|in_d2|" + doc("job_d"),
		"job_e|cancelled|nextStep|in_e|" + doc("job_e"),
	})
	for _, row := range res.Rows {
		var r events.TaskReport
		if s, ok := row[4].(string); !ok || json.Unmarshal([]byte(s), &r) != nil || r.JobID != row[0] || r.Status != row[1] {
			t.Fatalf("result of %v is not its task report: %#v", row[0], row[4])
		}
	}
	// The report's fields read with json_extract alike on both databases.
	res, err = userRows(e.rm, ctx, `SELECT id, json_extract(result, '$.workContext.planStepId') AS step,
		json_extract(result, '$.verificationRecords[0].verdict') AS verdict FROM agent_job
		WHERE parent_session_id = 'ses_p' AND result IS NOT NULL ORDER BY time_created, id`, readmodel.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "json_extract of result", rowsText(res.Rows), []string{
		"job_a|investigate|passed", "job_b|NULL|NULL", "job_c|investigate|passed", "job_d|investigate|passed",
		"job_e|investigate|passed"})
	// zuno db reads the inbox too (on Postgres, as the reader role).
	res, err = userRows(e.rm, ctx, `SELECT input_id, status, replaces FROM inbox WHERE session_id = 'ses_p'
		ORDER BY time_created, input_id`, readmodel.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "inbox", rowsText(res.Rows), []string{"in_a|consumed|NULL", "in_d|consumed|NULL", "in_d2|queued|in_d", "in_e|queued|NULL"})
}

func TestSeedJobQuerySQLite(t *testing.T)   { testSeedJobQuery(t, sqliteEnv(t)) }
func TestSeedJobQueryPostgres(t *testing.T) { testSeedJobQuery(t, postgresEnv(t)) }

// A reconciliation's result is the report its event carries (the host made it from the
// authority's word), not the settlement's it replaces, for a quiet job too, whose log records
// no replacement report.
func TestJobReconciledResult(t *testing.T) {
	wc := &events.WorkContext{SchemaVersion: 1, PlanID: "plan_1", PlanRevision: 2, PlanStepID: "deploy"}
	usage := events.Usage{InputTokens: 900, OutputTokens: 40}
	for _, tc := range []struct {
		name               string
		settled            *events.TaskReport
		outcome, final, er string
		want               events.TaskReport
	}{
		{name: "completed, after a settlement with a report",
			settled: &events.TaskReport{SchemaVersion: 2, WorkContext: wc, Usage: usage, Status: events.JobUncertain,
				UncertainSideEffects: []string{"call_3 (shell) may or may not have taken effect"}},
			outcome: events.JobCompleted, final: "CI run 7 shows the deploy finished",
			want: events.TaskReport{WorkContext: wc, Usage: usage, Status: events.JobCompleted, FinalText: "CI run 7 shows the deploy finished",
				EvidenceErrors: []string{}}},
		{name: "failed, after a settlement with none", outcome: events.JobFailed, er: "deploy API: rolled back",
			want: events.TaskReport{Status: events.JobFailed, EvidenceErrors: []string{"deploy API: rolled back"}}},
	} {
		for _, d := range dialects {
			t.Run(tc.name+"/"+d.name, func(t *testing.T) {
				e := d.env(t)
				st := events.JobState{JobID: "job_r", ParentSessionID: "ses_r", ChildSessionID: "ses_child_r", Agent: "deployer",
					Status: events.JobQueued, Background: true, ReportDelivery: events.DeliveryQuiet, LogicalKey: "lk_r"}
				admitted := &events.JobAdmitted{JobState: st, ParentTurnID: "turn_1", ToolCallID: "call_1"}
				st.Status = events.JobUncertain
				settled := &events.JobSettled{JobState: st, Result: tc.settled, Error: "uncertain: lost", Recovered: true}
				want := tc.want
				want.SchemaVersion, want.JobID, want.SessionID, want.ParentSessionID, want.Agent = 2, "job_r", "ses_child_r", "ses_r", "deployer"
				want.ChangedPaths, want.VerificationRecords, want.UncertainSideEffects = []string{}, []events.TaskVerification{}, []string{}
				st.Status = tc.outcome
				reconciled := &events.JobReconciled{JobState: st, Outcome: tc.outcome, FinalText: tc.final, Error: tc.er,
					Authority: "deploy API", Evidence: "release 9", ToolCallID: "call_2", Result: want}
				writeSteps(t, e.store, "ses_r", &turnClock{}, []turnStep{{name: "admit", stream: "jobs-ses_r", payloads: []events.Payload{admitted}},
					{name: "settle", stream: "jobs-ses_r", payloads: []events.Payload{settled}},
					{name: "reconcile", stream: "jobs-ses_r", payloads: []events.Payload{reconciled}}}, nil)
				if _, err := e.runner.CatchUp(context.Background()); err != nil {
					t.Fatal(err)
				}
				doc, _ := json.Marshal(want)
				errCol := "NULL"
				if tc.er != "" {
					errCol = tc.er
				}
				wantRows(t, "reconciled job", e.query(t, `SELECT status, error, result FROM agent_job WHERE id = 'job_r'`),
					[]string{tc.outcome + "|" + errCol + "|" + string(doc)})
			})
		}
	}
}
