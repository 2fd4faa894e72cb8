package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/zuno-run/zuno/events"
)

// TestReviewTypeaheadDoesNotAnswer: a person typing a line when an ask appears keeps typing
// into the line; the "a" of "also" or the "o" of "to" must not answer the ask (docs/tui.md,
// "Answering: no reply from type-ahead"). An ask takes a one-key selection only while the input
// line is empty and once it has been on screen for the guard, and records it only on Enter.
func TestReviewTypeaheadDoesNotAnswer(t *testing.T) {
	at := time.Now()
	m := &screen{e: NewEngine(Config{Session: "ses_1"}, func(any) {}), now: func() time.Time { return at }}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	typ := func(s string) (answered bool) {
		for _, r := range s {
			k := tea.KeyPressMsg{Code: r, Text: string(r)}
			if r == '\r' {
				k = tea.KeyPressMsg{Code: tea.KeyEnter}
			}
			if _, cmd := m.Update(k); cmd != nil && len(m.asks) == 0 {
				answered = true
			}
		}
		return answered
	}
	typ("fix the bug ")
	m.Update(askMsg{Ask: events.PermissionAsked{SessionID: "ses_1", AskID: "ask_1", CallID: "c1", Tool: "shell",
		Key: "bash", Resource: "rm -rf build", Always: "rm *", Mode: "standard"}})
	at = at.Add(time.Second)
	if typ("and also remove the logs") || len(m.asks) != 1 {
		t.Fatalf("typing ahead answered the ask (asks left %d)", len(m.asks))
	}
	if got := string(m.input); got != "fix the bug and also remove the logs" {
		t.Fatalf("the line lost keys: %q", got)
	}
	// With the line empty, r selects and Enter records.
	m.input, m.cursor = nil, 0
	if typ("r") || len(m.asks) != 1 || m.sel == nil {
		t.Fatal("an empty line's r did not select, or recorded without Enter")
	}
	if !typ("\r") || len(m.asks) != 0 {
		t.Fatal("Enter did not record the selection")
	}
}
