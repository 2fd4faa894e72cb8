package transcript_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

const (
	sid = "ses_1"
	tid = "turn_1"
)

func created() events.SessionCreated {
	return events.SessionCreated{SessionID: sid, Title: "t", Agent: "build"}
}

func user(text string) events.UserMessageAppended {
	return events.UserMessageAppended{SessionID: sid, MessageID: "msg_" + text, Text: text}
}

func turnStarted(id string) events.TurnStarted {
	return events.TurnStarted{SessionID: sid, TurnID: id, MessageID: "msg_" + id, Agent: "build", Provider: "scripted", Model: "m"}
}

func turnFinished(id string) events.TurnFinished {
	return events.TurnFinished{SessionID: sid, TurnID: id, Reason: events.FinishCompleted}
}

func request(turnID, reqID string, step int, status string) events.ProviderRequest {
	return events.ProviderRequest{SessionID: sid, TurnID: turnID, RequestID: reqID, Step: step, Status: status,
		PromptReceiptID: "rcp_" + reqID, Provider: "scripted", Model: "m"}
}

func started(reqID string, step int) events.ProviderRequest {
	return request(tid, reqID, step, events.RequestStarted)
}

func completed(reqID string, step int, text string, calls ...string) events.ProviderRequest {
	r := request(tid, reqID, step, events.RequestCompleted)
	r.Response = &events.ProviderResponse{Text: text, Usage: events.Usage{InputTokens: 10, OutputTokens: 2}}
	for _, c := range calls {
		r.Response.ToolCalls = append(r.Response.ToolCalls, events.ToolCall{ID: c, Name: "tool_" + c, Arguments: `{"n":"` + c + `"}`})
	}
	return r
}

func failedReq(reqID string, step int) events.ProviderRequest {
	r := request(tid, reqID, step, events.RequestFailed)
	r.Error = &events.ErrorInfo{Code: model.CodeRateLimit, Message: "slow down"}
	return r
}

func toolStarted(reqID, callID string) events.ToolStarted {
	return events.ToolStarted{SessionID: sid, TurnID: tid, RequestID: reqID, CallID: callID, Tool: "tool_" + callID}
}

func toolSettled(reqID, callID string, outcome tools.Outcome, output string) events.ToolSettled {
	return events.ToolSettled{SessionID: sid, TurnID: tid, RequestID: reqID, CallID: callID, Tool: "tool_" + callID,
		Outcome: string(outcome), Output: output}
}

func receipt(callID string) events.VerificationReceipt {
	return events.VerificationReceipt{ReceiptID: "rcp_" + callID, SessionID: sid, TurnID: tid, CallID: callID}
}

func toolBlocked(reqID, callID, output string) events.ToolBlocked {
	return events.ToolBlocked{SessionID: sid, TurnID: tid, RequestID: reqID, CallID: callID, Tool: "tool_" + callID,
		Category: "unavailable", Message: "no such tool", Output: output}
}

func asked(callID string) events.PermissionAsked {
	return events.PermissionAsked{SessionID: sid, TurnID: tid, RequestID: "r1", CallID: callID, AskID: "ask_" + callID, Tool: "tool_" + callID}
}

func suspended(turnID string) events.TurnSuspended {
	return events.TurnSuspended{SessionID: sid, TurnID: turnID, Awaiting: []events.Awaited{{Kind: "permission", AskID: "ask_c1", CallID: "c1"}}}
}

func resumed(turnID string) events.TurnResumed {
	return events.TurnResumed{SessionID: sid, TurnID: turnID, Input: events.InputAnswer, TriggerEventID: "evt_1"}
}

// fold returns the state of the events, checking each one first: a fixture that breaks the
// transcript's order is a broken test.
func fold(t *testing.T, ps ...events.Payload) *transcript.State {
	t.Helper()
	s := transcript.New()
	for i, p := range ps {
		if err := s.Check(p); err != nil {
			t.Fatalf("fixture event %d (%T) refused: %v", i, p, err)
		}
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// open is a session with an open turn whose first request completed asking for calls.
func open(calls ...string) []events.Payload {
	return []events.Payload{created(), user("hi"), turnStarted(tid), started("r1", 1), completed("r1", 1, "looking", calls...)}
}

func with(base []events.Payload, more ...events.Payload) []events.Payload {
	return append(append([]events.Payload{}, base...), more...)
}

func TestCheck(t *testing.T) {
	order, turnOpen := transcript.CodeTranscriptOrder, transcript.CodeTurnOpen
	otherTurn := request("turn_2", "r2", 2, events.RequestStarted)
	cases := []struct {
		name  string
		state []events.Payload
		event events.Payload
		code  string // "" when the event is accepted
		// words the message must contain (the ids it is about).
		says []string
	}{
		// Accepted.
		{name: "first turn", state: []events.Payload{created(), user("hi")}, event: turnStarted(tid)},
		{name: "turn after a finished one", state: with(open(), turnFinished(tid)), event: turnStarted("turn_2")},
		{name: "request in the open turn", state: []events.Payload{created(), turnStarted(tid)}, event: started("r1", 1)},
		{name: "request completes", state: []events.Payload{created(), turnStarted(tid), started("r1", 1)}, event: completed("r1", 1, "x")},
		{name: "request fails", state: []events.Payload{created(), turnStarted(tid), started("r1", 1)}, event: failedReq("r1", 1)},
		{name: "next request after every call settled",
			state: with(open("c1", "c2"), toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "ok"), toolBlocked("r1", "c2", "no")),
			event: started("r2", 2)},
		{name: "call starts", state: open("c1"), event: toolStarted("r1", "c1")},
		{name: "started call settles", state: with(open("c1"), toolStarted("r1", "c1")), event: toolSettled("r1", "c1", tools.OutcomeError, "boom")},
		{name: "unstarted call settles cancelled", state: open("c1"), event: toolSettled("r1", "c1", tools.OutcomeCancelled, "never ran")},
		{name: "unstarted call blocked", state: open("c1"), event: toolBlocked("r1", "c1", "no")},
		{name: "turn finishes", state: with(open("c1"), toolBlocked("r1", "c1", "no")), event: turnFinished(tid)},
		{name: "turn finishes after a failed request", state: []events.Payload{created(), turnStarted(tid), started("r1", 1), failedReq("r1", 1)},
			event: turnFinished(tid)},
		{name: "other kinds are not checked", state: nil, event: user("again")},
		{name: "a running call's verification receipt", state: with(open("c1"), toolStarted("r1", "c1")), event: receipt("c1")},
		{name: "a receipt of a call not started", state: open("c1"), event: receipt("c1"), code: order, says: []string{"rcp_c1", "c1"}},
		{name: "a receipt of a settled call", state: with(open("c1"), toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "ok")),
			event: receipt("c1"), code: order, says: []string{"c1"}},
		{name: "a receipt of an unknown call", state: with(open("c1"), toolStarted("r1", "c1")), event: receipt("c9"), code: order, says: []string{"c9"}},

		// Refused: turns.
		{name: "turn started while open", state: []events.Payload{created(), turnStarted(tid)}, event: turnStarted("turn_2"),
			code: turnOpen, says: []string{tid, sid}},
		{name: "turn finished with none open", state: []events.Payload{created()}, event: turnFinished(tid),
			code: order, says: []string{tid, "not open"}},
		{name: "turn finished names another turn", state: []events.Payload{created(), turnStarted(tid)}, event: turnFinished("turn_2"),
			code: order, says: []string{"turn_2"}},
		{name: "turn finished while request open", state: []events.Payload{created(), turnStarted(tid), started("r1", 1)},
			event: turnFinished(tid), code: order, says: []string{tid, "r1"}},
		{name: "turn finished while a call is unsettled", state: with(open("c1", "c2"), toolBlocked("r1", "c1", "no"), toolStarted("r1", "c2")),
			event: turnFinished(tid), code: order, says: []string{"c2", "no result"}},
		{name: "turn finished while a call never started", state: open("c1"),
			event: turnFinished(tid), code: order, says: []string{"c1"}},

		// Refused: provider requests.
		{name: "request outside any turn", state: []events.Payload{created()}, event: started("r1", 1),
			code: order, says: []string{"r1", "outside"}},
		{name: "request of another turn", state: []events.Payload{created(), turnStarted(tid)}, event: otherTurn,
			code: order, says: []string{"r2", "outside"}},
		{name: "request after the turn finished", state: with(open(), turnFinished(tid)), event: started("r2", 2),
			code: order, says: []string{"r2"}},
		{name: "second request while one is open", state: []events.Payload{created(), turnStarted(tid), started("r1", 1)},
			event: started("r2", 2), code: order, says: []string{"r2", "r1"}},
		{name: "request while a call has no result", state: with(open("c1", "c2"), toolBlocked("r1", "c1", "no")),
			event: started("r2", 2), code: order, says: []string{"r2", "c2"}},
		{name: "request while a started call has no result", state: with(open("c1"), toolStarted("r1", "c1")),
			event: started("r2", 2), code: order, says: []string{"c1"}},
		{name: "completed without being started", state: []events.Payload{created(), turnStarted(tid)},
			event: completed("r1", 1, "x"), code: order, says: []string{"r1", "without being started"}},
		{name: "completed names another request", state: []events.Payload{created(), turnStarted(tid), started("r1", 1)},
			event: completed("r9", 1, "x"), code: order, says: []string{"r9"}},
		{name: "failed twice", state: []events.Payload{created(), turnStarted(tid), started("r1", 1), failedReq("r1", 1)},
			event: failedReq("r1", 1), code: order, says: []string{"r1"}},

		// Refused: calls.
		{name: "unknown call starts", state: open("c1"), event: toolStarted("r1", "c9"), code: order, says: []string{"c9"}},
		{name: "call starts twice", state: with(open("c1"), toolStarted("r1", "c1")), event: toolStarted("r1", "c1"),
			code: order, says: []string{"c1"}},
		{name: "blocked call starts", state: with(open("c1"), toolBlocked("r1", "c1", "no")), event: toolStarted("r1", "c1"),
			code: order, says: []string{"c1"}},
		{name: "call starts with no turn open", state: []events.Payload{created()}, event: toolStarted("r1", "c1"),
			code: order, says: []string{"c1"}},
		{name: "unknown call settles", state: open("c1"), event: toolSettled("r1", "c9", tools.OutcomeCompleted, "ok"),
			code: order, says: []string{"c9", "not an open requested call"}},
		{name: "unknown call settles cancelled", state: open("c1"), event: toolSettled("r1", "c9", tools.OutcomeCancelled, "x"),
			code: order, says: []string{"c9"}},
		{name: "unstarted call settles completed", state: open("c1"), event: toolSettled("r1", "c1", tools.OutcomeCompleted, "ok"),
			code: order, says: []string{"c1", "without being started"}},
		{name: "unstarted call settles uncertain", state: open("c1"), event: toolSettled("r1", "c1", tools.OutcomeUncertain, "?"),
			code: order, says: []string{"c1", "without being started"}},
		{name: "call settles twice", state: with(open("c1"), toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "ok")),
			event: toolSettled("r1", "c1", tools.OutcomeCompleted, "ok"), code: order, says: []string{"c1"}},
		{name: "blocked call settles", state: with(open("c1"), toolBlocked("r1", "c1", "no")),
			event: toolSettled("r1", "c1", tools.OutcomeCancelled, "x"), code: order, says: []string{"c1"}},
		{name: "call of an earlier response settles", state: with(open("c1"), toolBlocked("r1", "c1", "no"), started("r2", 2), completed("r2", 2, "", "c2")),
			event: toolSettled("r1", "c1", tools.OutcomeCancelled, "x"), code: order, says: []string{"c1"}},
		{name: "started call blocked", state: with(open("c1"), toolStarted("r1", "c1")), event: toolBlocked("r1", "c1", "no"),
			code: order, says: []string{"c1", "blocked"}},
		{name: "settled call blocked", state: with(open("c1"), toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "ok")),
			event: toolBlocked("r1", "c1", "no"), code: order, says: []string{"c1"}},
		{name: "blocked twice", state: with(open("c1"), toolBlocked("r1", "c1", "no")), event: toolBlocked("r1", "c1", "no"),
			code: order, says: []string{"c1"}},
		{name: "unknown call blocked", state: open("c1"), event: toolBlocked("r1", "c9", "no"), code: order, says: []string{"c9"}},

		// Suspension and resumption (docs/turns.md, "Suspended turns").
		{name: "a turn waiting on an ask suspends", state: with(open("c1"), asked("c1")), event: suspended(tid)},
		{name: "a suspended turn resumes", state: with(open("c1"), asked("c1"), suspended(tid)), event: resumed(tid)},
		{name: "a turn left waiting by a dead process resumes", state: with(open("c1"), asked("c1")), event: resumed(tid)},
		{name: "a resumed turn suspends again at its next ask", state: with(open("c1", "c2"), asked("c1"), suspended(tid), resumed(tid), asked("c2")),
			event: suspended(tid)},
		{name: "suspended with nothing asked", state: open("c1"), event: suspended(tid), code: order, says: []string{tid, "waiting on an ask"}},
		{name: "suspended twice", state: with(open("c1"), asked("c1"), suspended(tid)), event: suspended(tid), code: order, says: []string{tid}},
		{name: "suspended while a call runs", state: with(open("c1", "c2"), asked("c1"), toolStarted("r1", "c2")), event: suspended(tid),
			code: order, says: []string{tid}},
		{name: "suspended while a request is open", state: []events.Payload{created(), turnStarted(tid), started("r1", 1)}, event: suspended(tid),
			code: order, says: []string{tid}},
		{name: "another turn suspended", state: with(open("c1"), asked("c1")), event: suspended("turn_2"), code: order, says: []string{"turn_2"}},
		{name: "resumed with no turn open", state: []events.Payload{created()}, event: resumed(tid), code: order, says: []string{tid}},
		{name: "resumed when nothing is asked", state: with(open("c1"), toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "ok")),
			event: resumed(tid), code: order, says: []string{tid}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fold(t, tc.state...)
			err := s.Check(tc.event)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Check(%T) = %v, want accepted", tc.event, err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) {
				t.Fatalf("Check(%T) = %v (%T), want a *domain.Error %s", tc.event, err, err, tc.code)
			}
			if de.Code() != tc.code {
				t.Fatalf("code = %q, want %q (%v)", de.Code(), tc.code, err)
			}
			if de.Fix == "" {
				t.Errorf("error %v has no fix", err)
			}
			for _, w := range tc.says {
				if !strings.Contains(de.Message, w) {
					t.Errorf("message %q does not say %q", de.Message, w)
				}
			}
			if tc.code == turnOpen && de.ID != tid {
				t.Errorf("turn_open ID = %q, want the open turn %q", de.ID, tid)
			}
			// A refused event is not folded by the caller, and Check itself changes nothing.
			before := fold(t, tc.state...)
			if !reflect.DeepEqual(s, before) {
				t.Errorf("Check changed the state")
			}
		})
	}
}

func TestEvolveMessagesInModelOrder(t *testing.T) {
	s := fold(t, with(open("c1", "c2", "c3"),
		// Results settle in reverse order; each lands in its call's slot.
		toolStarted("r1", "c3"),
		toolSettled("r1", "c3", tools.OutcomeCompleted, "three"),
		toolStarted("r1", "c2"),
		toolSettled("r1", "c2", tools.OutcomeError, "two failed"),
		toolBlocked("r1", "c1", "one blocked"),
		started("r2", 2),
		completed("r2", 2, "done"),
		turnFinished(tid),
	)...)
	want := []model.Message{
		{Role: model.RoleUser, Text: "hi"},
		{Role: model.RoleAssistant, Text: "looking", ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "tool_c1", Arguments: `{"n":"c1"}`},
			{ID: "c2", Name: "tool_c2", Arguments: `{"n":"c2"}`},
			{ID: "c3", Name: "tool_c3", Arguments: `{"n":"c3"}`},
		}},
		{Role: model.RoleTool, ToolCallID: "c1", Text: "one blocked", IsError: true},
		{Role: model.RoleTool, ToolCallID: "c2", Text: "two failed", IsError: true},
		{Role: model.RoleTool, ToolCallID: "c3", Text: "three"},
		{Role: model.RoleAssistant, Text: "done"},
	}
	if !reflect.DeepEqual(s.Messages, want) {
		t.Fatalf("Messages =\n%+v\nwant\n%+v", s.Messages, want)
	}
	if s.Pending() {
		t.Error("Pending() = true with every call settled")
	}
	if s.Open != nil {
		t.Errorf("Open = %+v after the turn finished", s.Open)
	}
	if err := (model.Request{Model: "m", Messages: s.Messages}).Validate(); err != nil {
		t.Errorf("conversation does not validate: %v", err)
	}
}

func TestEvolvePendingAndSlots(t *testing.T) {
	s := fold(t, open("c1", "c2")...)
	if !s.Pending() {
		t.Fatal("Pending() = false with two calls awaiting results")
	}
	// The slots are there, empty, before any result.
	if n := len(s.Messages); n != 4 {
		t.Fatalf("len(Messages) = %d, want user, assistant and two result slots", n)
	}
	for i, id := range []string{"c1", "c2"} {
		m := s.Messages[2+i]
		if m.Role != model.RoleTool || m.ToolCallID != id || m.Text != "" {
			t.Errorf("slot %d = %+v, want an empty result slot for %s", i, m, id)
		}
	}
	if got := s.Open.Calls; len(got) != 2 || got[0].ID != "c1" || got[1].ID != "c2" || got[0].RequestID != "r1" {
		t.Fatalf("Open.Calls = %+v", got)
	}
	if err := s.Evolve(toolStarted("r1", "c2")); err != nil {
		t.Fatal(err)
	}
	if c := s.Open.Calls[1]; !c.Started || c.Settled {
		t.Errorf("after started, c2 = %+v", c)
	}
	if err := s.Evolve(toolSettled("r1", "c2", tools.OutcomeCompleted, "ok")); err != nil {
		t.Fatal(err)
	}
	if c := s.Open.Calls[1]; !c.Settled {
		t.Errorf("after settled, c2 = %+v", c)
	}
	if !s.Pending() {
		t.Error("Pending() = false while c1 still awaits its result")
	}
	if err := s.Evolve(toolBlocked("r1", "c1", "no")); err != nil {
		t.Fatal(err)
	}
	if c := s.Open.Calls[0]; c.Started || !c.Settled {
		t.Errorf("after blocked, c1 = %+v, want settled without starting", c)
	}
	if s.Pending() {
		t.Error("Pending() = true with every call settled")
	}
	// A second result for a call already answered does not overwrite the first.
	if err := s.Evolve(toolSettled("r1", "c2", tools.OutcomeError, "late")); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages[3]; m.Text != "ok" || m.IsError {
		t.Errorf("c2's result was overwritten: %+v", m)
	}
}

func TestEvolveIsError(t *testing.T) {
	cases := []struct {
		name    string
		result  events.Payload
		started bool
		isError bool
	}{
		{"completed", toolSettled("r1", "c1", tools.OutcomeCompleted, "out"), true, false},
		{"error", toolSettled("r1", "c1", tools.OutcomeError, "out"), true, true},
		{"uncertain", toolSettled("r1", "c1", tools.OutcomeUncertain, "out"), true, true},
		{"cancelled", toolSettled("r1", "c1", tools.OutcomeCancelled, "out"), false, true},
		{"blocked", toolBlocked("r1", "c1", "out"), false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := open("c1")
			if tc.started {
				ps = with(ps, toolStarted("r1", "c1"))
			}
			s := fold(t, with(ps, tc.result)...)
			got := s.Messages[len(s.Messages)-1]
			want := model.Message{Role: model.RoleTool, ToolCallID: "c1", Text: "out", IsError: tc.isError}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("result = %+v, want %+v", got, want)
			}
		})
	}
}

func TestEvolveEmptyResponseAddsNoMessage(t *testing.T) {
	empty := request(tid, "r1", 1, events.RequestCompleted)
	empty.Response = &events.ProviderResponse{Usage: events.Usage{InputTokens: 7, OutputTokens: 1}}
	s := fold(t, created(), user("hi"), turnStarted(tid), started("r1", 1), empty)
	if want := []model.Message{{Role: model.RoleUser, Text: "hi"}}; !reflect.DeepEqual(s.Messages, want) {
		t.Fatalf("Messages = %+v, want only the user message", s.Messages)
	}
	if s.Open.Request != nil {
		t.Errorf("Open.Request = %+v after completion", s.Open.Request)
	}
	if s.Open.Usage != (events.Usage{InputTokens: 7, OutputTokens: 1}) {
		t.Errorf("usage of an empty response was not counted: %+v", s.Open.Usage)
	}

	// Nor does a completion without a response, or a failure.
	noResp := request(tid, "r2", 2, events.RequestCompleted)
	s = fold(t, created(), user("hi"), turnStarted(tid), started("r1", 1), failedReq("r1", 1))
	s2 := fold(t, created(), user("hi"), turnStarted(tid), started("r2", 2), noResp)
	for _, st := range []*transcript.State{s, s2} {
		if len(st.Messages) != 1 || st.Open.Request != nil || len(st.Open.Calls) != 0 {
			t.Errorf("state = messages %+v, request %+v, calls %+v", st.Messages, st.Open.Request, st.Open.Calls)
		}
	}

	// A response with calls and no text still adds the assistant message, the calls need it.
	s = fold(t, created(), user("hi"), turnStarted(tid), started("r1", 1), completed("r1", 1, "", "c1"))
	if m := s.Messages[1]; m.Role != model.RoleAssistant || m.Text != "" || len(m.ToolCalls) != 1 {
		t.Errorf("assistant message = %+v", m)
	}
}

func TestEvolveCounters(t *testing.T) {
	blobs1 := events.PromptAssembled{SessionID: sid, ReceiptID: "rcp_1", PromptReceipt: events.PromptReceipt{Blobs: map[string]string{"d1": "a", "d2": "b"}}}
	blobs2 := events.PromptAssembled{SessionID: sid, ReceiptID: "rcp_2", PromptReceipt: events.PromptReceipt{Blobs: map[string]string{"d3": "c"}}}
	blobs3 := events.PromptAssembled{SessionID: sid, ReceiptID: "rcp_3"}
	s := fold(t,
		created(), user("one"), turnStarted(tid),
		blobs1, started("r1", 1), completed("r1", 1, "", "c1"),
		toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "ok"),
		blobs2, started("r2", 2), completed("r2", 2, "first answer"),
		turnFinished(tid),
	)
	if s.SessionID != sid || s.Agent != "build" {
		t.Errorf("SessionID, Agent = %q, %q", s.SessionID, s.Agent)
	}
	if s.Steps != 2 || s.Turns != 1 || s.LastReceiptID != "rcp_2" {
		t.Errorf("Steps %d Turns %d LastReceiptID %q, want 2, 1, rcp_2", s.Steps, s.Turns, s.LastReceiptID)
	}
	if want := map[string]bool{"d1": true, "d2": true, "d3": true}; !reflect.DeepEqual(s.Blobs, want) {
		t.Errorf("Blobs = %v, want %v", s.Blobs, want)
	}

	// A second turn: steps go on counting for the session, and start again for the turn.
	const tid2 = "turn_2"
	for _, p := range []events.Payload{user("two"), turnStarted(tid2), blobs3, request(tid2, "r3", 3, events.RequestStarted)} {
		if err := s.Check(p); err != nil {
			t.Fatal(err)
		}
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	if s.Steps != 3 || s.Turns != 2 || s.LastReceiptID != "rcp_3" || len(s.Blobs) != 3 {
		t.Errorf("Steps %d Turns %d LastReceiptID %q Blobs %d, want 3, 2, rcp_3, 3", s.Steps, s.Turns, s.LastReceiptID, len(s.Blobs))
	}
	o := s.Open
	if o == nil || o.TurnID != tid2 || o.MessageID != "msg_"+tid2 || o.Agent != "build" || o.Steps != 1 || o.Usage != (events.Usage{}) {
		t.Fatalf("Open = %+v", o)
	}
	if o.Request == nil || o.Request.RequestID != "r3" || o.Request.Step != 3 {
		t.Errorf("Open.Request = %+v", o.Request)
	}

	// Usage adds up over a turn's responses.
	s = fold(t, with(open("c1"), toolBlocked("r1", "c1", "no"), started("r2", 2), completed("r2", 2, "x"))...)
	if want := (events.Usage{InputTokens: 20, OutputTokens: 4}); s.Open.Usage != want || s.Open.Steps != 2 {
		t.Errorf("Open.Usage %+v Steps %d, want %+v and 2", s.Open.Usage, s.Open.Steps, want)
	}
}

// One payload form: the registry decodes to values, as Decide returns them. A pointer, or a
// payload the transcript does not know, is an unexpected_event error and changes nothing.
func TestEvolveRefusesOtherForms(t *testing.T) {
	c, u := created(), user("hi")
	for _, p := range []events.Payload{&c, &u, events.WorkPlanCreated{}} {
		s := fold(t, created(), user("before"))
		err := s.Evolve(p)
		if !domain.HasCode(err, domain.CodeUnexpectedEvent) {
			t.Errorf("%T: err %v, want unexpected_event", p, err)
		}
		if len(s.Messages) != 1 {
			t.Errorf("%T changed the state: %+v", p, s.Messages)
		}
	}
}

func TestRecoverNothingOpen(t *testing.T) {
	if got := transcript.New().Recover(true); got != nil {
		t.Errorf("empty session: Recover = %+v, want nil", got)
	}
	s := fold(t, with(open(), turnFinished(tid))...)
	if got := s.Recover(true); got != nil {
		t.Errorf("finished turn: Recover = %+v, want nil", got)
	}
}

func interruptedTurn(steps int, usage events.Usage, recovered bool) events.TurnFinished {
	return events.TurnFinished{SessionID: sid, TurnID: tid, Reason: events.FinishInterrupted, Steps: steps, Usage: usage,
		Recovered: recovered, Error: &events.ErrorInfo{Code: transcript.CodeInterrupted, Message: "the run stopped before the turn finished"}}
}

func TestRecoverOpenRequest(t *testing.T) {
	for _, recovered := range []bool{true, false} {
		fin := &events.StepLimitFinalization{Limit: 1, Instruction: "stop", InstructionDigest: "abc"}
		req := started("r2", 2)
		req.StepLimitFinalization = fin
		s := fold(t, with(open("c1"), toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "ok"), req)...)
		got := s.Recover(recovered)
		want := []events.Payload{
			events.ProviderRequest{SessionID: sid, TurnID: tid, RequestID: "r2", Step: 2, Status: events.RequestFailed,
				PromptReceiptID: "rcp_r2", Provider: "scripted", Model: "m", StepLimitFinalization: fin,
				Error: &events.ErrorInfo{Code: transcript.CodeInterrupted, Message: "the run stopped before the provider answered"}},
			interruptedTurn(2, events.Usage{InputTokens: 10, OutputTokens: 2}, recovered),
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Recover(%v) =\n%+v\nwant\n%+v", recovered, got, want)
		}
		foldRecovery(t, s, got)
	}
}

func TestRecoverOpenRequestFirstStep(t *testing.T) {
	s := fold(t, created(), user("hi"), turnStarted(tid), started("r1", 1))
	got := s.Recover(true)
	if len(got) != 2 {
		t.Fatalf("Recover = %+v, want the failed request and the finished turn", got)
	}
	if r, ok := got[0].(events.ProviderRequest); !ok || r.Status != events.RequestFailed || r.RequestID != "r1" || r.Step != 1 ||
		r.Error == nil || r.Error.Code != transcript.CodeInterrupted {
		t.Errorf("first event = %+v", got[0])
	}
	if !reflect.DeepEqual(got[1], interruptedTurn(1, events.Usage{}, true)) {
		t.Errorf("second event = %+v", got[1])
	}
	foldRecovery(t, s, got)
}

func TestRecoverCalls(t *testing.T) {
	for _, recovered := range []bool{true, false} {
		s := fold(t, with(open("c1", "c2", "c3", "c4", "c5", "c6"),
			toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "one"), // settled: untouched
			toolStarted("r1", "c2"),                                 // started, unsettled: uncertain
			toolBlocked("r1", "c4", "blocked"),                      // settled by blocking: untouched
			toolStarted("r1", "c5"),                                 // started, unsettled: uncertain
			toolSettled("r1", "c6", tools.OutcomeCancelled, "gone"), // settled: untouched
			// c3 never started: cancelled
		)...)
		before := fold(t, with(open("c1", "c2", "c3", "c4", "c5", "c6"),
			toolStarted("r1", "c1"), toolSettled("r1", "c1", tools.OutcomeCompleted, "one"), toolStarted("r1", "c2"),
			toolBlocked("r1", "c4", "blocked"), toolStarted("r1", "c5"), toolSettled("r1", "c6", tools.OutcomeCancelled, "gone"))...)
		got := s.Recover(recovered)
		uncertain := func(id string) events.ToolSettled {
			return events.ToolSettled{SessionID: sid, TurnID: tid, RequestID: "r1", CallID: id, Tool: "tool_" + id,
				Outcome: string(tools.OutcomeUncertain), ErrorCode: string(tools.OutcomeUncertain),
				Output: transcript.UncertainText, Recovered: recovered}
		}
		want := []events.Payload{
			uncertain("c2"),
			uncertain("c5"),
			events.ToolSettled{SessionID: sid, TurnID: tid, RequestID: "r1", CallID: "c3", Tool: "tool_c3",
				Outcome: string(tools.OutcomeCancelled), ErrorCode: transcript.CodeInterrupted,
				Output: transcript.CancelledText, Recovered: recovered},
			interruptedTurn(1, events.Usage{InputTokens: 10, OutputTokens: 2}, recovered),
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Recover(%v) =\n%+v\nwant\n%+v", recovered, got, want)
		}
		// Recover decides; it does not change the state, and says the same thing twice.
		if !reflect.DeepEqual(s, before) {
			t.Error("Recover changed the state")
		}
		if again := s.Recover(recovered); !reflect.DeepEqual(again, got) {
			t.Errorf("second Recover = %+v", again)
		}
		foldRecovery(t, s, got)
		results := map[string]model.Message{}
		for _, m := range s.Messages {
			if m.Role == model.RoleTool {
				results[m.ToolCallID] = m
			}
		}
		for id, text := range map[string]string{"c1": "one", "c2": transcript.UncertainText, "c3": transcript.CancelledText,
			"c4": "blocked", "c5": transcript.UncertainText, "c6": "gone"} {
			if results[id].Text != text {
				t.Errorf("result of %s = %q, want %q", id, results[id].Text, text)
			}
			if want := id != "c1"; results[id].IsError != want {
				t.Errorf("result of %s IsError = %v, want %v", id, results[id].IsError, want)
			}
		}
	}
}

// foldRecovery appends the recovery events as the driver does, each checked first, and
// checks that the conversation is whole again.
func foldRecovery(t *testing.T, s *transcript.State, recovery []events.Payload) {
	t.Helper()
	for i, p := range recovery {
		if err := s.Check(p); err != nil {
			t.Fatalf("recovery event %d (%T) refused by Check: %v", i, p, err)
		}
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	if s.Open != nil {
		t.Errorf("Open = %+v after recovery", s.Open)
	}
	if s.Pending() {
		t.Error("Pending() = true after recovery")
	}
	if err := (model.Request{Model: "m", Messages: s.Messages}).Validate(); err != nil {
		t.Errorf("recovered conversation does not validate: %v", err)
	}
	if got := s.Recover(true); got != nil {
		t.Errorf("Recover after recovery = %+v, want nil", got)
	}
	// The session goes on: a new turn may start.
	if err := s.Check(turnStarted("turn_next")); err != nil {
		t.Errorf("new turn refused after recovery: %v", err)
	}
}

// Awaiting is what a turn may be suspended on: the asked calls that have not started, when
// nothing is in flight.
func TestAwaiting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state []events.Payload
		want  []string
	}{
		{"an asked call", with(open("c1"), asked("c1")), []string{"ask_c1"}},
		{"two asked calls of a group, one answered and waiting for the other", with(open("c1", "c2"), asked("c1"), asked("c2")), []string{"ask_c1", "ask_c2"}},
		{"an asked call beside a settled one", with(open("c1", "c2"), toolBlocked("r1", "c1", "no"), asked("c2")), []string{"ask_c2"}},
		{"nothing asked", open("c1"), nil},
		{"a call running: only recovery settles it", with(open("c1", "c2"), asked("c1"), toolStarted("r1", "c2")), nil},
		{"a request in flight", []events.Payload{created(), turnStarted(tid), started("r1", 1)}, nil},
		{"an asked call that started", with(open("c1"), asked("c1"), toolStarted("r1", "c1")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range fold(t, tc.state...).Open.Awaiting() {
				got = append(got, a.AskID)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Awaiting = %v, want %v", got, tc.want)
			}
		})
	}
}

// A fork taken inside a turn: each of the cut turn's calls is closed as the source session
// left it, not as a crash would: one the source started (before the fork point, or after it)
// is uncertain, one it never started is cancelled, and only that one says nothing happened.
func TestRecoverForkCutsATurn(t *testing.T) {
	s := fold(t, with(open("c1", "c2", "c3"),
		toolStarted("r1", "c1"), // started before the fork point
		events.SessionForked{SessionID: "ses_fork", Agent: "build", Source: events.ForkSource{SessionID: sid, Stream: "session-" + sid, Revision: 7}},
	)...)
	if s.Open == nil || s.Open.CutByFork == nil || s.Open.CutByFork.Revision != 7 {
		t.Fatalf("the fork's open turn does not know it was cut: %+v", s.Open)
	}
	startedInSource := map[string]bool{"c1": true, "c2": true} // c2 started after the fork point
	got := s.RecoverFork(true, func(id string) bool { return startedInSource[id] })
	outcomes := map[string]events.ToolSettled{}
	for _, p := range got {
		if e, ok := p.(events.ToolSettled); ok {
			outcomes[e.CallID] = e
		}
	}
	for id, want := range map[string]string{"c1": "uncertain", "c2": "uncertain", "c3": "cancelled"} {
		e := outcomes[id]
		if e.Outcome != want {
			t.Errorf("%s: %s, want %s", id, e.Outcome, want)
		}
		said := strings.Contains(e.Output, "nothing it asked for happened") || strings.Contains(e.Output, "Nothing it asked for happened")
		if said != (want == "cancelled") || !strings.Contains(e.Output, "forked") {
			t.Errorf("%s: %q", id, e.Output)
		}
	}
	if fin, ok := got[len(got)-1].(events.TurnFinished); !ok || fin.Reason != events.FinishInterrupted {
		t.Errorf("last event %+v", got[len(got)-1])
	}
	// A session that was not forked mid-turn is recovered as before.
	plain := fold(t, with(open("c1"))...)
	if plain.Open.CutByFork != nil {
		t.Error("a turn no fork cut marked as cut")
	}
}
