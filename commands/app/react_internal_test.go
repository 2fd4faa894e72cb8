package app

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands/react"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
)

// What the reaction runner does with a command's failure: nothing to do and refused for good
// are done with (the trigger never holds up those after it); only an untyped failure (the
// store) is tried again.
func TestSkipped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		done, say string // done: wrapped in react.Skipped; say: in its message
	}{
		{"no error", nil, "", ""},
		{"the turn is held by a live process", domain.NewError(turn.CodeSessionBusy, "busy", "wait"), "yes", "session_busy"},
		{"an ask still unanswered", domain.NewError(CodeTurnAwaitsAnswer, "waits", "answer"), "yes", "turn_awaits_answer"},
		{"the workspace is gone: refused again on every retry", domain.NewError(CodeWorkspaceNotFound, "gone", "--dir"), "yes", "gave up"},
		{"a model that cannot be chosen", &UsageError{"pass --model scripted:<file>"}, "yes", "pass --model"},
		{"the store is unavailable", errors.New("dial tcp: connection refused"), "", "connection refused"},
		{"a wrapped store error", fmt.Errorf("append: %w", errors.New("i/o timeout")), "", "i/o timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := skipped(tc.err)
			if (tc.err == nil) != (got == nil) {
				t.Fatalf("skipped(%v) = %v", tc.err, got)
			}
			if got == nil {
				return
			}
			if errors.Is(got, react.Skipped) != (tc.done != "") {
				t.Errorf("skipped(%v) = %v: done with it = %v, want %v", tc.err, got, errors.Is(got, react.Skipped), tc.done != "")
			}
			if !strings.Contains(got.Error(), tc.say) {
				t.Errorf("%q does not say %q", got.Error(), tc.say)
			}
		})
	}
}
