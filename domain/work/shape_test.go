package work_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/work"
)

// CheckShape is Decide's own stateless check: it refuses exactly the calls whose action is
// unknown or that give a field their action does not read, with the error Decide returns.
func TestCheckShape(t *testing.T) {
	given := map[string]work.PlanUpdate{
		"title":   {Title: "T"},
		"steps":   {Steps: steps("a")},
		"patches": {Patches: []work.StepPatch{{ID: "step-1", Status: str("completed")}}},
		"status":  {Status: "completed"},
	}
	for _, action := range append(work.PlanActions(), "", "delete") {
		for field, u := range given {
			u.Action, u.ExpectedRevision = action, rev(2)
			shapeErr := u.CheckShape()
			reads := slices.Contains(work.PlanActionFields(action), field)
			if (shapeErr == nil) != reads {
				t.Errorf("%s with %s: CheckShape = %v, but the action reads it: %v", action, field, shapeErr, reads)
			}
			if shapeErr == nil {
				continue
			}
			w := build(t, subPlan)
			_, decideErr := w.do(u)
			if !reflect.DeepEqual(decideErr, shapeErr) {
				t.Errorf("%s with %s: Decide = %v, CheckShape = %v", action, field, decideErr, shapeErr)
			}
		}
	}
	if got := work.PlanActionFields("delete"); got != nil {
		t.Errorf("fields of an unknown action = %v", got)
	}
}
