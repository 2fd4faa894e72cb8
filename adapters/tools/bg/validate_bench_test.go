package bg

import (
	"encoding/json"
	"testing"
)

// BenchmarkValidateArgs validates a representative bg call as the turn driver does
// (Tool.Validate). Run on main's code and on this code in the same run for the baseline
// (docs/tools.md, "Argument schemas").
func BenchmarkValidateArgs(b *testing.B) {
	tl := NewTool(nil)
	args := json.RawMessage(`{"action":"wait","taskID":"bg_0123456789ab","timeoutMs":30000,"cursor":4096,"limit":16384}`)
	b.Run("bg", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tl.Validate(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
