package prompt_test

import (
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// fullWorkState is a work state with MaxWorkStateItems items of every kind: plan steps,
// todos, jobs (active, so all shown) and pending reports, and a Goal with its criteria.
func fullWorkState() *prompt.WorkState {
	n := prompt.MaxWorkStateItems
	ws := &prompt.WorkState{PreviousReceiptID: "rcp_prev", PlanRevision: 9, TodoRevision: 12,
		Goal: &prompt.Goal{ID: "goal-1", Revision: 4, Status: "active", Objective: "Migrate the store to format 4",
			OwnerTurnID: "turn_1"}}
	plan := events.WorkPlan{PlanID: "plan-1", Title: "Migrate", Status: "in_progress"}
	for i := range n {
		plan.Steps = append(plan.Steps, events.WorkPlanStep{ID: fmt.Sprintf("step-%d", i), Title: fmt.Sprintf("stage %d of the migration", i), Status: "pending"})
		ws.Todos = append(ws.Todos, events.WorkItem{ID: fmt.Sprintf("t%d", i), Title: fmt.Sprintf("change the call sites in package %d", i),
			Status: "in_progress", Owner: "build", PlanStepID: fmt.Sprintf("step-%d", i)})
		ws.Jobs = append(ws.Jobs, prompt.Job{ID: fmt.Sprintf("job_%032d", i), Agent: "explore", Status: prompt.JobRunning,
			ReportDelivery: "nextStep", Objective: fmt.Sprintf("investigate lane %d", i)})
		ws.Reports = append(ws.Reports, prompt.Report{InputID: fmt.Sprintf("input_%d", i), JobID: fmt.Sprintf("job_r%d", i),
			Agent: "explore", Status: prompt.ReportQueued, FinalText: "lane done: nothing found"})
	}
	for i := range 16 {
		ws.Goal.Criteria = append(ws.Goal.Criteria, events.GoalCriterion{ID: fmt.Sprintf("c%d", i), Text: "a checkable criterion", NeedsEvidence: i%2 == 0})
	}
	ws.Plans = []events.WorkPlan{plan}
	return ws
}

// BenchmarkRenderWorkState: runtime.work_state with 64 items of each kind (and a Goal of 16
// criteria), beside the empty work state as the baseline, in the same run.
func BenchmarkRenderWorkState(b *testing.B) {
	for _, c := range []struct {
		name string
		ws   *prompt.WorkState
	}{{"empty", &prompt.WorkState{}}, {"64-each", fullWorkState()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := prompt.RenderWorkState(c.ws); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
