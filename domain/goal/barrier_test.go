package goal_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/verification"
	"github.com/zuno-run/zuno/events"
)

// activeGoal is a state with an active Goal at revision 1 whose criteria are cs.
func activeGoal(t *testing.T, cs ...goal.CriterionInput) *goal.State {
	t.Helper()
	s := &goal.State{}
	obj := "ship the fix"
	ps, err := goal.Decide(s, goal.Update{SessionID: "ses_1", TurnID: "turn_1", Objective: &obj, Criteria: &cs}, goal.Facts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func complete(s *goal.State, f goal.Facts, evidence map[string]string) error {
	rev := s.Revision()
	_, err := goal.Decide(s, goal.Update{SessionID: "ses_1", ExpectedRevision: &rev, Status: events.GoalComplete, Evidence: evidence}, f)
	return err
}

func plan(status string, steps ...string) events.WorkPlan {
	p := events.WorkPlan{PlanID: "plan-1", Title: "p", Status: status}
	for i, st := range steps {
		p.Steps = append(p.Steps, events.WorkPlanStep{ID: "step-" + string(rune('1'+i)), Title: "s", Status: st})
	}
	return p
}

func job(status, delivery, input string, consumed bool) goal.Job {
	return goal.Job{ID: "job_1", Status: status, ReportDelivery: delivery, ReportInputID: input, ReportConsumed: consumed}
}

// TestBarrier walks every blocking and non-blocking state of seeds 002 §7.4.
func TestBarrier(t *testing.T) {
	const rcp = "rcp_0123456789abcdef0123456789abcdef"
	receipt := func(authority, verdict string) map[string]verification.Receipt {
		return map[string]verification.Receipt{rcp: {ReceiptID: rcp, Authority: authority, Verdict: verdict}}
	}
	cases := []struct {
		name    string
		f       goal.Facts
		needs   bool   // the Goal has one criterion needing evidence
		cite    string // the receipt cited for it
		blocked string // the blocker kind expected; "" completes
	}{
		{name: "nothing open", f: goal.Facts{}},
		{name: "plan step pending", f: goal.Facts{Plans: []events.WorkPlan{plan("in_progress", "completed", "pending")}}, blocked: goal.BlockPlanStep},
		{name: "plan step in progress", f: goal.Facts{Plans: []events.WorkPlan{plan("in_progress", "in_progress")}}, blocked: goal.BlockPlanStep},
		{name: "plan step blocked", f: goal.Facts{Plans: []events.WorkPlan{plan("in_progress", "blocked")}}, blocked: goal.BlockPlanStep},
		{name: "plan steps all completed or superseded", f: goal.Facts{Plans: []events.WorkPlan{plan("completed", "completed", "superseded")}}},
		{name: "superseded plan's open steps", f: goal.Facts{Plans: []events.WorkPlan{plan("superseded", "pending")}}},
		{name: "todo pending", f: goal.Facts{Todos: []events.WorkItem{{ID: "t1", Status: "pending"}}}, blocked: goal.BlockTodo},
		{name: "todo in progress", f: goal.Facts{Todos: []events.WorkItem{{ID: "t1", Status: "in_progress"}}}, blocked: goal.BlockTodo},
		{name: "todo blocked", f: goal.Facts{Todos: []events.WorkItem{{ID: "t1", Status: "blocked"}}}, blocked: goal.BlockTodo},
		{name: "todos completed and cancelled", f: goal.Facts{Todos: []events.WorkItem{{ID: "t1", Status: "completed"}, {ID: "t2", Status: "cancelled"}}}},
		{name: "job queued", f: goal.Facts{Jobs: []goal.Job{job(events.JobQueued, events.DeliveryNextStep, "", false)}}, blocked: goal.BlockJob},
		{name: "job running", f: goal.Facts{Jobs: []goal.Job{job(events.JobRunning, events.DeliveryQuiet, "", false)}}, blocked: goal.BlockJob},
		{name: "nextStep report queued/steering/promoted (unconsumed)", f: goal.Facts{Jobs: []goal.Job{job(events.JobCompleted, events.DeliveryNextStep, "in_1", false)}}, blocked: goal.BlockReport},
		{name: "nextStep failed job report unconsumed", f: goal.Facts{Jobs: []goal.Job{job(events.JobFailed, events.DeliveryNextStep, "in_1", false)}}, blocked: goal.BlockReport},
		{name: "nextStep report consumed", f: goal.Facts{Jobs: []goal.Job{job(events.JobCompleted, events.DeliveryNextStep, "in_1", true)}}},
		{name: "uncertain, report unconsumed", f: goal.Facts{Jobs: []goal.Job{job(events.JobUncertain, events.DeliveryNextStep, "", false)}}, blocked: goal.BlockUncertain},
		{name: "uncertain, report consumed", f: goal.Facts{Jobs: []goal.Job{job(events.JobUncertain, events.DeliveryNextStep, "in_1", true)}}, blocked: goal.BlockUncertain},
		{name: "uncertain quiet", f: goal.Facts{Jobs: []goal.Job{job(events.JobUncertain, events.DeliveryQuiet, "", false)}}, blocked: goal.BlockUncertain},
		{name: "quiet completed", f: goal.Facts{Jobs: []goal.Job{job(events.JobCompleted, events.DeliveryQuiet, "", false)}}},
		{name: "quiet failed", f: goal.Facts{Jobs: []goal.Job{job(events.JobFailed, events.DeliveryQuiet, "", false)}}},
		{name: "quiet cancelled", f: goal.Facts{Jobs: []goal.Job{job(events.JobCancelled, events.DeliveryQuiet, "", false)}}},
		{name: "evidence missing", needs: true, blocked: goal.BlockEvidence},
		{name: "evidence not an id", needs: true, cite: "rcp_nope", blocked: goal.BlockEvidence},
		{name: "evidence not recorded", needs: true, cite: rcp, blocked: goal.BlockEvidence},
		{name: "evidence derived", needs: true, cite: rcp, f: goal.Facts{Receipts: receipt("derived", "passed")}, blocked: goal.BlockEvidence},
		{name: "evidence authoritative failing", needs: true, cite: rcp, f: goal.Facts{Receipts: receipt("authoritative", "failed")}, blocked: goal.BlockEvidence},
		{name: "evidence authoritative passing", needs: true, cite: rcp, f: goal.Facts{Receipts: receipt("authoritative", "passed")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s *goal.State
			var ev map[string]string
			if c.needs {
				s = activeGoal(t, goal.CriterionInput{ID: "tests", Text: "the tests pass", NeedsEvidence: true})
				ev = map[string]string{}
				if c.cite != "" {
					ev["tests"] = c.cite
				}
			} else {
				s = activeGoal(t, goal.CriterionInput{ID: "doc", Text: "documented"})
			}
			err := complete(s, c.f, ev)
			if c.blocked == "" {
				if err != nil {
					t.Fatalf("completion refused: %v", err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Code() != goal.CodeGoalBlocked {
				t.Fatalf("completion not blocked: %v", err)
			}
			if len(de.Valid) != 1 || !strings.HasPrefix(de.Valid[0], c.blocked+" ") {
				t.Fatalf("blockers %q, want one %s", de.Valid, c.blocked)
			}
		})
	}
}

// TestCompletionRecordsEvidence: the completed Goal carries the receipt that met each
// criterion and the job ledger revision the barrier read.
func TestCompletionRecordsEvidence(t *testing.T) {
	const rcp = "rcp_0123456789abcdef0123456789abcdef"
	s := activeGoal(t, goal.CriterionInput{ID: "tests", Text: "the tests pass", NeedsEvidence: true})
	rev := s.Revision()
	ps, err := goal.Decide(s, goal.Update{SessionID: "ses_1", ExpectedRevision: &rev, Status: events.GoalComplete,
		Evidence: map[string]string{"tests": rcp}}, goal.Facts{JobsRevision: 7,
		Receipts: map[string]verification.Receipt{rcp: {ReceiptID: rcp, Authority: "authoritative", Verdict: "passed"}}})
	if err != nil {
		t.Fatal(err)
	}
	c := ps[0].(events.GoalCompleted)
	if c.Status != events.GoalComplete || c.Criteria[0].Evidence != rcp || c.JobsRevision != 7 || c.Revision != rev+1 {
		t.Fatalf("completion %+v", c)
	}
}

// TestActionable: what counts as work to do now for the auto-continuation.
func TestActionable(t *testing.T) {
	item := func(id, status string, deps ...string) events.WorkItem {
		return events.WorkItem{ID: id, Status: status, Dependencies: deps}
	}
	for _, c := range []struct {
		name  string
		plans []events.WorkPlan
		todos []events.WorkItem
		want  bool
	}{
		{name: "nothing", want: false},
		{name: "pending todo", todos: []events.WorkItem{item("a", "pending")}, want: true},
		{name: "in-progress todo", todos: []events.WorkItem{item("a", "in_progress")}, want: true},
		{name: "blocked todo", todos: []events.WorkItem{item("a", "blocked")}, want: false},
		{name: "todo waiting on an open one", todos: []events.WorkItem{item("a", "blocked"), item("b", "pending", "a")}, want: false},
		{name: "todo whose dependency completed", todos: []events.WorkItem{item("a", "completed"), item("b", "pending", "a")}, want: true},
		{name: "finished todos", todos: []events.WorkItem{item("a", "completed"), item("b", "cancelled")}, want: false},
		{name: "plan step in progress", plans: []events.WorkPlan{plan("in_progress", "completed", "in_progress")}, want: true},
		{name: "plan steps nobody took up", plans: []events.WorkPlan{plan("pending", "pending", "pending")}, want: false},
		{name: "superseded plan's step in progress", plans: []events.WorkPlan{plan("superseded", "in_progress")}, want: false},
	} {
		if got := goal.Actionable(c.plans, c.todos); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
