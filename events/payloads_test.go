package events_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// samplePayloads holds one populated value of every payload type, so that round trips exercise
// every field rather than only zero values.
func samplePayloads() []events.Payload {
	zero := 0
	plan := events.WorkPlan{
		PlanID: "plan-2", Title: "Fix the receipt gap", Status: "in_progress", Depth: 1,
		ParentPlanID: "plan-1", Origin: "host",
		Steps: []events.WorkPlanStep{
			{ID: "step-1", Title: "Reproduce", Status: "completed"},
			{ID: "step-2", Title: "Fix", Status: "pending"},
		},
	}
	goal := events.Goal{GoalID: "goal-1", Objective: "Ship the fix", Status: "active", OwnerTurnID: "turn_1",
		Criteria: []events.GoalCriterion{{ID: "tests", Text: "the tests pass", NeedsEvidence: true}}}
	goalWaiting := goal
	goalWaiting.Status, goalWaiting.Waiting = "paused", &events.GoalInputRequest{RequestID: "req_1", Question: "Which DB?", ObservedRevision: 2, TurnID: "turn_1"}
	goalDone := goal
	goalDone.Status, goalDone.Criteria = "complete", []events.GoalCriterion{{ID: "tests", Text: "the tests pass", NeedsEvidence: true,
		Evidence: "rcp_0123456789abcdef0123456789abcdef"}}
	job := events.JobState{JobID: "job_1", ParentSessionID: "ses_0", ChildSessionID: "ses_1", Agent: "explore", Status: "completed",
		Background: true, ReportDelivery: "nextStep", LogicalKey: "lk_1", ReportInputID: "input_1"}
	report := events.TaskReport{SchemaVersion: 2, JobID: "job_1", SessionID: "ses_1", ParentSessionID: "ses_0", Agent: "explore",
		Status: "completed", FinalText: "found it", ChangedPaths: []string{"a.go"},
		VerificationRecords:  []events.TaskVerification{{ReceiptID: "rcp_1", CallID: "call_3", Command: "go test", Verdict: "passed", Authority: "authoritative"}},
		UncertainSideEffects: []string{}, EvidenceErrors: []string{}}
	return []events.Payload{
		events.SessionCreated{SessionID: "ses_1", Title: "Title", Agent: "build", ParentSessionID: "ses_0", Directory: "/repo"},
		events.SessionForked{SessionID: "ses_2", Title: "Fork", Agent: "build", Directory: "/repo", MessageCount: 1,
			Source: events.ForkSource{SessionID: "ses_1", Stream: "session-ses_1", Revision: 3, Position: 9, EventID: "e", Hash: "h"}},
		events.SessionTitled{SessionID: "ses_1", Title: "Better title"},
		events.UserMessageAppended{SessionID: "ses_1", MessageID: "msg_1", Text: "hello\nworld"},
		events.UserMessageAppended{SessionID: "ses_0", MessageID: "msg_2", Text: "report", InputID: "input_1", TaskReport: &report},
		events.DirectoryChanged{SessionID: "ses_1", Directory: "/repo/b", Previous: "/repo"},
		events.WorkPlanCreated{SessionID: "ses_1", Revision: 1, WorkPlan: plan},
		events.WorkPlanPatched{SessionID: "ses_1", Revision: 2, WorkPlan: plan, PatchedStepIDs: []string{"step-1"}},
		events.WorkPlanStepsAppended{SessionID: "ses_1", Revision: 3, WorkPlan: plan, AppendedStepIDs: []string{"step-2"}},
		events.WorkPlanPushed{SessionID: "ses_1", Revision: 4, WorkPlan: plan},
		events.WorkPlanPopped{SessionID: "ses_1", Revision: 5, WorkPlan: plan, RestoredPlanID: "plan-1"},
		events.WorkPlanSuperseded{SessionID: "ses_1", Revision: 6, PlanID: "plan-1", Status: "superseded", SupersededBy: "plan-3"},
		events.WorkTodoUpdated{SessionID: "ses_1", Revision: 1, CreatedIDs: []string{"todo-1"}, Items: []events.WorkItem{
			{ID: "todo-1", Title: "Write test", Status: "pending", Owner: "build", Dependencies: []string{"todo-0"}, PlanStepID: "step-1"},
		}},
		events.WorkSnapshot{SessionID: "ses_1", WorkRevision: 63, PlanRevision: 4, TodoRevision: 60, PlanSeq: 2, StepSeq: 5, TodoSeq: 61,
			Plans: []events.WorkPlan{{PlanID: "plan-2", Title: "Ship", Status: "active", Steps: []events.WorkPlanStep{{ID: "step-5", Title: "a", Status: "pending"}}}},
			Items: []events.WorkItem{{ID: "todo-61", Title: "b", Status: "pending", Dependencies: []string{}}}},
		events.TaskContextStarted{SessionID: "ses_1", Revision: 2, ReplacedTaskID: "task-1", TaskContext: events.TaskContext{
			TaskID: "task-2", Objective: "Fix login", TaskKind: "delivery", Status: "active",
			Sources:           []events.TaskContextSource{{MessageID: "msg_1", Summary: "Fix the login bug"}},
			AuthorizedActions: []string{"edit src/"}, Constraints: []string{"do not announce"}, DecisionOwner: "user",
			Checks: []events.TaskContextCheck{{ID: "tests", Kind: "delivery", Title: "login tests pass", Status: "passed", Evidence: "rcp_1"}}}},
		events.TaskContextUpdated{SessionID: "ses_1", Revision: 3, RevisedCheckIDs: []string{"tests"}, TaskContext: events.TaskContext{
			TaskID: "task-2", Objective: "Fix login", TaskKind: "delivery", Status: "completed",
			Sources: []events.TaskContextSource{{MessageID: "msg_1", Summary: "s"}}, AuthorizedActions: []string{}, Constraints: []string{},
			Checks: []events.TaskContextCheck{{ID: "tests", Kind: "delivery", Title: "t", Status: "pending"}}}},
		events.GoalCreated{SessionID: "ses_1", Revision: 1, Goal: goal},
		events.GoalUpdated{SessionID: "ses_1", Revision: 2, Goal: goal},
		events.GoalInputRequested{SessionID: "ses_1", Revision: 3, Goal: goalWaiting},
		events.GoalInputAnswered{SessionID: "ses_1", Revision: 4, RequestID: "req_1", Answer: "postgres", Goal: goal},
		events.GoalResumed{SessionID: "ses_1", Revision: 5, Goal: goal},
		events.GoalCompleted{SessionID: "ses_1", Revision: 6, JobsRevision: 3, Goal: goalDone},
		events.GoalProgressObserved{SessionID: "ses_1", GoalID: "goal-1", TurnID: "turn_1", Fingerprint: "sha256:ab", Repeats: 2, Outcome: "continue"},
		events.JobAdmitted{JobState: job, Contract: events.DelegationContract{Agent: "explore", Objective: "o", Deliverable: "d",
			Instructions: "i", SuccessEvidence: "s", Scope: &events.ContractScope{Include: []string{"a"}},
			Constraints: &events.ContractConstraints{MustNot: []string{"edit"}}, Dependencies: []string{"x"}},
			ParentTurnID: "turn_1", ToolCallID: "call_1", EvidenceFrom: 0,
			WorkContext: &events.WorkContext{SchemaVersion: 1, PlanID: "plan-1", PlanRevision: 3, PlanStepID: "step-1"}},
		events.JobStarted{JobState: job, Owner: events.TurnOwner{Host: "h", PID: 7}},
		events.JobSettled{JobState: job, Result: &report, Recovered: true},
		events.JobReportAdmitted{JobState: job, InputID: "input_1", Report: report, Replaces: "input_0"},
		events.JobReportConsumed{JobState: job, InputID: "input_1", MessageID: "msg_2"},
		events.InboxMessageAdmitted{SessionID: "ses_1", InputID: "input_9", PeerMessage: events.PeerMessage{FromSessionID: "ses_0",
			FromAgent: "orchestrator", Title: "API change", Note: events.PeerNote}, Text: "the API moved", ToolCallID: "call_9"},
		events.InboxMessageConsumed{SessionID: "ses_1", InputID: "input_9", MessageID: "msg_9"},
		events.QuestionPublished{SessionID: "ses_1", RequestID: "qst_1", Revision: 1, Kind: events.QuestionKindPlanExit,
			Mode: events.QuestionModeWait, Tool: "plan_exit", CallID: "call_1", TurnID: "turn_1", Agent: "plan", Title: "Approve",
			Items:   []events.QuestionItem{{ID: "approval", Question: "Ship it?", Options: []events.QuestionOption{{Label: "approve", Description: "go"}}, Custom: true}},
			DeferAt: "2026-12-02T10:02:00Z", CountdownAt: "2026-12-02T10:01:00Z",
			PlanExit: &events.PlanExitBinding{PlanID: "plan-1", PlanRevision: 3, Agent: "plan", Model: "openai/gpt", TurnID: "turn_1"}},
		events.QuestionAnswered{SessionID: "ses_1", RequestID: "qst_1", Revision: 2, InputID: "input_q", Complete: true, Source: "cli",
			Answers: []events.QuestionItemAnswer{{ItemID: "approval", Selected: []string{"approve"}, Text: "fine"}}},
		events.QuestionDeferred{SessionID: "ses_1", RequestID: "qst_1", Revision: 3, Reason: events.DeferTimeout, Deadline: "2026-12-02T10:02:00Z"},
		events.QuestionVoided{SessionID: "ses_1", RequestID: "qst_1", Revision: 4, Reason: "plan_changed"},
		events.SessionPruned{SessionID: "ses_1", Mode: events.PruneArchive, Reason: "done"},
		events.UserMessageAppended{SessionID: "ses_1", MessageID: "msg_9", Text: "the API moved", InputID: "input_9",
			PeerMessage: &events.PeerMessage{FromSessionID: "ses_0", FromAgent: "orchestrator", Note: events.PeerNote}},
		events.JobReconciled{JobState: job, Outcome: "completed", FinalText: "done", Authority: "CI", Evidence: "run 1", ToolCallID: "call_2"},
		events.PromptAssembled{SessionID: "ses_1", ReceiptID: "rcpt_1"},
		events.TurnStarted{SessionID: "ses_1", TurnID: "turn_1", MessageID: "msg_1", Agent: "build", Provider: "openai",
			Model: "gpt", StepLimit: 24, ToolCalls: 8, Owner: &events.TurnOwner{Host: "h", PID: 7},
			Memory: &events.MemoryRead{Scope: "p", Revision: 3}},
		events.ProviderRequest{SessionID: "ses_1", TurnID: "turn_1", RequestID: "req_1", Step: 3, Status: events.RequestCompleted,
			PromptReceiptID: "rcpt_1", Provider: "openai", Model: "gpt",
			StepLimitFinalization: &events.StepLimitFinalization{Limit: 2, Instruction: "stop", InstructionDigest: "ab"},
			Response: &events.ProviderResponse{ID: "r", Model: "gpt-2026", Text: "hi", FinishReason: "tool_calls", ProviderFinishReason: "tool_calls",
				ToolCalls: []events.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}},
				Usage:     events.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 1, CacheWriteTokens: 3}},
			Error:      &events.ErrorInfo{Code: "rate_limit", Message: "slow", Fix: "wait", ProviderCode: "429", HTTPStatus: 429, RetryAfterMs: 1500},
			DurationMs: 12},
		events.ProviderRequest{SessionID: "ses_1", TurnID: "turn_1", RequestID: "req_c", Step: 4, Status: events.RequestStarted,
			PromptReceiptID: "rcpt_c", Provider: "openai", Model: "gpt", Purpose: events.PurposeCompaction},
		events.ToolBlocked{SessionID: "ses_1", TurnID: "turn_1", RequestID: "req_1", CallID: "c2", Tool: "nope", Category: "unavailable",
			Field: "path", Message: "no such tool", Fix: "use read", Output: "Blocked",
			Permission: &events.PermissionDecision{Key: "shell", Resource: "git push", RuleAction: "deny", Action: "deny", Rule: "shell: git push*",
				Layer: "project", Source: "rule", Mode: "standard", Message: "denied"}},
		events.ToolStarted{SessionID: "ses_1", TurnID: "turn_1", RequestID: "req_1", CallID: "c1", Tool: "bg", Action: "list", Group: 1,
			SideEffect: "ReadOnly", Replay: "Safe", Concurrency: "ParallelSafe",
			Permission: &events.PermissionDecision{Key: "shell", RuleAction: "ask", Action: "allow", Source: "standing", Reply: "once", AskID: "ask_1", Mode: "standard"},
			Sandbox: &events.SandboxResolution{RequestedMode: "workspace-write", Network: "deny", EffectiveAuthority: "workspace-write",
				ResolutionKind: "confined", Backend: "bwrap", Reason: "none"}},
		events.ToolSettled{SessionID: "ses_1", TurnID: "turn_1", RequestID: "req_1", CallID: "c1", Tool: "shell", Outcome: "completed",
			ErrorCode: "x", Output: "ok", Recovered: true, DurationMs: 5, Metadata: events.ToolMetadata{
				WrittenPaths: []string{"a.go"}, OutputPaths: []string{"/d/c1.out"}, Details: []byte(`{"exitCode":0}`),
				WithheldOutput: &events.WithheldOutput{Path: "/d/c1.out", Bytes: 60000, Lines: 3, Limit: "max_bytes", MaxBytes: 51200, MaxLines: 2000},
				Verification:   "rcp_0123456789abcdef0123456789abcdef"}},
		events.VerificationReceipt{ReceiptID: "rcp_0123456789abcdef0123456789abcdef", SessionID: "ses_1", TurnID: "turn_1", CallID: "c1",
			Command: "go test ./... || true", Workdir: ".", Interpreter: "bash", Policy: "pipefail", Verdict: "passed", ExitCode: &zero,
			Signal: "SIGTERM", Coverage: "last_statement", Authority: "derived", Reason: "exit 0; derived",
			Limitations: []events.VerificationLimitation{{Construct: "fallback", Text: "go test ./... || true", Note: "n", Remedy: "r"}},
			Cancelled:   true, TimedOut: true},
		events.NoteWritten{SessionID: "ses_1", Name: "plans/api.md", Action: events.NoteAppend, Revision: 2, Content: "more",
			Bytes: 9, SHA256: "ab", CallID: "call_n"},
		events.MemoryUpdated{Scope: "p", Revision: 2, Content: "c", Bytes: 1, SHA256: "ab", SessionID: "ses_1", CallID: "call_m", ProposalID: "mp_1"},
		events.MemoryProposed{Scope: "p", ProposalID: "mp_1", BaseRevision: 1, Content: "c", Bytes: 1, SHA256: "ab", SessionID: "ses_1", CallID: "call_m"},
		events.MemoryRejected{Scope: "p", ProposalID: "mp_2", Reason: "r"},
		events.TranscriptCompacted{SessionID: "ses_1", TurnID: "turn_1", Window: 1, RequestID: "req_c", PromptReceiptID: "rcpt_c", Step: 4,
			Through: 6, KeptMessages: 3, SummarisedResponses: 2, SummarisedDigest: "d", Summary: "s", SummaryMessage: "h\n\ns",
			SummarySHA256: "x", EstimatedTokensBefore: 900, EstimatedTokensAfter: 200},
		events.TurnFinished{SessionID: "ses_1", TurnID: "turn_1", Reason: events.FinishFailed, Steps: 3, Usage: events.Usage{InputTokens: 1},
			Error: &events.ErrorInfo{Code: "interrupted", Message: "stopped"}, Recovered: true},
		events.LogAnchored{Chain: "anc_1", Counter: 2, Digest: "sha256:" + strings.Repeat("ab", 32), Previous: "sha256:" + strings.Repeat("cd", 32), Streams: 3, Signed: true},
		events.PermissionAsked{SessionID: "ses_1", TurnID: "turn_1", RequestID: "req_1", CallID: "c3", AskID: "ask_1", Tool: "write",
			Key: "edit", Resource: "a.go", Rule: "edit: *", Layer: "global", Mode: "standard", Always: "a.go"},
		events.PermissionAnswered{SessionID: "ses_1", AskID: "ask_1", CallID: "c3", Reply: "always", Source: "user"},
		events.PermissionClosed{SessionID: "ses_1", TurnID: "turn_1", AskID: "ask_2", CallID: "c4", Reason: events.AskClosedInterrupted},
		events.TurnLeased{SessionID: "ses_1", TurnID: "turn_1", Holder: "vm/4242/9f3a", ExpiresAt: "2026-12-01T10:00:30Z", TookOver: "vm/4100/1c2d"},
		events.TurnLeaseReleased{SessionID: "ses_1", TurnID: "turn_1", Holder: "vm/4242/9f3a"},
		events.TurnInterruptRequested{SessionID: "ses_1", TurnID: "turn_1", By: "user"},
		events.TurnSuspended{SessionID: "ses_1", TurnID: "turn_1", Awaiting: []events.Awaited{{Kind: "permission", AskID: "ask_c1", CallID: "c1"}}},
		events.TurnResumed{SessionID: "ses_1", TurnID: "turn_1", Input: events.InputAnswer, TriggerEventID: "evt_1"},
		events.BackgroundStarted{SessionID: "ses_1", TaskID: "bg_0123456789ab", CallID: "c1", Command: "sleep 1; echo done", Dir: "/w",
			LogPath: "/d/bg/ses_1/bg_0123456789ab.log", Holder: "vm/4242/9f3a", StartedAt: "2026-12-01T10:00:00Z"},
		events.BackgroundCompleted{SessionID: "ses_1", TaskID: "bg_0123456789ab", CallID: "c1", Status: "exited", ExitCode: &zero,
			Signal: "SIGTERM", GuardFailed: true, NeverStarted: true, OutputDetached: true, TotalWritten: 5,
			OutputSHA256: "2a3b", LogPath: "/d/bg/ses_1/bg_0123456789ab.log", Holder: "vm/4242/9f3a", EndedAt: "2026-12-01T10:00:01Z"},
		events.PermissionGranted{SessionID: "ses_1", TurnID: "turn_1", RequestID: "req_1", CallID: "c3", AskID: "ask_1",
			Grants: []events.StandingGrant{{Permission: "edit", Pattern: "a.go"}}},
		events.PermissionRevoked{SessionID: "ses_1", Grants: []events.StandingGrant{{Permission: "edit", Pattern: "a.go"}}},
		events.MCPLifecycle{SessionID: "ses_1", Server: "github", Transport: "stdio", Phase: events.MCPLost, Connection: 2,
			ServerName: "gh", ServerVersion: "1.0", Tools: 3, Refused: 1, CallID: "c1", Tool: "mcp_github_x",
			Code: "mcp_server_lost", Error: "EOF", ElapsedMs: 12},
	}
}

func TestAllPayloadsNamesValidAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range events.AllPayloads() {
		name := p.EventType()
		if !events.ValidTypeName(name) {
			t.Errorf("%T: type name %q is not dotted and versioned", p, name)
		}
		if seen[name] {
			t.Errorf("%T: type name %q used twice", p, name)
		}
		seen[name] = true
	}
	reg := events.NewRegistry(events.AllPayloads()...)
	if got := len(reg.Names()); got != len(seen) {
		t.Fatalf("registry holds %d names, want %d", got, len(seen))
	}
}

func TestSamplesCoverEveryPayload(t *testing.T) {
	want := map[reflect.Type]bool{}
	for _, p := range events.AllPayloads() {
		want[reflect.TypeOf(p)] = true
	}
	for _, p := range samplePayloads() {
		delete(want, reflect.TypeOf(p))
	}
	for typ := range want {
		t.Errorf("no sample for %v: add one to samplePayloads", typ)
	}
}

func TestPayloadsRoundTrip(t *testing.T) {
	reg := events.NewRegistry(events.AllPayloads()...)
	all := append(events.AllPayloads(), samplePayloads()...)
	for i, p := range all {
		ev, err := events.Encode(events.DeriveID("cmd", i), p, events.Metadata{CommandID: "cmd", Actor: "host"})
		if err != nil {
			t.Fatalf("%T: encode: %v", p, err)
		}
		if err := events.ValidateAppend("stream", []events.Event{ev}); err != nil {
			t.Fatalf("%T: %v", p, err)
		}
		got, err := reg.Decode(events.Recorded{Event: ev, Stream: "stream", Position: uint64(i)})
		if err != nil {
			t.Fatalf("%T: decode: %v", p, err)
		}
		if got.EventType() != p.EventType() {
			t.Errorf("%T: decoded type %q, want %q", p, got.EventType(), p.EventType())
		}
		// One payload form: the registry decodes to the value type Decide returns.
		if reflect.TypeOf(got) != reflect.TypeOf(p) || !reflect.DeepEqual(got, p) {
			t.Errorf("%T: round trip\n got %#v\nwant %#v", p, got, p)
		}
	}
}

// Forensic SQL reads these fields with json_extract; renaming one breaks it.
func TestWorkPayloadFieldsAreFlat(t *testing.T) {
	data, err := json.Marshal(events.WorkPlanPatched{SessionID: "ses_1", Revision: 7,
		WorkPlan: events.WorkPlan{PlanID: "plan-1", Title: "T", Status: "in_progress", Steps: []events.WorkPlanStep{}}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"sessionId", "revision", "planId", "title", "status", "depth", "steps"} {
		if _, ok := m[key]; !ok {
			t.Errorf("key %q missing from %s", key, data)
		}
	}
}
