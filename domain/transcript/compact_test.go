package transcript_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

func msg(role model.Role, text string) model.Message { return model.Message{Role: role, Text: text} }

func TestBoundaryKeepsCallsWithTheirResults(t *testing.T) {
	call := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "read"}}}
	result := model.Message{Role: model.RoleTool, ToolCallID: "c1", Text: "x"}
	msgs := []model.Message{msg(model.RoleUser, "go"), call, result, call, result, call, result}
	one := func(model.Message) int64 { return 1 }
	cases := []struct {
		name string
		keep int64
		want int
	}{
		{"a tail of two is the last call and its result", 2, 5},
		{"a tail of three would start at a result: the call before is kept with it", 3, 5},
		{"a tail of four starts at a call", 4, 3},
		{"nothing fits: the latest boundary, summarising the most", 0, 5},
		{"everything fits: the first message is still summarised", 100, 1},
	}
	for _, c := range cases {
		if got := transcript.Boundary(msgs, c.keep, one); got != c.want {
			t.Errorf("%s: Boundary = %d, want %d", c.name, got, c.want)
		}
	}
	if got := transcript.Boundary(msgs[:1], 0, one); got != 0 {
		t.Errorf("a lone message cannot be summarised: Boundary = %d", got)
	}
}

func TestSummaryMessageCountsTheAnswersItReplaces(t *testing.T) {
	text := transcript.SummaryMessage(2, 9, 4, "they read files")
	if n, ok := transcript.SummarisedResponses(text); !ok || n != 4 {
		t.Fatalf("SummarisedResponses = %d, %v", n, ok)
	}
	if _, ok := transcript.SummarisedResponses("[zuno compaction x: not one"); ok {
		t.Fatal("a user message that merely starts alike is not a summary")
	}
	msgs := []model.Message{msg(model.RoleUser, text), msg(model.RoleAssistant, "a"), msg(model.RoleUser, "b")}
	if got := transcript.Responses(msgs); got != 5 {
		t.Fatalf("Responses = %d, want 5", got)
	}
}

// A compaction is folded only between steps of an open turn, after its request completed,
// at a boundary that splits no call from its result; then the conversation is the summary
// and what followed the boundary.
func TestCompactionMovesTheBoundary(t *testing.T) {
	s := transcript.New()
	must := func(p events.Payload) {
		t.Helper()
		if err := s.Check(p); err != nil {
			t.Fatal(err)
		}
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	must(events.SessionCreated{SessionID: "s"})
	must(events.UserMessageAppended{SessionID: "s", MessageID: "m", Text: "go"})
	must(events.TurnStarted{SessionID: "s", TurnID: "t"})
	must(events.ProviderRequest{TurnID: "t", RequestID: "r1", Step: 1, Status: events.RequestStarted})
	must(events.ProviderRequest{TurnID: "t", RequestID: "r1", Step: 1, Status: events.RequestCompleted,
		Response: &events.ProviderResponse{ToolCalls: []events.ToolCall{{ID: "c1", Name: "read"}}}})
	must(events.ToolStarted{TurnID: "t", CallID: "c1"})
	must(events.ToolSettled{TurnID: "t", CallID: "c1", Outcome: "completed", Output: "data"})
	must(events.ProviderRequest{TurnID: "t", RequestID: "rc", Step: 2, Status: events.RequestStarted, Purpose: events.PurposeCompaction})
	must(events.ProviderRequest{TurnID: "t", RequestID: "rc", Step: 2, Status: events.RequestCompleted, Purpose: events.PurposeCompaction,
		Response: &events.ProviderResponse{Text: "summary"}})
	if s.Open.Steps != 1 || s.Steps != 2 || len(s.Messages) != 3 {
		t.Fatalf("the compaction request is a session step, not a turn step, and no message: %d %d %d", s.Open.Steps, s.Steps, len(s.Messages))
	}
	bad := []events.TranscriptCompacted{
		{TurnID: "t", Window: 1, RequestID: "rc", Through: 2}, // a tool result
		{TurnID: "t", Window: 1, RequestID: "rc", Through: 3}, // nothing kept
		{TurnID: "t", Window: 2, RequestID: "rc", Through: 1}, // a window skipped
		{TurnID: "t", Window: 1, RequestID: "r1", Through: 1}, // not the compaction request
		{TurnID: "x", Window: 1, RequestID: "rc", Through: 1}, // another turn
	}
	for _, e := range bad {
		if err := s.Check(e); err == nil {
			t.Errorf("%+v was accepted", e)
		}
	}
	c := s.Compacted("t", events.ProviderRequest{RequestID: "rc", PromptReceiptID: "p", Step: 2},
		transcript.Compaction{Window: 1, Through: 1, Kept: 2, Summary: "summary"}, "d", 10, 5)
	must(c)
	if s.Window != 1 || len(s.Messages) != 3 || s.Messages[0].Text != c.SummaryMessage || s.Messages[1].Role != model.RoleAssistant {
		t.Fatalf("after the compaction: window %d, %+v", s.Window, s.Messages)
	}
	if err := s.Check(c); err == nil {
		t.Fatal("a second compaction without a new request was accepted")
	}
}
