package work_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/work"
)

// A plan the host seeded (the plan classifier, docs/plan-classifier.md) is refined, never
// replaced as a stateless draft: a create over it keeps every host step id and every
// completed state, and the refinement stays under the same rule.
func TestHostSeededPlanKeepsStepIDsAndCompletedStates(t *testing.T) {
	seed := work.PlanUpdate{Action: work.ActionCreate, Origin: work.OriginHost, Title: "build: fix it",
		Steps: []work.StepInput{{Title: "Understand"}, {Title: "Change"}, {Title: "Verify"}}}
	done := work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1),
		Patches: []work.StepPatch{{ID: "step-1", Status: ptr(work.StatusCompleted)}}}
	refuse := map[string]work.PlanUpdate{
		"a new plan that drops the host steps": {Action: work.ActionCreate, ExpectedRevision: rev(2), Title: "Mine",
			Steps: []work.StepInput{{Title: "Do it"}}},
		"a completed host step reopened": {Action: work.ActionCreate, ExpectedRevision: rev(2), Title: "Mine",
			Steps: []work.StepInput{{ID: "step-1", Title: "Understand"}, {ID: "step-2", Title: "Change"}, {ID: "step-3", Title: "Verify"}}},
	}
	for name, c := range refuse {
		t.Run(name, func(t *testing.T) {
			w := build(t, []work.Command{seed, done})
			_, err := w.do(c)
			if domain.CodeOf(err) != work.CodeHostStepDropped {
				t.Fatalf("err %v, want %s", err, work.CodeHostStepDropped)
			}
		})
	}
	w := build(t, []work.Command{seed, done})
	if v := w.s.PlanView(); v.Origin != work.OriginHost {
		t.Fatalf("seeded plan view: %+v", v)
	}
	// A refinement: host steps kept (one superseded, the completed one completed), one added.
	w.must(work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(2), Title: "Fix divide()",
		Steps: []work.StepInput{{ID: "step-1", Title: "Understand", Status: work.StatusCompleted}, {ID: "step-2", Title: "Fix the division"},
			{ID: "step-3", Title: "Verify", Status: work.StatusSuperseded}, {Title: "Run the tests"}}})
	v := w.s.PlanView()
	if v.Origin != work.OriginHost || len(v.Steps) != 4 || v.Steps[0].Status != work.StatusCompleted {
		t.Fatalf("refinement: %+v", v)
	}
	// The refinement is held to the rule too.
	if _, err := w.do(work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(3), Title: "Other", Steps: steps("x")}); domain.CodeOf(err) != work.CodeHostStepDropped {
		t.Fatalf("second replace: %v", err)
	}
	// patch and append are refinements by construction.
	w.must(work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(3), Steps: steps("Document")})
	// Once the host's plan is finished, a new goal starts a plan of the model's own.
	w.must(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(4), Status: work.StatusCompleted})
	w.must(work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(5), Title: "Next", Steps: steps("x")})
	if v := w.s.PlanView(); v.Origin != "" {
		t.Fatalf("a plan after the finished host plan is the model's: %+v", v)
	}
}
func ptr(s string) *string { return &s }
