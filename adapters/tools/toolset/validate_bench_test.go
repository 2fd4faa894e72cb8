package toolset

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// BenchmarkValidateArgs validates a representative call of read, write and apply_patch as the
// turn driver does (Tool.Validate: check and decode). Run on main's code and on this code in
// the same run for the baseline (docs/tools.md, "Argument schemas").
func BenchmarkValidateArgs(b *testing.B) {
	s, _ := newSet(b)
	for _, c := range []struct{ tool, args string }{
		{tools.NameRead, `{"path":"adapters/tools/toolset/read.go","offset":40,"limit":120}`},
		{tools.NameWrite, `{"path":"notes/todo.md","content":"# Todo\n\n- validate arguments once\n- measure it\n"}`},
		{tools.NameApplyPatch, `{"patch":"*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    print(\"hi\")\n+    print(\"hello\")\n*** End Patch\n"}`},
	} {
		tl := toolNamed(b, s, c.tool)
		args := json.RawMessage(c.args)
		b.Run(c.tool, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tl.Validate(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
