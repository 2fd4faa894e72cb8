package projections_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// permissionTurns is a session whose calls pass the permission gate every way it decides, as
// the runtime records them (tag ends the turn and request ids, as in forensicTurns):
//
//   - request 1: call_read is allowed by a rule; call_push is denied by a rule of the project
//     layer; call_write is asked, answered always (pattern "src/*") and then runs; call_test is
//     allowed by a rule and runs confined by bubblewrap.
//   - request 2: call_write2 is admitted by the standing always of ask_1 ({"reply":"once",
//     "source":"standing"}); call_rm is asked, and the process dies while it waits: restart
//     recovery settles the call cancelled and closes the turn. The answer arrives after that,
//     in the inbox stream: recorded, and the call never ran.
func permissionTurns(t testing.TB, sid, tag string) []turnStep {
	const provider, mdl = "kiro-local", "claude-opus-5"
	turn, req1, req2 := "turn_1"+tag, "req_1"+tag, "req_2"+tag
	inbox := "inbox-" + sid
	var steps []turnStep
	add := func(name string, ps ...events.Payload) { steps = append(steps, turnStep{name: name, payloads: ps}) }
	answer := func(name string, a events.PermissionAnswered) {
		steps = append(steps, turnStep{name: name, payloads: []events.Payload{&a}, stream: inbox})
	}
	conv := []model.Message{{Role: model.RoleUser, Text: "fix the parser and push"}}
	tools := []string{"read", "write", "shell"}
	request := func(req string, step int) (*events.PromptAssembled, *events.ProviderRequest) {
		rcp := "rcp:" + req
		return &events.PromptAssembled{SessionID: sid, ReceiptID: rcp, PromptReceipt: receipt(t, conv, tools...)},
			&events.ProviderRequest{SessionID: sid, TurnID: turn, RequestID: req, Step: step, Status: events.RequestStarted,
				PromptReceiptID: rcp, Provider: provider, Model: mdl}
	}
	completed := func(started *events.ProviderRequest, calls ...events.ToolCall) *events.ProviderRequest {
		c := *started
		c.Status, c.DurationMs = events.RequestCompleted, 1200
		c.Response = &events.ProviderResponse{ID: "resp" + c.RequestID, Model: mdl, ToolCalls: calls,
			Usage: events.Usage{InputTokens: 4000, OutputTokens: 90}, FinishReason: "tool_calls"}
		return &c
	}
	started := func(req, call, tool string, d *events.PermissionDecision, sb *events.SandboxResolution) *events.ToolStarted {
		return &events.ToolStarted{SessionID: sid, TurnID: turn, RequestID: req, CallID: call, Tool: tool,
			SideEffect: "workspace", Replay: "unsafe", Concurrency: "serial", Permission: d, Sandbox: sb}
	}
	settled := func(req, call, tool, outcome, output string) *events.ToolSettled {
		return &events.ToolSettled{SessionID: sid, TurnID: turn, RequestID: req, CallID: call, Tool: tool,
			Outcome: outcome, Output: output, DurationMs: 4}
	}

	add("created", &events.SessionCreated{SessionID: sid, Title: "Fix and push", Agent: "build", Directory: "/repo"})
	add("message-1", &events.UserMessageAppended{SessionID: sid, MessageID: "msg_1", Text: "fix the parser and push"})
	add("turn-1-started", &events.TurnStarted{SessionID: sid, TurnID: turn, MessageID: "msg_1", Agent: "build",
		Provider: provider, Model: mdl, ToolCalls: 1})
	rcp1, r1 := request(req1, 1)
	add("request-1-started", rcp1, r1)
	add("request-1-completed", completed(r1,
		events.ToolCall{ID: "call_read", Name: "read", Arguments: `{"path":"/repo/parser.go"}`},
		events.ToolCall{ID: "call_push", Name: "shell", Arguments: `{"command":"git push origin main"}`},
		events.ToolCall{ID: "call_write", Name: "write", Arguments: `{"path":"/repo/src/main.go","content":"package main\n"}`},
		events.ToolCall{ID: "call_test", Name: "shell", Arguments: `{"command":"go test ./..."}`}))
	add("call-read-started", started(req1, "call_read", "read", &events.PermissionDecision{Key: "read", Resource: "/repo/parser.go",
		RuleAction: "allow", Action: "allow", Rule: "read: *", Layer: "global", Source: "rule", Mode: "standard"}, nil))
	add("call-read-settled", settled(req1, "call_read", "read", "completed", "package parser\n"))
	pushDenied := `shell "git push origin main" is denied by rule "shell: git push*" (project layer)`
	add("call-push-blocked", &events.ToolBlocked{SessionID: sid, TurnID: turn, RequestID: req1, CallID: "call_push", Tool: "shell",
		Category: "denied", Message: pushDenied, Output: "denied: " + pushDenied,
		Permission: &events.PermissionDecision{Key: "shell", Resource: "git push origin main", RuleAction: "deny", Action: "deny",
			Rule: "shell: git push*", Layer: "project", Source: "rule", Mode: "standard", Message: pushDenied}})
	add("call-write-asked", &events.PermissionAsked{SessionID: sid, TurnID: turn, RequestID: req1, CallID: "call_write", AskID: "ask_1",
		Tool: "write", Key: "edit", Resource: "src/main.go", Rule: "edit: *", Layer: "global", Mode: "standard", Always: "src/*"})
	answer("call-write-answered", events.PermissionAnswered{SessionID: sid, AskID: "ask_1", CallID: "call_write", Reply: "always", Source: "user"})
	add("call-write-started", started(req1, "call_write", "write", &events.PermissionDecision{Key: "edit", Resource: "src/main.go",
		RuleAction: "ask", Action: "allow", Rule: "edit: *", Layer: "global", Source: "user", Reply: "always", AskID: "ask_1", Mode: "standard"}, nil))
	add("call-write-settled", settled(req1, "call_write", "write", "completed", "wrote src/main.go"))
	add("call-test-started", started(req1, "call_test", "shell", &events.PermissionDecision{Key: "shell", Resource: "go test ./...",
		RuleAction: "allow", Action: "allow", Rule: "shell: go test*", Layer: "project", Source: "rule", Mode: "standard"},
		&events.SandboxResolution{RequestedMode: "workspace-write", Network: "deny", EffectiveAuthority: "workspace-write",
			ResolutionKind: "confined", Backend: "bwrap"}))
	add("call-test-settled", settled(req1, "call_test", "shell", "completed", "ok  \tparser\t0.01s"))

	rcp2, r2 := request(req2, 2)
	add("request-2-started", rcp2, r2)
	add("request-2-completed", completed(r2,
		events.ToolCall{ID: "call_write2", Name: "write", Arguments: `{"path":"/repo/src/util.go","content":"package main\n"}`},
		events.ToolCall{ID: "call_rm", Name: "shell", Arguments: `{"command":"rm -rf build"}`}))
	add("call-write2-started", started(req2, "call_write2", "write", &events.PermissionDecision{Key: "edit", Resource: "src/util.go",
		RuleAction: "ask", Action: "allow", Rule: "edit: *", Layer: "global", Source: "standing", Reply: "once", AskID: "ask_1", Mode: "standard"}, nil))
	add("call-write2-settled", settled(req2, "call_write2", "write", "completed", "wrote src/util.go"))
	add("call-rm-asked", &events.PermissionAsked{SessionID: sid, TurnID: turn, RequestID: req2, CallID: "call_rm", AskID: "ask_2",
		Tool: "shell", Key: "shell", Resource: "rm -rf build", Rule: "shell: *", Layer: "global", Mode: "standard", Always: "rm *"})
	// The process dies while call_rm waits; the next run recovers the turn from the log.
	cancelled := settled(req2, "call_rm", "shell", "cancelled", "cancelled: the run ended before shell started")
	cancelled.Recovered, cancelled.DurationMs = true, 0
	add("turn-1-recovered", cancelled, &events.TurnFinished{SessionID: sid, TurnID: turn, Reason: events.FinishInterrupted,
		Steps: 2, Usage: events.Usage{InputTokens: 8000, OutputTokens: 180}, Recovered: true})
	answer("call-rm-answered", events.PermissionAnswered{SessionID: sid, AskID: "ask_2", CallID: "call_rm", Reply: "once", Source: "user"})
	return steps
}

// permissionScenario writes n permission sessions ("ses_perm_NNNN") and returns the events written.
func permissionScenario(t testing.TB, store appender, n int) int {
	t.Helper()
	clock := &turnClock{}
	written := 0
	for i := range n {
		sid := fmt.Sprintf("ses_perm_%04d", i)
		written += writeSteps(t, store, sid, clock, permissionTurns(t, sid, "@"+sid), nil)
	}
	return written
}

// seedWhoAllowed answers "who allowed this call and under which confinement did it run": the
// decision joined with the call's part, in the order the calls were judged. Kept verbatim, in
// the style of the other evidence queries (seedProviderCalls).
const seedWhoAllowed = `SELECT d.call_id, d.tool, d.action, d.source, d.reply, d.rule, d.layer,
          json_extract(p.data, '$.sandbox.resolutionKind') AS confinement,
          json_extract(p.data, '$.sandbox.effectiveAuthority') AS authority,
          json_extract(p.data, '$.state.status') AS status
   FROM permission_decision d
   JOIN part p ON p.session_id = d.session_id AND p.id = d.call_id
   WHERE d.session_id = '$SESSION_ID'
   ORDER BY d.position`

// testPermissionReadModels projects the permission session (and another beside it) and reads
// it back: the evidence query through `zuno db`'s read-only path, every decision column, the
// row times against the events, and the part documents.
func testPermissionReadModels(t *testing.T, e *env) {
	ctx := context.Background()
	clock := &turnClock{}
	const sid = "ses_perm"
	writeSteps(t, e.store, sid, clock, permissionTurns(t, sid, ""), nil)
	writeSteps(t, e.store, "ses_perm_other", clock, permissionTurns(t, "ses_perm_other", "@other")[:9], nil)
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := e.rm.Query(ctx, seedSQL(seedWhoAllowed, sid), 0)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "who allowed", rowsText(res.Rows), []string{
		"call_read|read|allow|rule|NULL|read: *|global|NULL|NULL|completed",
		"call_push|shell|deny|rule|NULL|shell: git push*|project|NULL|NULL|blocked",
		"call_write|write|allow|user|always|edit: *|global|NULL|NULL|completed",
		"call_test|shell|allow|rule|NULL|shell: go test*|project|confined|workspace-write|completed",
		"call_write2|write|allow|standing|once|edit: *|global|NULL|NULL|completed",
		"call_rm|shell|ask|user|once|shell: *|global|NULL|NULL|cancelled",
	})

	// Each seed sentence as a row: the decision, as the table keeps it.
	wantRows(t, "decisions", e.query(t, `SELECT call_id, turn_id, request_id, permission_key, resource, rule_action, action,
			source, reply, ask_id, always_pattern, mode, message,
			CASE WHEN time_answered IS NULL THEN 'unanswered' ELSE 'answered' END,
			CASE WHEN time_decided IS NULL THEN 'undecided' ELSE 'decided' END
		FROM permission_decision WHERE session_id = ? ORDER BY position`, sid), []string{
		// allowed by a rule
		"call_read|turn_1|req_1|read|/repo/parser.go|allow|allow|rule|NULL|NULL|NULL|standard|NULL|unanswered|decided",
		// denied, with the rule and its layer, and the message the model read
		`call_push|turn_1|req_1|shell|git push origin main|deny|deny|rule|NULL|NULL|NULL|standard|` +
			`shell "git push origin main" is denied by rule "shell: git push*" (project layer)|unanswered|decided`,
		// asked, then answered always: the pattern the answer approved stays on the row
		"call_write|turn_1|req_1|edit|src/main.go|ask|allow|user|always|ask_1|src/*|standard|NULL|answered|decided",
		"call_test|turn_1|req_1|shell|go test ./...|allow|allow|rule|NULL|NULL|NULL|standard|NULL|unanswered|decided",
		// a standing always: {"reply":"once","source":"standing"}, naming the ask that installed it
		"call_write2|turn_1|req_2|edit|src/util.go|ask|allow|standing|once|ask_1|NULL|standard|NULL|unanswered|decided",
		// an answer after the turn was gone: recorded, never decided
		"call_rm|turn_1|req_2|shell|rm -rf build|NULL|ask|user|once|ask_2|rm *|standard|NULL|answered|undecided",
	})
	// Times and positions come from the events: created by the first event naming the call on
	// the gate's side (ask, started, blocked), answered and decided at their events.
	wantRows(t, "times", e.query(t, `SELECT d.call_id FROM permission_decision d
		WHERE d.session_id = ?
			AND d.position = (SELECT MIN(position) FROM event WHERE aggregate_id = d.session_id
				AND type IN ('session.permission.asked.1', 'session.tool.started.1', 'session.tool.blocked.1')
				AND json_extract(data, '$.callId') = d.call_id)
			AND d.time_created = (SELECT time FROM event WHERE position = d.position)
			AND COALESCE(d.time_answered, 'none') = COALESCE((SELECT time FROM event WHERE aggregate_id = d.session_id
				AND type = 'session.permission.answered.1' AND json_extract(data, '$.callId') = d.call_id), 'none')
			AND COALESCE(d.time_decided, 'none') = COALESCE((SELECT time FROM event WHERE aggregate_id = d.session_id
				AND type IN ('session.tool.started.1', 'session.tool.blocked.1')
				AND json_extract(data, '$.permission.action') IS NOT NULL AND json_extract(data, '$.callId') = d.call_id), 'none')
		ORDER BY d.position`, sid), []string{"call_read", "call_push", "call_write", "call_test", "call_write2", "call_rm"})
	wantRows(t, "by source", e.query(t, `SELECT source, COUNT(*) FROM permission_decision WHERE session_id = ?
		GROUP BY source ORDER BY source`, sid), []string{"rule|3", "standing|1", "user|2"})

	// The part keeps the sandbox resolution, in the same document on both dialects; who decided
	// is the call's permission_decision row, the request the part's request_id.
	wantRows(t, "part data", e.query(t, `SELECT data FROM part WHERE session_id = ? AND id IN ('call_push', 'call_test')
		ORDER BY position, ordinal`, sid), []string{
		`{"type":"tool","tool":"shell","callId":"call_push","input":{"command":"git push origin main"},` +
			`"state":{"status":"blocked","category":"denied","message":"shell \"git push origin main\" is denied by rule \"shell: git push*\" (project layer)",` +
			`"output":"denied: shell \"git push origin main\" is denied by rule \"shell: git push*\" (project layer)"}}`,
		`{"type":"tool","tool":"shell","callId":"call_test","input":{"command":"go test ./..."},` +
			`"sandbox":{"requestedMode":"workspace-write","network":"deny","effectiveAuthority":"workspace-write","resolutionKind":"confined","backend":"bwrap"},` +
			`"state":{"status":"completed","output":"ok  \tparser\t0.01s","durationMs":4}}`,
	})
	wantRows(t, "sandbox paths", e.query(t, `SELECT p.id, json_extract(p.data, '$.sandbox.resolutionKind'), json_extract(p.data, '$.sandbox.network'),
			json_extract(p.data, '$.sandbox.backend'), d.source
		FROM part p LEFT JOIN permission_decision d ON d.session_id = p.session_id AND d.call_id = p.id
		WHERE p.session_id = ? AND p.type = 'tool' ORDER BY p.position, p.ordinal`, sid), []string{
		"call_read|NULL|NULL|NULL|rule", "call_push|NULL|NULL|NULL|rule", "call_write|NULL|NULL|NULL|user",
		"call_test|confined|deny|bwrap|rule", "call_write2|NULL|NULL|NULL|standing", "call_rm|NULL|NULL|NULL|user",
	})
	// The other session is apart: its first nine steps decided call_read and call_push and asked call_write.
	wantRows(t, "other session", e.query(t, `SELECT call_id, action FROM permission_decision WHERE session_id = 'ses_perm_other'
		ORDER BY position`), []string{"call_read|allow", "call_push|deny", "call_write|ask"})
}

func TestPermissionReadModelsSQLite(t *testing.T)   { testPermissionReadModels(t, sqliteEnv(t)) }
func TestPermissionReadModelsPostgres(t *testing.T) { testPermissionReadModels(t, postgresEnv(t)) }

// testPermissionTransitions follows the permission session live, one command at a time: the
// asked calls' part states (asking between the ask and the decision) and decision rows.
func testPermissionTransitions(t *testing.T, e *env) {
	ctx := context.Background()
	const sid = "ses_perm_live"
	type state struct{ part, decision string }
	want := map[string]struct{ write, rm state }{
		"request-1-completed": {state{"pending", ""}, state{}},
		"call-write-asked":    {state{"asking|ask_1|edit|src/main.go|src/*", "ask|NULL|NULL|NULL|no|no"}, state{}},
		"call-write-answered": {state{"asking|ask_1|edit|src/main.go|src/*", "ask|NULL|user|always|yes|no"}, state{}},
		"call-write-started":  {state{"running|NULL|NULL|NULL|NULL", "allow|ask|user|always|yes|yes"}, state{}},
		"call-write-settled":  {state{"completed|NULL|NULL|NULL|NULL", "allow|ask|user|always|yes|yes"}, state{}},
		"request-2-completed": {state{"completed|NULL|NULL|NULL|NULL", "allow|ask|user|always|yes|yes"}, state{"pending", ""}},
		"call-rm-asked": {state{"completed|NULL|NULL|NULL|NULL", "allow|ask|user|always|yes|yes"},
			state{"asking|ask_2|shell|rm -rf build|rm *", "ask|NULL|NULL|NULL|no|no"}},
		"turn-1-recovered": {state{"completed|NULL|NULL|NULL|NULL", "allow|ask|user|always|yes|yes"},
			state{"cancelled|NULL|NULL|NULL|NULL", "ask|NULL|NULL|NULL|no|no"}},
		"call-rm-answered": {state{"completed|NULL|NULL|NULL|NULL", "allow|ask|user|always|yes|yes"},
			state{"cancelled|NULL|NULL|NULL|NULL", "ask|NULL|user|once|yes|no"}},
	}
	check := func(step, call string, w state) {
		t.Helper()
		if w.part == "" {
			wantRows(t, call+" part after "+step, e.query(t, `SELECT id FROM part WHERE session_id = ? AND id = ?`, sid, call), nil)
			return
		}
		part := []string{w.part}
		if w.part == "pending" {
			part = []string{"pending|NULL|NULL|NULL|NULL"}
		}
		wantRows(t, call+" part after "+step, e.query(t, `SELECT json_extract(data, '$.state.status'), json_extract(data, '$.state.askId'),
				json_extract(data, '$.state.key'), json_extract(data, '$.state.resource'), json_extract(data, '$.state.always')
			FROM part WHERE session_id = ? AND id = ?`, sid, call), part)
		var decision []string
		if w.decision != "" {
			decision = []string{w.decision}
		}
		wantRows(t, call+" decision after "+step, e.query(t, `SELECT action, rule_action, source, reply,
				CASE WHEN time_answered IS NULL THEN 'no' ELSE 'yes' END, CASE WHEN time_decided IS NULL THEN 'no' ELSE 'yes' END
			FROM permission_decision WHERE session_id = ? AND call_id = ?`, sid, call), decision)
	}
	seen := 0
	writeSteps(t, e.store, sid, &turnClock{}, permissionTurns(t, sid, ""), func(step string) {
		if _, err := e.runner.CatchUp(ctx); err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
		w, ok := want[step]
		if !ok {
			return
		}
		seen++
		check(step, "call_write", w.write)
		check(step, "call_rm", w.rm)
	})
	if seen != len(want) {
		t.Fatalf("checked %d of %d steps", seen, len(want))
	}
}

func TestPermissionTransitionsSQLite(t *testing.T)   { testPermissionTransitions(t, sqliteEnv(t)) }
func TestPermissionTransitionsPostgres(t *testing.T) { testPermissionTransitions(t, postgresEnv(t)) }

// twice applies every event two times in a row, as a projector that crashed after writing its
// rows but before its checkpoint would, and then met the event again.
type twice struct{ projections.Projector }

func (p twice) Apply(ctx context.Context, tx *projections.Tx, ev events.Recorded, payload events.Payload) error {
	if err := p.Projector.Apply(ctx, tx, ev, payload); err != nil {
		return err
	}
	return p.Projector.Apply(ctx, tx, ev, payload)
}

// testPermissionReplay replays the log from every position over the finished read models, each
// event applied twice: the permission and part rows come out as they were. Then it applies each
// event alone once more over the finished decisions, which must not change a row: a replayed
// ask never reopens a decided call, and a replayed answer never overwrites a decision.
func testPermissionReplay(t *testing.T, e *env) {
	ctx := context.Background()
	n := permissionScenario(t, e.store, 2)
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	want := dump(t, e.rm.Writer)
	if len(want["permission_decision"]) != 12 {
		t.Fatalf("%d decision rows, want 12", len(want["permission_decision"]))
	}
	replay := projections.NewRunner(e.rm.Writer, e.store, registry, []projections.Projector{twice{projections.Parts{}}, twice{projections.Permissions{}}})
	for from := range n {
		if _, err := e.rm.Writer.Exec(e.rm.Writer.Rebind(`UPDATE projection_checkpoint SET position = ?
			WHERE projector IN ('part', 'permission_decision')`), from); err != nil {
			t.Fatal(err)
		}
		if _, err := replay.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		got := dump(t, e.rm.Writer)
		for _, table := range []string{"part", "permission_decision"} {
			wantRows(t, fmt.Sprintf("%s after a replay from %d", table, from), got[table], want[table])
		}
	}
	log, err := e.store.ReadAll(ctx, 0, n+1)
	if err != nil || len(log) != n {
		t.Fatalf("read %d of %d events: %v", len(log), n, err)
	}
	for _, ev := range log {
		payload, err := registry.Decode(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := projections.ApplyOne(ctx, e.rm.Writer, projections.Permissions{}, ev, payload); err != nil {
			t.Fatal(err)
		}
		wantRows(t, fmt.Sprintf("decisions after %s at %d again", ev.Type, ev.Position),
			dump(t, e.rm.Writer)["permission_decision"], want["permission_decision"])
	}
}

func TestPermissionReplaySQLite(t *testing.T)   { testPermissionReplay(t, sqliteEnv(t)) }
func TestPermissionReplayPostgres(t *testing.T) { testPermissionReplay(t, postgresEnv(t)) }

// The inbox is another stream than the session's, written by other processes: nothing orders
// an answer before the call's decision. One that lands after the decision (here, the call was
// refused and a client's answer came late) is kept in the log, and the decision stands.
func testLateAnswerKeepsDecision(t *testing.T, e *env) {
	const sid = "ses_late"
	asked := &events.PermissionAsked{SessionID: sid, TurnID: "turn_1", RequestID: "req_1", CallID: "call_1", AskID: "ask_1",
		Tool: "shell", Key: "shell", Resource: "make deploy", Mode: "strict"}
	blocked := &events.ToolBlocked{SessionID: sid, TurnID: "turn_1", RequestID: "req_1", CallID: "call_1", Tool: "shell",
		Category: "denied", Message: "refused", Output: "denied: refused",
		Permission: &events.PermissionDecision{Key: "shell", Resource: "make deploy", RuleAction: "ask", Action: "deny",
			Source: "user", Reply: "reject", AskID: "ask_1", Mode: "strict", Message: "refused"}}
	late := &events.PermissionAnswered{SessionID: sid, AskID: "ask_1", CallID: "call_1", Reply: "always", Source: "user"}
	writeSteps(t, e.store, sid, &turnClock{}, []turnStep{
		{name: "asked", payloads: []events.Payload{asked}},
		{name: "blocked", payloads: []events.Payload{blocked}},
		{name: "late", payloads: []events.Payload{late}, stream: "inbox-" + sid},
	}, nil)
	if _, err := e.runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "decision", e.query(t, `SELECT action, source, reply, mode, CASE WHEN time_answered IS NULL THEN 'no' ELSE 'yes' END
		FROM permission_decision WHERE session_id = ?`, sid), []string{"deny|user|reject|strict|no"})
	wantRows(t, "late answer logged", e.query(t, `SELECT json_extract(data, '$.reply') FROM event
		WHERE aggregate_id = ? AND type = 'session.permission.answered.1'`, sid), []string{"always"})
}

func TestLateAnswerKeepsDecisionSQLite(t *testing.T) { testLateAnswerKeepsDecision(t, sqliteEnv(t)) }
func TestLateAnswerKeepsDecisionPostgres(t *testing.T) {
	testLateAnswerKeepsDecision(t, postgresEnv(t))
}

// An answer changes the row of the ask it names and nothing else: each stray answer here could
// reach the wrong call, and none of them touches the pending row or makes one.
func testAnswerReachesOnlyItsAsk(t *testing.T, e *env) {
	const sid = "ses_ans"
	asked := &events.PermissionAsked{SessionID: sid, TurnID: "turn_1", RequestID: "req_1", CallID: "call_1", AskID: "ask_1",
		Tool: "shell", Key: "shell", Resource: "make deploy", Rule: "shell: *", Layer: "global", Mode: "standard"}
	steps := []turnStep{{name: "asked", payloads: []events.Payload{asked}}}
	for _, stray := range []struct {
		name string
		a    events.PermissionAnswered
	}{
		{"another ask of the call", events.PermissionAnswered{SessionID: sid, AskID: "ask_9", CallID: "call_1", Reply: "always", Source: "user"}},
		{"another session", events.PermissionAnswered{SessionID: "ses_other", AskID: "ask_1", CallID: "call_1", Reply: "always", Source: "user"}},
		{"a call never asked", events.PermissionAnswered{SessionID: sid, AskID: "ask_7", CallID: "call_7", Reply: "once", Source: "user"}},
	} {
		steps = append(steps, turnStep{name: stray.name, payloads: []events.Payload{&stray.a}, stream: "inbox-" + stray.a.SessionID})
	}
	steps = append(steps, turnStep{name: "answer", stream: "inbox-" + sid, payloads: []events.Payload{
		// The answer command names the ask, not necessarily the call: the ask id finds the row.
		&events.PermissionAnswered{SessionID: sid, AskID: "ask_1", Reply: "reject", Source: "user"}}})
	writeSteps(t, e.store, sid, &turnClock{}, steps, func(step string) {
		if _, err := e.runner.CatchUp(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := "ses_ans|call_1|ask|-|-|unanswered"
		if step == "answer" {
			want = "ses_ans|call_1|ask|user|reject|answered"
		}
		wantRows(t, "after "+step, e.query(t, `SELECT session_id, call_id, action, COALESCE(source, '-'), COALESCE(reply, '-'),
				CASE WHEN time_answered IS NULL THEN 'unanswered' ELSE 'answered' END
			FROM permission_decision ORDER BY session_id, call_id`), []string{want})
	})
}

func TestAnswerReachesOnlyItsAskSQLite(t *testing.T) { testAnswerReachesOnlyItsAsk(t, sqliteEnv(t)) }
func TestAnswerReachesOnlyItsAskPostgres(t *testing.T) {
	testAnswerReachesOnlyItsAsk(t, postgresEnv(t))
}
