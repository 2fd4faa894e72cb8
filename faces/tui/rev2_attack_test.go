package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/zuno-run/zuno/events"
)

// TestReviewTypeaheadDoesNotAnswer: a person typing a line when an ask appears keeps typing
// into the line; the "a" of "also" or the "o" of "to" must not answer the ask (docs/tui.md,
// "Keys"). An ask takes its one-key replies only while the input line is empty.
func TestReviewTypeaheadDoesNotAnswer(t *testing.T) {
	m := &screen{e: NewEngine(Config{Session: "ses_1"}, func(any) {})}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	typ := func(s string) (answered bool) {
		for _, r := range s {
			if m.key(tea.KeyPressMsg{Code: r, Text: string(r)}) != nil {
				answered = true
			}
		}
		return answered
	}
	typ("fix the bug ")
	m.Update(askMsg{Ask: events.PermissionAsked{SessionID: "ses_1", AskID: "ask_1", CallID: "c1", Tool: "shell",
		Key: "bash", Resource: "rm -rf build", Always: "rm *", Mode: "standard"}})
	if typ("and also remove the logs") || len(m.asks) != 1 {
		t.Fatalf("typing ahead answered the ask (asks left %d)", len(m.asks))
	}
	if got := string(m.input); got != "fix the bug and also remove the logs" {
		t.Fatalf("the line lost keys: %q", got)
	}
	// With the line empty, the ask takes its key.
	m.input, m.cursor = nil, 0
	if !typ("r") || len(m.asks) != 0 {
		t.Fatal("an empty line's r did not answer the ask")
	}
}
