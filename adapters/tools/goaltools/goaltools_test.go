package goaltools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/tools/goaltools"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// The real handlers are what the tools are written against.
var (
	_ goaltools.Commands = (*commands.Handlers)(nil)
	_ goaltools.Commands = commands.WorkCommands{}
)

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC) }

var registry = events.NewRegistry(events.AllPayloads()...)

const session = "ses_1"

// harness is the goal and work tools over real handlers on a real SQLite event store.
type harness struct {
	store *sqlstore.Store
	h     *commands.Handlers
	tools map[string]tools.Tool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	store, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "zuno.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := &harness{store: store, h: commands.NewHandlers(store, registry, fixedClock{}, nil), tools: map[string]tools.Tool{}}
	for _, tl := range slices.Concat(goaltools.New(h.h.WorkCommands()), worktools.New(h.h.WorkCommands())) {
		h.tools[tl.Declaration().Name] = tl
	}
	return h
}

type result struct {
	Error *struct {
		Code     string   `json:"code"`
		Blockers []string `json:"blockers"`
	} `json:"error"`
	Goal *goal.View `json:"goal"`
}

func (h *harness) call(t *testing.T, name, callID, args string) (tools.Result, result) {
	t.Helper()
	tl := h.tools[name]
	parsed, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: Validate(%s): %v", name, callID, args, err)
	}
	r := tl.Execute(context.Background(), tools.Invocation{SessionID: session, CallID: callID, TurnID: "turn_a", Parsed: parsed})
	var o result
	if err := json.Unmarshal([]byte(r.Output), &o); err != nil {
		t.Fatalf("%s: output %q: %v", name, r.Output, err)
	}
	return r, o
}

// append writes events to a stream as another part of the runtime would.
func (h *harness) append(t *testing.T, stream, id string, ps ...events.Payload) {
	t.Helper()
	recs, err := h.store.ReadStream(context.Background(), stream, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	w := commands.Writer{Store: h.store, Stream: stream, Meta: commands.Meta{CommandID: id, Actor: "host"},
		Digest: id, Clock: fixedClock{}, Revision: int64(len(recs)) - 1}
	if _, err := w.Append(context.Background(), ps...); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, r tools.Result, code string) {
	t.Helper()
	if r.ErrorCode != code {
		t.Fatalf("error code %q, want %q: %s", r.ErrorCode, code, r.Output)
	}
}

// TestCompletionThroughTheBarrier: a Goal cannot complete while a todo is open, a job is
// queued, or a criterion needing evidence has no authoritative passing receipt; then it
// can, and the completion carries its evidence.
func TestCompletionThroughTheBarrier(t *testing.T) {
	h := newHarness(t)
	if r, o := h.call(t, "goal_get", "c0", `{}`); r.Outcome != tools.OutcomeCompleted || o.Goal != nil {
		t.Fatalf("goal_get on nothing: %s", r.Output)
	}
	_, o := h.call(t, "goal_update", "c1", `{"objective": "Fix the parser", "criteria": [{"id": "tests", "text": "go test passes", "needs_evidence": true}]}`)
	if o.Goal == nil || o.Goal.Revision != 1 || o.Goal.Status != "active" || o.Goal.OwnerTurnID != "turn_a" {
		t.Fatalf("created %+v", o.Goal)
	}
	h.call(t, "todo_update", "c2", `{"items": [{"id": "fix", "title": "Fix it"}]}`)
	h.append(t, commands.JobStream(session), "admit-1", events.JobAdmitted{JobState: events.JobState{JobID: "job_1",
		ParentSessionID: session, ChildSessionID: "ses_child", Agent: "explore", Status: events.JobQueued,
		ReportDelivery: events.DeliveryQuiet, LogicalKey: "lk"}, ToolCallID: "call_t"})

	r, o := h.call(t, "goal_update", "c3", `{"expected_revision": 1, "status": "complete"}`)
	wantCode(t, r, goal.CodeGoalBlocked)
	if got := strings.Join(o.Error.Blockers, "|"); !strings.Contains(got, "todo fix [pending]") ||
		!strings.Contains(got, "job job_1 [queued]") || !strings.Contains(got, "evidence tests [unmet]") {
		t.Fatalf("blockers %q", got)
	}
	if o.Goal == nil || o.Goal.Status != "active" {
		t.Fatalf("refusal shows %+v", o.Goal)
	}

	h.call(t, "todo_update", "c4", `{"items": [{"id": "fix", "status": "completed"}]}`)
	h.append(t, commands.JobStream(session), "settle-1", events.JobSettled{JobState: events.JobState{JobID: "job_1",
		ParentSessionID: session, ChildSessionID: "ses_child", Agent: "explore", Status: events.JobCompleted,
		ReportDelivery: events.DeliveryQuiet, LogicalKey: "lk"}})
	const derived, passing = "rcp_00000000000000000000000000000001", "rcp_00000000000000000000000000000002"
	h.append(t, commands.SessionStream("ses_child"), "receipts",
		events.VerificationReceipt{ReceiptID: derived, SessionID: "ses_child", CallID: "x1", Command: "go test ./... || true",
			Authority: "derived", Verdict: "passed"},
		events.VerificationReceipt{ReceiptID: passing, SessionID: "ses_child", CallID: "x2", Command: "go test ./...",
			Authority: "authoritative", Verdict: "passed"})

	r, o = h.call(t, "goal_update", "c5", `{"expected_revision": 1, "status": "complete", "evidence": [{"criterion_id": "tests", "receipt_id": "`+derived+`"}]}`)
	wantCode(t, r, goal.CodeGoalBlocked)
	if len(o.Error.Blockers) != 1 || !strings.Contains(o.Error.Blockers[0], "receipt_not_evidence") {
		t.Fatalf("a derived receipt: blockers %q", o.Error.Blockers)
	}
	r, o = h.call(t, "goal_update", "c6", `{"expected_revision": 1, "status": "complete", "evidence": [{"criterion_id": "tests", "receipt_id": "`+passing+`"}]}`)
	if r.Outcome != tools.OutcomeCompleted || o.Goal.Status != "complete" || o.Goal.Criteria[0].Evidence != passing || o.Goal.Revision != 2 {
		t.Fatalf("completion: %s", r.Output)
	}
	// The same call again is the first result; nothing more is written.
	r2, _ := h.call(t, "goal_update", "c6", `{"expected_revision": 1, "status": "complete", "evidence": [{"criterion_id": "tests", "receipt_id": "`+passing+`"}]}`)
	if r2.Output != r.Output || !strings.Contains(string(r2.Metadata.Details), `"duplicate":true`) {
		t.Fatalf("re-executed call: %s %s", r2.Output, r2.Metadata.Details)
	}
}

// TestInputRequest: goal_request_input binds the observed revision, pauses the Goal and
// records the wait in one event; only an answer to that exact request satisfies it, and a
// resume does not skip it.
func TestInputRequest(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.call(t, "goal_update", "c1", `{"objective": "Migrate the data"}`)
	r, _ := h.call(t, "goal_request_input", "c2", `{"expected_revision": 7, "question": "Which database?"}`)
	wantCode(t, r, "stale_revision")
	before, _ := h.store.ReadStream(ctx, commands.WorkStream(session), 0, 100)
	r, o := h.call(t, "goal_request_input", "c3", `{"expected_revision": 1, "question": "Which database?"}`)
	after, _ := h.store.ReadStream(ctx, commands.WorkStream(session), 0, 100)
	if r.Outcome != tools.OutcomeCompleted || o.Goal.Status != "paused" || o.Goal.Waiting == nil || len(after)-len(before) != 1 {
		t.Fatalf("request: %s (%d events)", r.Output, len(after)-len(before))
	}
	req := o.Goal.Waiting.RequestID
	if req != goaltools.RequestID(session, "c3") || o.Goal.Waiting.ObservedRevision != 1 {
		t.Fatalf("waiting %+v", o.Goal.Waiting)
	}
	send := func(id string, c any) commands.Result {
		t.Helper()
		var res commands.Result
		var err error
		switch c := c.(type) {
		case goal.Answer:
			res, err = h.h.AnswerGoalInput(ctx, &commands.AnswerGoalInput{Meta: commands.Meta{CommandID: id, Actor: "user"}, SessionID: session, Answer: c})
		case goal.Resume:
			res, err = h.h.ResumeGoal(ctx, &commands.ResumeGoal{Meta: commands.Meta{CommandID: id, Actor: "user"}, SessionID: session, Resume: c})
		}
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := send("a1", goal.Answer{RequestID: "req_other", Answer: "postgres"}); res.Error == nil || res.Error.Code != goal.CodeWaitMismatch {
		t.Fatalf("answer to another request: %+v", res.Error)
	}
	if res := send("a2", goal.Resume{}); res.Error == nil || res.Error.Code != goal.CodeGoalState {
		t.Fatalf("resume while waiting: %+v", res.Error)
	}
	if r, _ := h.call(t, "goal_update", "c4", `{"expected_revision": 2, "status": "complete"}`); r.ErrorCode != goal.CodeGoalState {
		t.Fatalf("completing a paused goal: %s", r.Output)
	}
	port := commands.GoalInputPort(h.h.GoalCommands())
	if w, err := port.GoalWaiting(ctx, session); err != nil || w == nil || w.RequestID != req {
		t.Fatalf("the port's wait: %+v %v", w, err)
	}
	res := send("a3", goal.Answer{RequestID: req, Answer: "postgres"})
	var v goal.View
	if res.Error != nil || json.Unmarshal(res.View, &v) != nil || v.Status != "active" || v.Waiting != nil || v.OwnerTurnID != "" {
		t.Fatalf("answer: %+v %s", res.Error, res.View)
	}
	if w, err := port.GoalWaiting(ctx, session); err != nil || w != nil {
		t.Fatalf("the port's wait after the answer: %+v %v", w, err)
	}
	if again := send("a3", goal.Answer{RequestID: req, Answer: "postgres"}); !again.Duplicate {
		t.Fatalf("the same answer again: %+v", again)
	}
	if other := send("a4", goal.Answer{RequestID: req, Answer: "mysql"}); other.Error == nil || other.Error.Code != goal.CodeWaitMismatch {
		t.Fatalf("a second answer to a satisfied request: %+v", other.Error)
	}
}
