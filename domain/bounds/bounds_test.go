package bounds_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/bounds"
)

// Unset is the default, above the ceiling is the ceiling, anything else stands.
func TestEffective(t *testing.T) {
	l := bounds.ToolOutputBytes
	for _, tc := range []struct{ in, want int64 }{{0, l.Default}, {100, 100}, {l.Ceiling, l.Ceiling}, {l.Ceiling + 1, l.Ceiling}, {2_000_000_000, l.Ceiling}} {
		if got := l.Effective(tc.in); got != tc.want {
			t.Errorf("Effective(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	for _, l := range append(bounds.ToolOutput, bounds.DBRows, bounds.DBBytes, bounds.DBTimeout, bounds.ResponseText, bounds.ToolArgument, bounds.Response) {
		if l.Default <= 0 || l.Default > l.Ceiling {
			t.Errorf("%s: default %d outside 1..%d", l.Key, l.Default, l.Ceiling)
		}
	}
}

func TestOverCeiling(t *testing.T) {
	e := bounds.DBTimeout.OverCeiling(360_000_000)
	if e.Code() != bounds.CodeOverCeiling || e.Field != "zuno db --timeout" || !strings.Contains(e.Error(), "600000") {
		t.Fatalf("got %v", e)
	}
}
