package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/migrations"
	"github.com/zuno-run/zuno/projections"
)

// turnStep is one command's events, appended together to the session stream, or to stream
// when it is set (an answer's inbox-<sessionId>).
type turnStep struct {
	name     string
	payloads []events.Payload
	stream   string
}

// turnClock hands out event times: one millisecond apart, across every session written.
type turnClock struct{ n int }

func (c *turnClock) next() time.Time {
	c.n++
	return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(c.n) * time.Millisecond)
}

// writeSteps appends steps in order, each at its stream's exact revision, calling after (when
// set) once each step is stored. It returns the events written.
func writeSteps(t testing.TB, store appender, sid string, clock *turnClock, steps []turnStep, after func(step string)) int {
	t.Helper()
	ctx := context.Background()
	revs, written := map[string]int64{}, 0
	for i, st := range steps {
		stream := st.stream
		if stream == "" {
			stream = "session-" + sid
		}
		rev, seen := revs[stream]
		cmd := fmt.Sprintf("%s/turn-cmd-%d", sid, i)
		md := events.Metadata{CommandID: cmd, Actor: "host", CorrelationID: sid, Time: clock.next()}
		evs := make([]events.Event, len(st.payloads))
		for j, p := range st.payloads {
			ev, err := events.Encode(events.DeriveID(cmd, j), p, md)
			if err != nil {
				t.Fatal(err)
			}
			evs[j] = ev
		}
		exp := events.NoStream
		if seen {
			exp = events.Exact(uint64(rev))
		} else {
			rev = -1
		}
		if _, err := store.Append(ctx, stream, exp, evs...); err != nil {
			t.Fatalf("append %s %s: %v", stream, st.name, err)
		}
		revs[stream] = rev + int64(len(evs))
		written += len(evs)
		if after != nil {
			after(st.name)
		}
	}
	return written
}

var schemaObject = json.RawMessage(`{"type": "object", "properties": {}}`)

// receipt assembles a real prompt for the conversation so far, offering tools.
func receipt(t testing.TB, conv []model.Message, tools ...string) events.PromptReceipt {
	t.Helper()
	in := prompt.Input{
		Model: "claude-opus-5", ContextWindow: 200_000, MaxTokens: 8192,
		Agent: prompt.AgentPrompt{Name: "deep", Source: "builtin:deep", Trust: prompt.TrustHost,
			Text: "You are deep, a debugging agent: reproduce, rank hypotheses, fix the root cause."},
		ProjectAgents: []prompt.InstructionFile{{Path: "/repo/AGENTS.md", Content: []byte("Run `go test ./...` before finishing.\n")}},
		Conversation:  conv,
	}
	for _, n := range tools {
		in.Tools = append(in.Tools, prompt.ToolDecl{
			Tool:            model.Tool{Name: n, Description: "the " + n + " tool", Schema: schemaObject},
			WritesWorkspace: n == "apply_patch"})
	}
	a, err := prompt.Assemble(in)
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	return a.Receipt
}

// forensicTurns is a deep-debugging session as the runtime records it, three turns long:
//
//   - turn_1: request 1 answers with text and four calls: two reads and a grep, which run in
//     one group (one read fails), and a shell call with unparsable arguments, which is
//     blocked; request 2 asks for apply_patch, which starts, and the process dies: restart
//     recovery settles the call as uncertain and closes the turn as interrupted.
//   - turn_2: request 3 fails (rate limited), which ends the turn.
//   - turn_3 (step limit 1): request 4 asks for a grep, which completes; request 5 is the
//     step-limit finalisation, text only.
//
// Five provider calls; tools: apply_patch 1, grep 2, read 2, shell 1. Turn, request and
// receipt ids, which the runtime makes unique (UUIDs), end in tag.
func forensicTurns(t testing.TB, sid, tag string) []turnStep {
	const provider, mdl = "kiro-local", "claude-opus-5"
	var steps []turnStep
	add := func(name string, ps ...events.Payload) { steps = append(steps, turnStep{name: name, payloads: ps}) }
	conv := []model.Message{}
	tools := []string{"read", "grep", "shell", "apply_patch"}
	// Each receipt is stored as the runtime stores it: relative to the previous one
	// (prompt.Compact), its header left out while sections and tools are unchanged.
	var prev *events.PromptReceipt
	prevID := ""
	request := func(turn, req, rcp string, step int, fin *events.StepLimitFinalization, offered ...string) (*events.PromptAssembled, *events.ProviderRequest) {
		turn, req, rcp = turn+tag, req+tag, rcp+tag
		full := receipt(t, conv, offered...)
		stored := prompt.Compact(full, prev, prevID, nil)
		prev, prevID = &full, rcp
		return &events.PromptAssembled{SessionID: sid, ReceiptID: rcp, PromptReceipt: stored},
			&events.ProviderRequest{SessionID: sid, TurnID: turn, RequestID: req, Step: step, Status: events.RequestStarted,
				PromptReceiptID: rcp, Provider: provider, Model: mdl, StepLimitFinalization: fin}
	}
	completed := func(started *events.ProviderRequest, resp events.ProviderResponse, ms int64) *events.ProviderRequest {
		c := *started
		c.Status, c.Response, c.DurationMs = events.RequestCompleted, &resp, ms
		return &c
	}
	toolStarted := func(turn, req, call, tool, action string) *events.ToolStarted {
		turn, req = turn+tag, req+tag
		return &events.ToolStarted{SessionID: sid, TurnID: turn, RequestID: req, CallID: call, Tool: tool, Action: action,
			SideEffect: "none", Replay: "safe", Concurrency: "parallel"}
	}

	add("created", &events.SessionCreated{SessionID: sid, Title: "Parser drops the last token", Agent: "deep", Directory: "/repo"})

	// turn_1
	add("message-1", &events.UserMessageAppended{SessionID: sid, MessageID: "msg_1", Text: "the parser drops the last token; fix it"})
	conv = append(conv, model.Message{Role: model.RoleUser, Text: "the parser drops the last token; fix it"})
	add("turn-1-started", &events.TurnStarted{SessionID: sid, TurnID: "turn_1" + tag, MessageID: "msg_1", Agent: "deep",
		Provider: provider, Model: mdl, ToolCalls: 4})
	rcp1, req1 := request("turn_1", "req_1", "rcp_1", 1, nil, tools...)
	add("request-1-started", rcp1, req1)
	calls1 := []events.ToolCall{
		{ID: "call_1", Name: "read", Arguments: `{"path": "parser.go"}`},
		{ID: "call_2", Name: "grep", Arguments: `{"pattern":"lastToken","path":"."}`},
		{ID: "call_3", Name: "read", Arguments: `{"path":"lexer_test.go"}`},
		{ID: "call_4", Name: "shell", Arguments: `{"command": "go test ./pars`},
	}
	add("request-1-completed", completed(req1, events.ProviderResponse{ID: "resp_1", Model: mdl, Text: "Reproducing first.",
		ToolCalls: calls1, Usage: events.Usage{InputTokens: 5210, OutputTokens: 164}, FinishReason: "tool_calls"}, 2310))
	add("call-4-blocked", &events.ToolBlocked{SessionID: sid, TurnID: "turn_1" + tag, RequestID: "req_1" + tag, CallID: "call_4", Tool: "shell",
		Category: "invalid_arguments", Field: "arguments", Message: "the arguments are not valid JSON",
		Fix: "send the arguments as one JSON object", Output: "invalid_arguments: the arguments are not valid JSON"})
	group := func(s *events.ToolStarted, g int) *events.ToolStarted { s.Group = g; return s }
	add("calls-1-3-started",
		group(toolStarted("turn_1", "req_1", "call_1", "read", ""), 0),
		group(toolStarted("turn_1", "req_1", "call_2", "grep", ""), 0),
		group(toolStarted("turn_1", "req_1", "call_3", "read", ""), 0))
	add("call-1-settled", &events.ToolSettled{SessionID: sid, TurnID: "turn_1" + tag, RequestID: "req_1" + tag, CallID: "call_1", Tool: "read",
		Outcome: "completed", Output: "package parser\n", DurationMs: 3,
		Metadata: events.ToolMetadata{Details: json.RawMessage(`{"lines":1,"sha256":"ab12"}`)}})
	add("call-3-settled", &events.ToolSettled{SessionID: sid, TurnID: "turn_1" + tag, RequestID: "req_1" + tag, CallID: "call_3", Tool: "read",
		Outcome: "error", ErrorCode: "not_found", Output: "not_found: lexer_test.go does not exist", DurationMs: 1})
	add("call-2-settled", &events.ToolSettled{SessionID: sid, TurnID: "turn_1" + tag, RequestID: "req_1" + tag, CallID: "call_2", Tool: "grep",
		Outcome: "completed", Output: "parser.go:41: lastToken", DurationMs: 7})
	conv = append(conv,
		model.Message{Role: model.RoleAssistant, Text: "Reproducing first.", ToolCalls: []model.ToolCall{
			{ID: "call_1", Name: "read", Arguments: calls1[0].Arguments}, {ID: "call_2", Name: "grep", Arguments: calls1[1].Arguments},
			{ID: "call_3", Name: "read", Arguments: calls1[2].Arguments}, {ID: "call_4", Name: "shell", Arguments: calls1[3].Arguments}}},
		model.Message{Role: model.RoleTool, ToolCallID: "call_1", Text: "package parser\n"},
		model.Message{Role: model.RoleTool, ToolCallID: "call_2", Text: "parser.go:41: lastToken"},
		model.Message{Role: model.RoleTool, ToolCallID: "call_3", Text: "not_found: lexer_test.go does not exist", IsError: true},
		model.Message{Role: model.RoleTool, ToolCallID: "call_4", Text: "invalid_arguments: the arguments are not valid JSON", IsError: true})
	rcp2, req2 := request("turn_1", "req_2", "rcp_2", 2, nil, tools...)
	add("request-2-started", rcp2, req2)
	add("request-2-completed", completed(req2, events.ProviderResponse{ID: "resp_2", Model: mdl,
		ToolCalls: []events.ToolCall{{ID: "call_5", Name: "apply_patch", Arguments: `{"patch":"*** Begin Patch\n*** End Patch"}`}},
		Usage:     events.Usage{InputTokens: 5900, OutputTokens: 230}, FinishReason: "tool_calls"}, 3120))
	add("call-5-started", toolStarted("turn_1", "req_2", "call_5", "apply_patch", "update"))
	// The process dies here; the next run recovers the turn from the log.
	add("turn-1-recovered",
		&events.ToolSettled{SessionID: sid, TurnID: "turn_1" + tag, RequestID: "req_2" + tag, CallID: "call_5", Tool: "apply_patch",
			Outcome: "uncertain", ErrorCode: "uncertain", Recovered: true,
			Output: "uncertain: the run ended while apply_patch was running; inspect the files before retrying"},
		&events.TurnFinished{SessionID: sid, TurnID: "turn_1" + tag, Reason: events.FinishInterrupted, Steps: 2,
			Usage: events.Usage{InputTokens: 11110, OutputTokens: 394}, Recovered: true})

	// turn_2
	add("message-2", &events.UserMessageAppended{SessionID: sid, MessageID: "msg_2", Text: "continue"})
	conv = append(conv, model.Message{Role: model.RoleUser, Text: "continue"})
	add("turn-2-started", &events.TurnStarted{SessionID: sid, TurnID: "turn_2" + tag, MessageID: "msg_2", Agent: "deep",
		Provider: provider, Model: mdl, ToolCalls: 4})
	rcp3, req3 := request("turn_2", "req_3", "rcp_3", 3, nil, tools...)
	add("request-3-started", rcp3, req3)
	failed := *req3
	failed.Status, failed.DurationMs = events.RequestFailed, 140
	failed.Error = &events.ErrorInfo{Code: "rate_limited", Message: "the provider refused the request: rate limited",
		HTTPStatus: 429, RetryAfterMs: 20000}
	add("turn-2-failed", &failed, &events.TurnFinished{SessionID: sid, TurnID: "turn_2" + tag, Reason: events.FinishFailed, Steps: 1,
		Error: failed.Error})

	// turn_3
	add("message-3", &events.UserMessageAppended{SessionID: sid, MessageID: "msg_3", Text: "try again, one step"})
	conv = append(conv, model.Message{Role: model.RoleUser, Text: "try again, one step"})
	add("turn-3-started", &events.TurnStarted{SessionID: sid, TurnID: "turn_3" + tag, MessageID: "msg_3", Agent: "deep",
		Provider: provider, Model: mdl, StepLimit: 1, ToolCalls: 4})
	rcp4, req4 := request("turn_3", "req_4", "rcp_4", 4, nil, tools...)
	add("request-4-started", rcp4, req4)
	add("request-4-completed", completed(req4, events.ProviderResponse{ID: "resp_4", Model: mdl,
		ToolCalls: []events.ToolCall{{ID: "call_6", Name: "grep", Arguments: `{"pattern":"EOF"}`}},
		Usage:     events.Usage{InputTokens: 6400, OutputTokens: 40}, FinishReason: "tool_calls"}, 1500))
	add("call-6-started", toolStarted("turn_3", "req_4", "call_6", "grep", ""))
	add("call-6-settled", &events.ToolSettled{SessionID: sid, TurnID: "turn_3" + tag, RequestID: "req_4" + tag, CallID: "call_6", Tool: "grep",
		Outcome: "completed", Output: "parser.go:12: case EOF:", DurationMs: 5})
	conv = append(conv,
		model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_6", Name: "grep", Arguments: `{"pattern":"EOF"}`}}},
		model.Message{Role: model.RoleTool, ToolCallID: "call_6", Text: "parser.go:12: case EOF:"})
	fin := &events.StepLimitFinalization{Limit: 1, Instruction: "The step limit is reached: answer now, without tools.",
		InstructionDigest: "9f2c"}
	rcp5, req5 := request("turn_3", "req_5", "rcp_5", 5, fin) // tools closed
	add("request-5-started", rcp5, req5)
	add("turn-3-finished",
		completed(req5, events.ProviderResponse{ID: "resp_5", Model: mdl,
			Text:  "The patch may not have applied: check parser.go before re-running it.",
			Usage: events.Usage{InputTokens: 6600, OutputTokens: 60}, FinishReason: "stop"}, 2050),
		&events.TurnFinished{SessionID: sid, TurnID: "turn_3" + tag, Reason: events.FinishStepLimit, Steps: 2,
			Usage: events.Usage{InputTokens: 13000, OutputTokens: 100}})
	return steps
}

// turnScenario writes n forensic sessions ("ses_turn_NNNN") and returns the events written.
func turnScenario(t testing.TB, store appender, n int) int {
	t.Helper()
	clock := &turnClock{}
	written := 0
	for i := range n {
		sid := fmt.Sprintf("ses_turn_%04d", i)
		written += writeSteps(t, store, sid, clock, forensicTurns(t, sid, "@"+sid), nil)
	}
	return written
}

// seedSQL is one of the evidence queries below with the session id filled in. The queries are
// fixed forensic SQL, kept verbatim: the read models must answer them as written.
func seedSQL(query, sid string) string { return strings.ReplaceAll(query, "$SESSION_ID", sid) }

const (
	seedProviderCalls = `SELECT COUNT(*) AS provider_calls
   FROM event
   WHERE aggregate_id = '$SESSION_ID'
     AND type = 'session.provider.request.1'
     AND json_extract(data, '$.status') = 'started'`
	seedToolCalls = `SELECT json_extract(data, '$.tool') AS tool, COUNT(*) AS calls
   FROM part
   WHERE session_id = '$SESSION_ID'
     AND json_extract(data, '$.type') = 'tool'
   GROUP BY tool
   ORDER BY tool`
	seedJobs = `SELECT id, status, report_delivery, report_input_id, result
   FROM agent_job
   WHERE parent_session_id = '$SESSION_ID'
   ORDER BY time_created, id`
	seedPlan = `SELECT session_id, revision, title, steps FROM work_plan
   WHERE session_id = '$SESSION_ID'`
	seedItems = `SELECT id, status, owner, dependencies FROM work_item
   WHERE session_id = '$SESSION_ID'
   ORDER BY time_created, id`
)

// rowsText renders query results as "a|b|c" lines; JSON booleans, which SQLite's json_extract
// returns as 1/0 and Postgres's as true/false, read as true/false.
func rowsText(rows [][]any) []string {
	out := []string{}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = fmt.Sprint(v)
			if v == nil {
				cells[i] = "NULL"
			}
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out
}

func (e *env) query(t *testing.T, q string, args ...any) []string {
	t.Helper()
	rows, err := e.rm.Writer.Queryx(e.rm.Writer.Rebind(q), args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var all [][]any
	for rows.Next() {
		vals, err := rows.SliceScan()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		all = append(all, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return rowsText(all)
}

func wantRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

// testTurnReadModels projects the forensic session (and another beside it) and reads it back
// with the fixed evidence SQL (seedProviderCalls and the others above) through `zuno db`'s
// read-only query path, and row by row.
func testTurnReadModels(t *testing.T, e *env) {
	ctx := context.Background()
	clock := &turnClock{}
	const sid = "ses_deep"
	steps := forensicTurns(t, sid, "")
	writeSteps(t, e.store, sid, clock, steps, nil)
	writeSteps(t, e.store, "ses_other", clock, forensicTurns(t, "ses_other", "@ses_other")[:6], nil)
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	seed := func(q string) []string {
		t.Helper()
		res, err := e.rm.Query(ctx, seedSQL(q, sid), 0)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return rowsText(res.Rows)
	}
	wantRows(t, "provider calls", seed(seedProviderCalls), []string{"5"})
	wantRows(t, "tool calls", seed(seedToolCalls), []string{"apply_patch|1", "grep|2", "read|2", "shell|1"})
	res, err := e.rm.Query(ctx, seedSQL(seedJobs, sid), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 0 || strings.Join(res.Columns, ",") != "id,status,report_delivery,report_input_id,result" {
		t.Fatalf("agent_job: %v %v", res.Columns, res.Rows)
	}
	wantRows(t, "work_plan", seed(seedPlan), nil)
	wantRows(t, "work_item", seed(seedItems), nil)

	// The transcript, in order: every part's id, type, turn, request, role or tool, and state.
	wantRows(t, "parts", e.query(t, `SELECT id, type, turn_id, request_id,
			COALESCE(json_extract(data, '$.role'), json_extract(data, '$.tool')),
			COALESCE(json_extract(data, '$.state.status'), json_extract(data, '$.text'))
		FROM part WHERE session_id = ? ORDER BY position, ordinal`, sid), []string{
		"user:msg_1|text|NULL|NULL|user|the parser drops the last token; fix it",
		"text:req_1|text|turn_1|req_1|assistant|Reproducing first.",
		"call_1|tool|turn_1|req_1|read|completed",
		"call_2|tool|turn_1|req_1|grep|completed",
		"call_3|tool|turn_1|req_1|read|error",
		"call_4|tool|turn_1|req_1|shell|blocked",
		"call_5|tool|turn_1|req_2|apply_patch|uncertain",
		"user:msg_2|text|NULL|NULL|user|continue",
		"user:msg_3|text|NULL|NULL|user|try again, one step",
		"call_6|tool|turn_3|req_4|grep|completed",
		"text:req_5|text|turn_3|req_5|assistant|The patch may not have applied: check parser.go before re-running it.",
	})
	// Whole data documents: the same text on both dialects.
	wantRows(t, "part data", e.query(t, `SELECT data FROM part WHERE session_id = ? AND id IN ('call_1', 'call_4', 'call_5', 'user:msg_1', 'text:req_1')
		ORDER BY position, ordinal`, sid), []string{
		`{"type":"text","role":"user","messageId":"msg_1","text":"the parser drops the last token; fix it"}`,
		`{"type":"text","role":"assistant","requestId":"req_1","text":"Reproducing first."}`,
		`{"type":"tool","tool":"read","callId":"call_1","input":{"path":"parser.go"},` +
			`"state":{"status":"completed","output":"package parser\n","metadata":{"details":{"lines":1,"sha256":"ab12"}},"durationMs":3}}`,
		`{"type":"tool","tool":"shell","callId":"call_4","input":"{\"command\": \"go test ./pars",` +
			`"state":{"status":"blocked","category":"invalid_arguments","message":"the arguments are not valid JSON",` +
			`"fix":"send the arguments as one JSON object","field":"arguments","output":"invalid_arguments: the arguments are not valid JSON"}}`,
		`{"type":"tool","tool":"apply_patch","callId":"call_5","input":{"patch":"*** Begin Patch\n*** End Patch"},` +
			`"state":{"status":"uncertain","errorCode":"uncertain","output":"uncertain: the run ended while apply_patch was running; inspect the files before retrying","recovered":true}}`,
	})
	recovered := e.query(t, `SELECT json_extract(data, '$.state.recovered'), json_extract(data, '$.state.errorCode'), json_extract(data, '$.input.patch')
		FROM part WHERE session_id = ? AND id = 'call_5'`, sid)
	if len(recovered) != 1 || !(strings.HasPrefix(recovered[0], "1|") || strings.HasPrefix(recovered[0], "true|")) ||
		!strings.HasSuffix(recovered[0], "|uncertain|*** Begin Patch\n*** End Patch") {
		t.Fatalf("recovered part: %q", recovered)
	}

	// Prompt receipts: one per request, metadata only.
	var assembled []*events.PromptAssembled
	for _, st := range steps {
		for _, p := range st.payloads {
			if a, ok := p.(*events.PromptAssembled); ok {
				assembled = append(assembled, a)
			}
		}
	}
	var want []string
	byID := map[string]*events.PromptAssembled{}
	for _, a := range assembled {
		byID[a.ReceiptID] = a
		h := a // the receipt recording this one's header
		for h.HeaderBase != nil {
			h = byID[h.HeaderBase.ReceiptID]
		}
		sections, _ := json.Marshal(h.Sections)
		names := []string{}
		for _, tl := range h.Tools {
			names = append(names, tl.Name)
		}
		tn, _ := json.Marshal(names)
		want = append(want, fmt.Sprintf("%s|%s|%s|%s|%s|%d|%d|%d|%s|%s", a.ReceiptID, sid, a.Model, a.AssemblyDigest, a.ActualDigest,
			a.EstimatedInputTokens, a.ContextWindow, len(h.Sections), sections, tn))
	}
	if assembled[1].HeaderBase == nil || assembled[3].HeaderBase == nil || assembled[4].HeaderBase != nil {
		t.Fatal("the fixture no longer stores receipts relative to a header base")
	}
	wantRows(t, "prompt_receipt", e.query(t, `SELECT id, session_id, model, assembly_digest, actual_digest, estimated_input_tokens,
			context_window, section_count, sections, tool_names FROM prompt_receipt WHERE session_id = ? ORDER BY position`, sid), want)
	wantRows(t, "receipt events", e.query(t, `SELECT r.id FROM prompt_receipt r JOIN event ev ON ev.id = r.event_id AND ev.position = r.position
		WHERE r.session_id = ? AND ev.type = 'session.prompt.assembled.1' AND json_extract(ev.data, '$.receiptId') = r.id
			AND r.time_created = ev.time ORDER BY r.position`, sid),
		[]string{"rcp_1", "rcp_2", "rcp_3", "rcp_4", "rcp_5"})
	wantRows(t, "receipt tools", e.query(t, `SELECT id, json_extract(tool_names, '$[0]'), CASE WHEN json_extract(sections, '$[0].sha256') IS NOT NULL THEN 'yes' ELSE 'no' END
		FROM prompt_receipt WHERE session_id = ? AND id IN ('rcp_1', 'rcp_5') ORDER BY position`, sid),
		[]string{"rcp_1|apply_patch|yes", "rcp_5|NULL|yes"})
	if len(assembled[0].Sections) < 3 || assembled[0].Tools == nil {
		t.Fatalf("unrealistic receipt: %d sections, tools %v", len(assembled[0].Sections), assembled[0].Tools)
	}
	// No content: not a blob's bytes, not the blobs map.
	for _, row := range e.query(t, `SELECT sections, tool_names FROM prompt_receipt`) {
		for _, a := range assembled {
			for _, blob := range a.Blobs {
				if len(blob) > 20 && strings.Contains(row, blob) {
					t.Fatalf("prompt_receipt holds blob content %q", blob)
				}
			}
		}
		if strings.Contains(row, "You are deep") || strings.Contains(row, "blobs") {
			t.Fatalf("prompt_receipt holds content: %s", row)
		}
	}

	// Provider requests at their latest status.
	wantRows(t, "provider_request", e.query(t, `SELECT id, turn_id, step, status, prompt_receipt_id, provider, model, finish_reason,
			input_tokens, output_tokens, error_code, step_limit_finalization, duration_ms
		FROM provider_request WHERE session_id = ? ORDER BY step`, sid), []string{
		"req_1|turn_1|1|completed|rcp_1|kiro-local|claude-opus-5|tool_calls|5210|164|NULL|0|2310",
		"req_2|turn_1|2|completed|rcp_2|kiro-local|claude-opus-5|tool_calls|5900|230|NULL|0|3120",
		"req_3|turn_2|3|failed|rcp_3|kiro-local|claude-opus-5|NULL|NULL|NULL|rate_limited|0|140",
		"req_4|turn_3|4|completed|rcp_4|kiro-local|claude-opus-5|tool_calls|6400|40|NULL|0|1500",
		"req_5|turn_3|5|completed|rcp_5|kiro-local|claude-opus-5|stop|6600|60|NULL|1|2050",
	})
	wantRows(t, "request times", e.query(t, `SELECT r.id FROM provider_request r
		WHERE r.session_id = ? AND r.time_created < r.time_updated
			AND r.time_created = (SELECT MIN(time) FROM event WHERE aggregate_id = r.session_id AND json_extract(data, '$.requestId') = r.id)
			AND r.time_updated = (SELECT MAX(time) FROM event WHERE aggregate_id = r.session_id AND type = 'session.provider.request.1'
				AND json_extract(data, '$.requestId') = r.id)
		ORDER BY r.step`, sid), []string{"req_1", "req_2", "req_3", "req_4", "req_5"})

	// The session was last updated when its last turn finished.
	wantRows(t, "session", e.query(t, `SELECT s.message_count FROM session s WHERE s.id = ?
		AND s.time_updated = (SELECT MAX(time) FROM event WHERE aggregate_id = s.id AND type = 'session.turn.finished.1')`, sid),
		[]string{"3"})
	// The other session is apart.
	wantRows(t, "other session", e.query(t, `SELECT COUNT(*) FROM part WHERE session_id = 'ses_other'`), []string{"6"})
}

func TestTurnReadModelsSQLite(t *testing.T)   { testTurnReadModels(t, sqliteEnv(t)) }
func TestTurnReadModelsPostgres(t *testing.T) { testTurnReadModels(t, postgresEnv(t)) }

// testPartTransitions follows the forensic session live, one command at a time, and checks
// each tool part's state and each request's status after every step.
func testPartTransitions(t *testing.T, e *env) {
	ctx := context.Background()
	const sid = "ses_live"
	want := map[string]struct{ parts, requests []string }{
		"request-1-started": {nil, []string{"req_1|started|NULL|NULL|NULL"}},
		"request-1-completed": {
			[]string{"call_1|pending", "call_2|pending", "call_3|pending", "call_4|pending"},
			[]string{"req_1|completed|5210|164|2310"}},
		"call-4-blocked":    {[]string{"call_1|pending", "call_2|pending", "call_3|pending", "call_4|blocked"}, nil},
		"calls-1-3-started": {[]string{"call_1|running", "call_2|running", "call_3|running", "call_4|blocked"}, nil},
		"call-1-settled":    {[]string{"call_1|completed", "call_2|running", "call_3|running", "call_4|blocked"}, nil},
		"call-3-settled":    {[]string{"call_1|completed", "call_2|running", "call_3|error", "call_4|blocked"}, nil},
		"call-2-settled":    {[]string{"call_1|completed", "call_2|completed", "call_3|error", "call_4|blocked"}, nil},
		"request-2-completed": {
			[]string{"call_1|completed", "call_2|completed", "call_3|error", "call_4|blocked", "call_5|pending"},
			[]string{"req_1|completed|5210|164|2310", "req_2|completed|5900|230|3120"}},
		"call-5-started":   {[]string{"call_1|completed", "call_2|completed", "call_3|error", "call_4|blocked", "call_5|running"}, nil},
		"turn-1-recovered": {[]string{"call_1|completed", "call_2|completed", "call_3|error", "call_4|blocked", "call_5|uncertain"}, nil},
		"request-3-started": {nil, []string{"req_1|completed|5210|164|2310", "req_2|completed|5900|230|3120",
			"req_3|started|NULL|NULL|NULL"}},
		"turn-2-failed": {nil, []string{"req_1|completed|5210|164|2310", "req_2|completed|5900|230|3120",
			"req_3|failed|NULL|NULL|140"}},
		"call-6-started": {[]string{"call_1|completed", "call_2|completed", "call_3|error", "call_4|blocked", "call_5|uncertain",
			"call_6|running"}, nil},
	}
	seen := 0
	writeSteps(t, e.store, sid, &turnClock{}, forensicTurns(t, sid, ""), func(step string) {
		if _, err := e.runner.CatchUp(ctx); err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
		w, ok := want[step]
		if !ok {
			return
		}
		seen++
		if w.parts != nil {
			wantRows(t, "parts after "+step, e.query(t, `SELECT id, json_extract(data, '$.state.status') FROM part
				WHERE session_id = ? AND type = 'tool' ORDER BY position, ordinal`, sid), w.parts)
		}
		if w.requests != nil {
			wantRows(t, "requests after "+step, e.query(t, `SELECT id, status, input_tokens, output_tokens, duration_ms
				FROM provider_request WHERE session_id = ? ORDER BY step`, sid), w.requests)
		}
	})
	if seen != len(want) {
		t.Fatalf("checked %d of %d steps", seen, len(want))
	}
	// A running part keeps its tool and input; settling keeps them too.
	wantRows(t, "kept", e.query(t, `SELECT json_extract(data, '$.tool'), json_extract(data, '$.input.pattern'), json_extract(data, '$.state.durationMs')
		FROM part WHERE session_id = ? AND id = 'call_6'`, sid), []string{"grep|EOF|5"})
}

func TestPartTransitionsSQLite(t *testing.T)   { testPartTransitions(t, sqliteEnv(t)) }
func TestPartTransitionsPostgres(t *testing.T) { testPartTransitions(t, postgresEnv(t)) }

// A call blocked with no pending part (its request not in the log) still gets its part.
func TestBlockedWithoutPendingPart(t *testing.T) {
	e := sqliteEnv(t)
	writeSteps(t, e.store, "ses_b", &turnClock{}, []turnStep{{name: "blocked", payloads: []events.Payload{&events.ToolBlocked{
		SessionID: "ses_b", TurnID: "turn_1", RequestID: "req_9", CallID: "call_9", Tool: "task", Category: "unavailable",
		Message: "task is not available to this agent", Output: "unavailable: task"}}}}, nil)
	if _, err := e.runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "part", e.query(t, `SELECT id, turn_id, request_id, data FROM part WHERE session_id = 'ses_b'`), []string{
		`call_9|turn_1|req_9|{"type":"tool","tool":"task","callId":"call_9",` +
			`"state":{"status":"blocked","category":"unavailable","message":"task is not available to this agent","output":"unavailable: task"}}`,
	})
}

// A read-model database made before 0002 (0001 applied only) gains the turn tables when it is
// opened again: migrations are picked up by file name, each applied once.
func testMigrationUpgrade(t *testing.T, e *env, reopen func() *env) {
	const m = "0002_turn_read_models.sql"
	// Every migration of the dialect's set (Postgres has more: its reader role and locks).
	var all []string
	entries, err := fs.ReadDir(migrations.FS, string(e.rm.Dialect)+"/readmodel")
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		all = append(all, en.Name())
	}
	wantRows(t, "applied", e.query(t, `SELECT name FROM schema_migration WHERE set_name = 'readmodel' ORDER BY name`), all)
	// prompt_receipt is a view over two tables since *_prompt_receipt_headers.sql, which is
	// applied again after 0002 and turns 0002's table into them once more; provider_request
	// and prompt_receipt_row have their keys of *_clustered_request_rows.sql again after it,
	// and agent_job its columns of *_agent_jobs.sql; prompt_receipt_key is made again by
	// *_prompt_receipt_keys.sql, and prompt_receipt_row a view over it where the log is here.
	for _, stmt := range []string{`DROP TABLE part`, `DROP VIEW prompt_receipt`, dropRelation(t, e, "prompt_receipt_row"),
		`DROP TABLE prompt_receipt_key`, `DROP TABLE prompt_receipt_header`,
		`DROP TABLE provider_request`, `DROP TABLE agent_job`, `DROP TABLE inbox`,
		`DELETE FROM schema_migration WHERE set_name = 'readmodel' AND (name = '` + m + `' OR name LIKE '%_prompt_receipt_headers.sql'
			OR name LIKE '%_clustered_request_rows.sql' OR name LIKE '%_agent_jobs.sql' OR name LIKE '%_prompt_receipt_keys.sql')`} {
		if _, err := e.rm.Writer.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	e = reopen()
	wantRows(t, "applied again", e.query(t, `SELECT name FROM schema_migration WHERE set_name = 'readmodel' ORDER BY name`), all)
	writeSteps(t, e.store, "ses_up", &turnClock{}, forensicTurns(t, "ses_up", "")[:5], nil)
	if _, err := e.runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "tools after upgrade", e.query(t, seedSQL(seedToolCalls, "ses_up")), []string{"grep|1", "read|2", "shell|1"})
	writeSteps(t, e.store, "ses_jobs", &turnClock{}, newJobLog("ses_jobs", "").steps(t)[:3], nil)
	if _, err := e.runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "jobs after upgrade", e.query(t, `SELECT id, status, background, child_session_id FROM agent_job ORDER BY id`),
		[]string{"job_a|queued|1|ses_child_a", "job_b|queued|1|ses_child_b", "job_c|queued|0|ses_child_c"})
}

// dropRelation is the statement dropping name, a table or (where the log shares the
// database) a view over the log.
func dropRelation(t *testing.T, e *env, name string) string {
	t.Helper()
	q := `SELECT type FROM sqlite_master WHERE name = ?`
	if e.rm.Dialect == sqldb.Postgres {
		q = `SELECT CASE relkind WHEN 'v' THEN 'view' ELSE 'table' END FROM pg_class WHERE oid = to_regclass(?)`
	}
	if got := e.query(t, q, name); len(got) == 1 && got[0] == "view" {
		return `DROP VIEW ` + name
	}
	return `DROP TABLE ` + name
}

func TestMigrationUpgradeSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	testMigrationUpgrade(t, sqliteEnvAt(t, path), func() *env { return sqliteEnvAt(t, path) })
}

func TestMigrationUpgradePostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	testMigrationUpgrade(t, postgresEnvAt(t, url), func() *env { return postgresEnvAt(t, url) })
}

// A database whose prompt_receipt is still the table of 0002, with rows, gets them back when
// *_prompt_receipt_headers.sql turns it into the view over prompt_receipt_row and
// prompt_receipt_header: the migration resets the projector, which derives the rows (and
// which receipts share a header) from the log at the next catch-up, as a rebuild does.
func testPromptReceiptHeadersMigration(t *testing.T, e *env, reopen func() *env) {
	ctx := context.Background()
	writeSteps(t, e.store, "ses_m", &turnClock{}, forensicTurns(t, "ses_m", ""), nil)
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	const all = `SELECT id, session_id, event_id, position, model, assembly_digest, actual_digest, estimated_input_tokens,
		context_window, section_count, sections, tool_names, time_created FROM prompt_receipt ORDER BY position`
	want := e.query(t, all)
	if len(want) != 5 {
		t.Fatalf("%d receipts", len(want))
	}
	headers := func(what string) {
		t.Helper()
		if got := e.query(t, `SELECT COUNT(*) FROM prompt_receipt_header`); len(got) != 1 || got[0] != "2" {
			t.Fatalf("%s: %v headers, want the one of rcp_1..rcp_4 and the one of rcp_5", what, got)
		}
	}
	headers("live")
	for _, stmt := range []string{`CREATE TABLE prompt_receipt_0002 AS SELECT * FROM prompt_receipt`, `DROP VIEW prompt_receipt`,
		dropRelation(t, e, "prompt_receipt_row"), `DROP TABLE prompt_receipt_key`, `DROP TABLE prompt_receipt_header`,
		`ALTER TABLE prompt_receipt_0002 RENAME TO prompt_receipt`,
		`DELETE FROM schema_migration WHERE set_name = 'readmodel' AND (name LIKE '%_prompt_receipt_headers.sql'
			OR name LIKE '%_clustered_request_rows.sql' OR name LIKE '%_prompt_receipt_keys.sql')`} {
		if _, err := e.rm.Writer.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	e = reopen()
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "migrated", e.query(t, all), want)
	headers("migrated")
	if _, err := e.runner.Rebuild(ctx, projections.PromptReceipts{}.Name()); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "rebuilt", e.query(t, all), want)
	headers("rebuilt")
}

func TestPromptReceiptHeadersMigrationSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	testPromptReceiptHeadersMigration(t, sqliteEnvAt(t, path), func() *env { return sqliteEnvAt(t, path) })
}

func TestPromptReceiptHeadersMigrationPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	testPromptReceiptHeadersMigration(t, postgresEnvAt(t, url), func() *env { return postgresEnvAt(t, url) })
}

// A database whose tool parts still repeat the call's permission decision and request id (a
// build before *_narrower_parts.sql) gets them back narrow: the migration resets the part
// projector, which derives every part again from the log at the next catch-up.
func testNarrowerPartsMigration(t *testing.T, e *env, reopen func() *env) {
	ctx := context.Background()
	writeSteps(t, e.store, "ses_n", &turnClock{}, permissionTurns(t, "ses_n", ""), nil)
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	const all = `SELECT id, turn_id, request_id, type, data, position, ordinal, time_created, time_updated FROM part ORDER BY position, ordinal`
	want := e.query(t, all)
	for _, stmt := range []string{
		`UPDATE part SET data = '{"type":"tool","requestId":"req_old","permission":{"source":"rule"}}' WHERE type = 'tool'`,
		`DELETE FROM schema_migration WHERE set_name = 'readmodel' AND name LIKE '%_narrower_parts.sql'`} {
		if _, err := e.rm.Writer.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.query(t, `SELECT COUNT(*) FROM part WHERE data LIKE '%requestId":"req_old%'`); len(got) != 1 || got[0] == "0" {
		t.Fatalf("old-form parts: %v", got)
	}
	e = reopen()
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "migrated", e.query(t, all), want)
}

func TestNarrowerPartsMigrationSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	testNarrowerPartsMigration(t, sqliteEnvAt(t, path), func() *env { return sqliteEnvAt(t, path) })
}

func TestNarrowerPartsMigrationPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	testNarrowerPartsMigration(t, postgresEnvAt(t, url), func() *env { return postgresEnvAt(t, url) })
}

// A receipt's header base is usually the session's receipt just before it, found at the end of
// the session's rows; a base further back, or in another session (a fork's first receipt may be
// relative to its source's), is found by id all the same.
func testReceiptHeaderBases(t *testing.T, e *env) {
	receipt := func(session, id string, section string, base string) events.Payload {
		p := &events.PromptAssembled{SessionID: session, ReceiptID: id, PromptReceipt: events.PromptReceipt{SchemaVersion: 1, Model: "m"}}
		if base != "" {
			p.HeaderBase = &events.PromptHeaderBase{ReceiptID: base, Digest: "d"}
		} else {
			p.Sections = []events.PromptSection{{ID: section}}
		}
		return p
	}
	clock := &turnClock{}
	writeSteps(t, e.store, "ses_a", clock, []turnStep{
		{name: "r1", payloads: []events.Payload{receipt("ses_a", "r1", "one", "")}},
		{name: "r2", payloads: []events.Payload{receipt("ses_a", "r2", "", "r1")}},
		{name: "r3", payloads: []events.Payload{receipt("ses_a", "r3", "three", "")}},
		{name: "r4", payloads: []events.Payload{receipt("ses_a", "r4", "", "r1")}},
	}, nil)
	writeSteps(t, e.store, "ses_b", clock, []turnStep{
		{name: "r5", payloads: []events.Payload{receipt("ses_b", "r5", "", "r3")}},
		{name: "r6", payloads: []events.Payload{receipt("ses_b", "r6", "", "r5")}},
	}, nil)
	if _, err := e.runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "headers", e.query(t, `SELECT id, json_extract(sections, '$[0].id') FROM prompt_receipt ORDER BY position`),
		[]string{"r1|one", "r2|one", "r3|three", "r4|one", "r5|three", "r6|three"})
}

func TestReceiptHeaderBasesSQLite(t *testing.T)   { testReceiptHeaderBases(t, sqliteEnv(t)) }
func TestReceiptHeaderBasesPostgres(t *testing.T) { testReceiptHeaderBases(t, postgresEnv(t)) }
