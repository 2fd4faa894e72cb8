package turn_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// bigTool answers every call with its n-th result, a few hundred tokens long, or one far
// bigger than any window for n = 99.
type bigTool struct{ probeTool }

func (b *bigTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	r := b.probeTool.Execute(ctx, inv)
	size := 300
	if strings.Contains(string(inv.Args.(json.RawMessage)), "99") {
		size = 50000
	}
	r.Output += strings.Repeat(" word", size)
	return r
}

// runWindow runs a turn of the given script over bigTool with a context window.
func runWindow(t *testing.T, h *harness, js string, window int64) (turn.Outcome, *bigTool) {
	t.Helper()
	tool := &bigTool{probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}}
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "look around",
		Agent: buildAgent("look"), Provider: script(t, js), ProviderName: "scripted",
		Model: model.ModelInfo{ID: "scripted", ContextWindow: window}, Tools: []turn.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	return out, tool
}

func looks(ns ...string) string {
	var turns []string
	for _, n := range ns {
		turns = append(turns, `{"toolCalls":[{"id":"c`+n+`","name":"look","arguments":{"n":`+n+`}}]}`)
	}
	return `{"turns":[` + strings.Join(append(turns, `{"text":"done"}`), ",") + `]}`
}

// windowFor measures a one-step session's first prompt and returns a window with room
// tokens more.
func windowFor(t *testing.T, room int64) int64 {
	h := newHarness(t)
	out, _ := runWindow(t, h, `{"turns":[{"text":"hi"}]}`, 0)
	if out.Reason != events.FinishCompleted {
		t.Fatalf("probe: %+v", out)
	}
	for _, ev := range h.events(t) {
		if a, ok := ev.(events.PromptAssembled); ok {
			return a.EstimatedInputTokens + room
		}
	}
	t.Fatal("no receipt")
	return 0
}

func TestCompactionKeepsATurnGoing(t *testing.T) {
	window := windowFor(t, 1400)
	h := newHarness(t)
	out, _ := runWindow(t, h, looks("1", "2", "3", "4", "5", "6", "7", "8", "9", "10"), window)
	if out.Reason != events.FinishCompleted || out.Steps != 11 {
		t.Fatalf("outcome %+v", out)
	}
	var compactions, requests int
	for _, ev := range h.events(t) {
		switch e := ev.(type) {
		case events.TranscriptCompacted:
			compactions++
		case events.ProviderRequest:
			if e.Status == events.RequestStarted && e.Purpose == events.PurposeCompaction {
				requests++
			}
		}
	}
	if compactions == 0 || compactions != requests {
		t.Fatalf("%d compactions, %d compaction requests", compactions, requests)
	}
}

// A result that cannot fit the window even alone is not worth a compaction request: the turn
// fails with context_overflow before the next request, as without compaction.
func TestCompactionThatCannotHelpIsNotTried(t *testing.T) {
	window := windowFor(t, 1400)
	h := newHarness(t)
	out, _ := runWindow(t, h, looks("1", "99", "3"), window)
	if out.Reason != events.FinishFailed || out.Error == nil || out.Error.Code != prompt.CodeContextOverflow || out.Steps != 2 {
		t.Fatalf("outcome %+v", out)
	}
	for _, ev := range h.events(t) {
		if r, ok := ev.(events.ProviderRequest); ok && r.Purpose == events.PurposeCompaction {
			t.Fatalf("a compaction request was sent: %+v", r)
		}
	}
}
