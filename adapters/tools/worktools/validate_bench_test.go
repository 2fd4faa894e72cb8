package worktools_test

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// BenchmarkValidateArgs validates a representative plan_update and todo_update call as the
// turn driver does (Tool.Validate). Run on main's code and on this code in the same run for
// the baseline (docs/tools.md, "Argument schemas").
func BenchmarkValidateArgs(b *testing.B) {
	all := byName()
	for _, c := range []struct{ tool, args string }{
		{tools.NamePlanUpdate, `{"action":"patch","expected_revision":3,"patches":[{"id":"step-2","status":"completed"},{"id":"step-3","title":"Measure the validator","status":"in_progress"}]}`},
		{tools.NameTodoUpdate, `{"expected_revision":2,"items":[{"id":"tests","title":"Run the tests","status":"pending","dependencies":["fix"]},{"id":"fix","owner":"build","plan_step_id":"step-2"}]}`},
	} {
		tl := all[c.tool]
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
