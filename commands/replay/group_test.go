package replay

import (
	"slices"
	"testing"

	"github.com/zuno-run/zuno/events"
)

func recordedGroup(t *testing.T, ps ...events.Payload) *group {
	t.Helper()
	var recs []events.Recorded
	for i, p := range ps {
		ev, err := events.Encode(events.DeriveID("cmd", i), p, events.Metadata{CommandID: "cmd", Actor: "agent:build"})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, events.Recorded{Event: ev, StreamRevision: uint64(i), Position: uint64(100 + i)})
	}
	g, err := newGroup(events.NewRegistry(events.AllPayloads()...), recs)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A turn's events belong to steps as a reader of the log counts them: the opening and each
// receipt to the request that follows, the tool events to the request before them; fresh ids
// come out in the order the driver draws them (receipt, request, each retry's request).
func TestGroupStepsAndIDs(t *testing.T) {
	g := recordedGroup(t,
		events.UserMessageAppended{SessionID: "s", MessageID: "m", Text: "hi"},
		events.TurnStarted{SessionID: "s", TurnID: "t", StepLimit: 3},
		events.PromptAssembled{SessionID: "s", ReceiptID: "r1"},
		events.ProviderRequest{SessionID: "s", TurnID: "t", RequestID: "q1", Step: 4, Status: events.RequestStarted},
		events.ProviderRequest{SessionID: "s", TurnID: "t", RequestID: "q1", Step: 4, Status: events.RequestFailed, RetryInMs: 5, Error: &events.ErrorInfo{Code: "rate_limit"}},
		events.ProviderRequest{SessionID: "s", TurnID: "t", RequestID: "q2", Step: 4, Attempt: 2, Status: events.RequestStarted},
		events.ProviderRequest{SessionID: "s", TurnID: "t", RequestID: "q2", Step: 4, Attempt: 2, Status: events.RequestCompleted, Response: &events.ProviderResponse{}},
		events.ToolSettled{SessionID: "s", TurnID: "t", CallID: "c1", Outcome: "completed"},
		events.PromptAssembled{SessionID: "s", ReceiptID: "r2"},
		events.ProviderRequest{SessionID: "s", TurnID: "t", RequestID: "q3", Step: 5, Status: events.RequestStarted},
		events.TurnFinished{SessionID: "s", TurnID: "t", Reason: "completed"},
	)
	if want := []int{4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5}; !slices.Equal(g.steps, want) {
		t.Errorf("steps = %v, want %v", g.steps, want)
	}
	if want := []string{"r1", "q1", "q2", "r2", "q3"}; !slices.Equal(g.ids(), want) {
		t.Errorf("ids = %v, want %v", g.ids(), want)
	}
	if len(g.responses) != 2 || g.responses[0].Error == nil || g.responses[1].Response == nil {
		t.Errorf("responses = %+v, want the failure then the completion", g.responses)
	}
	if !g.finished || g.text != "hi" || g.asked || g.settled["c1"].Outcome != "completed" {
		t.Errorf("group = finished %v text %q asked %v", g.finished, g.text, g.asked)
	}
}

// A run killed before its turn finished is not finished: the replay stops where it stopped.
func TestGroupCutShort(t *testing.T) {
	g := recordedGroup(t,
		events.UserMessageAppended{SessionID: "s", MessageID: "m", Text: "hi"},
		events.TurnStarted{SessionID: "s", TurnID: "t"},
		events.PermissionAsked{SessionID: "s", TurnID: "t", AskID: "ask_c1", CallID: "c1"},
	)
	if g.finished || !g.asked {
		t.Fatalf("finished %v asked %v, want an unfinished interactive run", g.finished, g.asked)
	}
	c := &comparer{g: g}
	for i := range g.recs {
		if _, err := c.check(g.recs[i].Event); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.check(g.recs[0].Event); err != errStop || len(c.diffs) != 0 {
		t.Fatalf("past the end of a cut-short run: %v %v, want a silent stop", err, c.diffs)
	}
}
