package work_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// Fixtures, each the commands that build it; the comment is the resulting plan revision.
var (
	// 1: plan-1 with step-1 "Explore" (pending), step-2 "Decide" (completed).
	rootPlan = []work.Command{
		work.PlanUpdate{Action: work.ActionCreate, Title: "Root", Steps: []work.StepInput{{Title: "Explore"}, {Title: "Decide", Status: work.StatusCompleted}}},
	}
	// 2: plan-2 "Sub" (depth 1, step-3) pushed under plan-1.
	subPlan = append(clone(rootPlan),
		work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(1), Title: "Sub", Steps: steps("Detail")})
	// 2: plan-1 completed.
	completedRoot = append(clone(rootPlan),
		work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Status: work.StatusCompleted})
	// 3: plan-2 completed while still pushed.
	completedSub = append(clone(subPlan),
		work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(2), Status: work.StatusCompleted})
)

func clone(cmds []work.Command) []work.Command { return append([]work.Command(nil), cmds...) }

func build(t *testing.T, cmds []work.Command) *world {
	t.Helper()
	w := newWorld(t)
	for _, c := range cmds {
		w.must(c)
	}
	return w
}

func TestPlanUpdateErrors(t *testing.T) {
	long := strings.Repeat("é", domain.MaxTitleRunes+1)
	var tooMany []work.StepInput
	for range work.MaxPlanSteps + 1 {
		tooMany = append(tooMany, work.StepInput{Title: "s"})
	}
	tests := []struct {
		name  string
		setup []work.Command
		cmd   work.PlanUpdate
		code  string
		field string
	}{
		{"action missing", nil, work.PlanUpdate{Title: "T", Steps: steps("a")}, domain.CodeInvalidAction, "action"},
		{"action unknown", rootPlan, work.PlanUpdate{Action: "delete", ExpectedRevision: rev(1)}, domain.CodeInvalidAction, "action"},
		{"action wrong case", nil, work.PlanUpdate{Action: "Create", Title: "T", Steps: steps("a")}, domain.CodeInvalidAction, "action"},

		{"create over plan without revision", rootPlan, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: steps("a")}, domain.CodeExpectedRevisionRequired, "expected_revision"},
		{"patch without revision", rootPlan, work.PlanUpdate{Action: work.ActionPatch, Title: "T"}, domain.CodeExpectedRevisionRequired, "expected_revision"},
		{"patch without plan or revision", nil, work.PlanUpdate{Action: work.ActionPatch, Title: "T"}, domain.CodeExpectedRevisionRequired, "expected_revision"},
		{"append without revision", rootPlan, work.PlanUpdate{Action: work.ActionAppend, Steps: steps("a")}, domain.CodeExpectedRevisionRequired, "expected_revision"},
		{"push without revision", rootPlan, work.PlanUpdate{Action: work.ActionPush, Title: "T", Steps: steps("a")}, domain.CodeExpectedRevisionRequired, "expected_revision"},
		{"pop without revision", subPlan, work.PlanUpdate{Action: work.ActionPop}, domain.CodeExpectedRevisionRequired, "expected_revision"},

		{"first create with wrong revision", nil, work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(1), Title: "T", Steps: steps("a")}, domain.CodeStaleRevision, "expected_revision"},
		{"create with old revision", subPlan, work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(1), Title: "T", Steps: steps("a")}, domain.CodeStaleRevision, "expected_revision"},
		{"patch with future revision", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(9), Title: "T"}, domain.CodeStaleRevision, "expected_revision"},

		{"patch without plan", nil, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(0), Title: "T"}, domain.CodeNoPlan, ""},
		{"append without plan", nil, work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(0), Steps: steps("a")}, domain.CodeNoPlan, ""},
		{"push without plan", nil, work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(0), Title: "T", Steps: steps("a")}, domain.CodeNoPlan, ""},
		{"pop without plan", nil, work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(0)}, domain.CodeNoSubPlan, ""},
		{"pop root", rootPlan, work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(1)}, domain.CodeNoSubPlan, ""},
		{"pop after pop", append(clone(subPlan), work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(2)}), work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(3)}, domain.CodeNoSubPlan, ""},

		{"patch unknown step", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-9", Status: str("completed")}}}, domain.CodeStepNotFound, "patches[0].id"},
		{"patch parent step from sub-plan", subPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(2), Patches: []work.StepPatch{{ID: "step-1", Status: str("completed")}}}, domain.CodeStepNotFound, "patches[0].id"},

		{"reopen completed step", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-2", Status: str("pending")}}}, domain.CodeTerminalState, "patches[0]"},
		{"retitle completed step", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-2", Title: str("Other")}}}, domain.CodeTerminalState, "patches[0]"},
		{"supersede completed step", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-2", Status: str("superseded")}}}, domain.CodeTerminalState, "patches[0]"},
		{"patch completed plan", completedRoot, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(2), Title: "Again"}, domain.CodeTerminalState, ""},
		{"reopen completed plan", completedRoot, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(2), Status: work.StatusInProgress}, domain.CodeTerminalState, ""},
		{"append to completed plan", completedRoot, work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(2), Steps: steps("a")}, domain.CodeTerminalState, ""},
		{"push under completed plan", completedRoot, work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(2), Title: "T", Steps: steps("a")}, domain.CodeTerminalState, ""},
		{"pop completed sub-plan as superseded", completedSub, work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(3), Status: work.StatusSuperseded}, domain.CodeTerminalState, "status"},

		{"create without title", nil, work.PlanUpdate{Action: work.ActionCreate, Steps: steps("a")}, domain.CodeInvalidArgument, "title"},
		{"create with blank title", nil, work.PlanUpdate{Action: work.ActionCreate, Title: " \t", Steps: steps("a")}, domain.CodeInvalidArgument, "title"},
		{"create with long title", nil, work.PlanUpdate{Action: work.ActionCreate, Title: long, Steps: steps("a")}, domain.CodeInvalidArgument, "title"},
		{"create with multi-line title", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "a\nb", Steps: steps("a")}, domain.CodeInvalidArgument, "title"},
		{"create without steps", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T"}, domain.CodeInvalidArgument, "steps"},
		{"create with too many steps", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: tooMany}, domain.CodeInvalidArgument, "steps"},
		{"create with duplicate step ids", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{ID: "a", Title: "x"}, {ID: "a", Title: "y"}}}, domain.CodeInvalidArgument, "steps[1].id"},
		{"create with spaced step id", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{ID: "a b", Title: "x"}}}, domain.CodeInvalidArgument, "steps[0].id"},
		{"create with empty step title", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{Title: "x"}, {Title: ""}}}, domain.CodeInvalidArgument, "steps[1].title"},
		{"create with long step title", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{Title: long}}}, domain.CodeInvalidArgument, "steps[0].title"},
		{"create with bad step status", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{Title: "x", Status: "done"}}}, domain.CodeInvalidArgument, "steps[0].status"},
		{"create with todo status", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{Title: "x", Status: "cancelled"}}}, domain.CodeInvalidArgument, "steps[0].status"},
		{"create with status", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: steps("a"), Status: "pending"}, domain.CodeInvalidArgument, "status"},
		{"create with patches", nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: steps("a"), Patches: []work.StepPatch{{ID: "x"}}}, domain.CodeInvalidArgument, "patches"},
		{"patch with steps", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Steps: steps("a")}, domain.CodeInvalidArgument, "steps"},
		{"patch with nothing", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1)}, domain.CodeInvalidArgument, "patches"},
		{"patch entry with nothing", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-1"}}}, domain.CodeInvalidArgument, "patches[0]"},
		{"patch entry without id", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{Status: str("completed")}}}, domain.CodeInvalidArgument, "patches[0].id"},
		{"patch step twice", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-1", Status: str("in_progress")}, {ID: "step-1", Title: str("x")}}}, domain.CodeInvalidArgument, "patches[1].id"},
		{"patch step to empty title", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-1", Title: str("")}}}, domain.CodeInvalidArgument, "patches[0].title"},
		{"patch step to bad status", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Patches: []work.StepPatch{{ID: "step-1", Status: str("finished")}}}, domain.CodeInvalidArgument, "patches[0].status"},
		{"patch plan to bad status", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Status: "cancelled"}, domain.CodeInvalidArgument, "status"},
		{"patch plan to long title", rootPlan, work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Title: long}, domain.CodeInvalidArgument, "title"},
		{"append with id", rootPlan, work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(1), Steps: []work.StepInput{{ID: "step-9", Title: "x"}}}, domain.CodeInvalidArgument, "steps[0].id"},
		{"append nothing", rootPlan, work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(1)}, domain.CodeInvalidArgument, "steps"},
		{"append past the cap", rootPlan, work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(1), Steps: tooMany[:work.MaxPlanSteps-1]}, domain.CodeInvalidArgument, "steps"},
		{"append with title", rootPlan, work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(1), Title: "T", Steps: steps("a")}, domain.CodeInvalidArgument, "title"},
		{"push without steps", rootPlan, work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(1), Title: "T"}, domain.CodeInvalidArgument, "steps"},
		{"push without title", rootPlan, work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(1), Steps: steps("a")}, domain.CodeInvalidArgument, "title"},
		{"pop with bad status", subPlan, work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(2), Status: work.StatusBlocked}, domain.CodeInvalidArgument, "status"},
		{"pop with title", subPlan, work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(2), Title: "T"}, domain.CodeInvalidArgument, "title"},
		{"wrong session", rootPlan, work.PlanUpdate{SessionID: "ses_other", Action: work.ActionPatch, ExpectedRevision: rev(1), Title: "T"}, domain.CodeInvalidArgument, "session_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := build(t, tt.setup)
			_, err := w.do(tt.cmd)
			de := wantCode(t, err, tt.code)
			if de.Field != tt.field {
				t.Errorf("field %q, want %q", de.Field, tt.field)
			}
			if de.Message == "" || de.Fix == "" {
				t.Errorf("error %q lacks a message or a fix", err)
			}
		})
	}
}

func TestPlanErrorDetails(t *testing.T) {
	w := build(t, subPlan)

	_, err := w.do(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Title: "T"})
	de := wantCode(t, err, domain.CodeStaleRevision)
	if de.Expected != 1 || de.Current != 2 {
		t.Errorf("expected/current %d/%d, want 1/2", de.Expected, de.Current)
	}
	for _, want := range []string{"1", "2", "plan_get"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}

	_, err = w.do(work.PlanUpdate{Action: work.ActionPatch, Title: "T"})
	if !strings.Contains(wantCode(t, err, domain.CodeExpectedRevisionRequired).Error(), "plan_get") {
		t.Errorf("%q does not tell to call plan_get", err)
	}

	_, err = w.do(work.PlanUpdate{Action: "remove"})
	de = wantCode(t, err, domain.CodeInvalidAction)
	if !reflect.DeepEqual(de.Valid, work.PlanActions()) {
		t.Errorf("valid actions %v, want %v", de.Valid, work.PlanActions())
	}
	for _, a := range work.PlanActions() {
		if !strings.Contains(err.Error(), a) {
			t.Errorf("%q does not list action %s", err, a)
		}
	}

	_, err = w.do(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(2), Patches: []work.StepPatch{{ID: "nope", Status: str("completed")}}})
	if de := wantCode(t, err, domain.CodeStepNotFound); de.ID != "nope" {
		t.Errorf("id %q, want nope", de.ID)
	}
}

func TestPlanCreateFirst(t *testing.T) {
	for _, expected := range []*uint64{nil, rev(0)} {
		w := newWorld(t)
		if w.s.PlanView() != nil {
			t.Fatal("plan before create")
		}
		out := w.must(work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: expected, Title: "  Fix the gap ",
			Steps: []work.StepInput{{Title: "Reproduce"}, {ID: "step-1", Title: "Mine", Status: work.StatusInProgress}, {Title: "Verify"}}})
		want := &work.PlanView{PlanID: "plan-1", Revision: 1, Title: "Fix the gap", Status: work.StatusInProgress, Steps: []work.StepView{
			{ID: "step-2", Title: "Reproduce", Status: "pending"},
			{ID: "step-1", Title: "Mine", Status: "in_progress"},
			{ID: "step-3", Title: "Verify", Status: "pending"},
		}}
		if got := w.s.PlanView(); !reflect.DeepEqual(got, want) {
			t.Errorf("view\n got %+v\nwant %+v", got, want)
		}
		if len(out) != 1 || out[0].EventType() != events.TypeWorkPlanCreated {
			t.Errorf("events %v, want one %s", out, events.TypeWorkPlanCreated)
		}
	}
}

func TestPlanCreateReplacesStack(t *testing.T) {
	w := build(t, subPlan)
	out := w.must(work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(2), Title: "New goal", Steps: steps("One")})
	want := []events.Payload{
		events.WorkPlanSuperseded{SessionID: sessionID, Revision: 3, PlanID: "plan-2", Status: work.StatusSuperseded, SupersededBy: "plan-3"},
		events.WorkPlanSuperseded{SessionID: sessionID, Revision: 3, PlanID: "plan-1", Status: work.StatusSuperseded, SupersededBy: "plan-3"},
		events.WorkPlanCreated{SessionID: sessionID, Revision: 3, WorkPlan: events.WorkPlan{
			PlanID: "plan-3", Title: "New goal", Status: work.StatusInProgress,
			Steps: []events.WorkPlanStep{{ID: "step-4", Title: "One", Status: "pending"}},
		}},
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("events\n got %+v\nwant %+v", out, want)
	}
	v := w.s.PlanView()
	if v.PlanID != "plan-3" || v.Depth != 0 || v.ParentPlanID != "" || v.Revision != 3 {
		t.Errorf("view %+v, want root plan-3 at revision 3", v)
	}
	// The old stack is gone: the new plan is the root.
	_, err := w.do(work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(3)})
	wantCode(t, err, domain.CodeNoSubPlan)
}

func TestPlanCreateAfterCompletedPlan(t *testing.T) {
	w := build(t, completedRoot)
	out := w.must(work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(2), Title: "Next epoch",
		Steps: []work.StepInput{{ID: "step-2", Title: "Decide", Status: work.StatusCompleted}, {Title: "Build"}}})
	if len(out) != 1 {
		t.Fatalf("events %+v: a completed plan must stay completed, not become superseded", out)
	}
	v := w.s.PlanView()
	if v.Status != work.StatusInProgress || v.Steps[0] != (work.StepView{ID: "step-2", Title: "Decide", Status: "completed"}) || v.Steps[1].ID != "step-3" {
		t.Errorf("view %+v", v)
	}
}

func TestPlanPatch(t *testing.T) {
	w := build(t, rootPlan)
	out := w.must(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1), Title: "Renamed",
		Patches: []work.StepPatch{
			{ID: "step-1", Status: str(work.StatusInProgress)},
			// Re-sending a finished step unchanged is accepted.
			{ID: "step-2", Title: str("Decide"), Status: str(work.StatusCompleted)},
		}})
	want := &work.PlanView{PlanID: "plan-1", Revision: 2, Title: "Renamed", Status: work.StatusInProgress, Steps: []work.StepView{
		{ID: "step-1", Title: "Explore", Status: "in_progress"},
		{ID: "step-2", Title: "Decide", Status: "completed"},
	}}
	if got := w.s.PlanView(); !reflect.DeepEqual(got, want) {
		t.Errorf("view\n got %+v\nwant %+v", got, want)
	}
	if p := out[0].(events.WorkPlanPatched); !reflect.DeepEqual(p.PatchedStepIDs, []string{"step-1", "step-2"}) {
		t.Errorf("patched ids %v", p.PatchedStepIDs)
	}

	w.must(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(2), Patches: []work.StepPatch{{ID: "step-1", Title: str("Explore more"), Status: str(work.StatusSuperseded)}}})
	w.must(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(3), Status: work.StatusSuperseded})
	if v := w.s.PlanView(); v.Status != work.StatusSuperseded || v.Revision != 4 || v.Steps[0].Status != work.StatusSuperseded {
		t.Errorf("view %+v", v)
	}
	_, err := w.do(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(4), Status: work.StatusSuperseded})
	wantCode(t, err, domain.CodeTerminalState)
}

func TestPlanAppendIDs(t *testing.T) {
	w := newWorld(t)
	// The model took step-3; host ids skip it and never repeat.
	w.must(work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{ID: "step-3", Title: "a"}, {Title: "b"}}})
	out := w.must(work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(1), Steps: []work.StepInput{{Title: "c"}, {Title: "d", Status: work.StatusBlocked}}})
	ev := out[0].(events.WorkPlanStepsAppended)
	if !reflect.DeepEqual(ev.AppendedStepIDs, []string{"step-4", "step-5"}) {
		t.Errorf("appended ids %v, want step-4, step-5", ev.AppendedStepIDs)
	}
	var ids []string
	for _, st := range w.s.PlanView().Steps {
		ids = append(ids, st.ID+"/"+st.Status)
	}
	if want := []string{"step-3/pending", "step-1/pending", "step-4/pending", "step-5/blocked"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("steps %v, want %v", ids, want)
	}

	// The same commands on a fresh aggregate give the same ids.
	again := newWorld(t)
	again.must(work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: []work.StepInput{{ID: "step-3", Title: "a"}, {Title: "b"}}})
	again.must(work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(1), Steps: []work.StepInput{{Title: "c"}, {Title: "d", Status: work.StatusBlocked}}})
	if !reflect.DeepEqual(again.s.PlanView(), w.s.PlanView()) {
		t.Error("the same commands gave different plans")
	}

	var fill []work.StepInput
	for range work.MaxPlanSteps - 4 {
		fill = append(fill, work.StepInput{Title: "x"})
	}
	w.must(work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(2), Steps: fill})
	if n := len(w.s.PlanView().Steps); n != work.MaxPlanSteps {
		t.Fatalf("%d steps, want %d", n, work.MaxPlanSteps)
	}
	_, err := w.do(work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(3), Steps: steps("one too many")})
	wantCode(t, err, domain.CodeInvalidArgument)
}

func TestPlanPushPop(t *testing.T) {
	w := build(t, rootPlan)
	parent := w.s.PlanView()

	w.must(work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(1), Title: "Investigate", Steps: steps("Read logs", "Bisect")})
	sub := w.s.PlanView()
	want := &work.PlanView{PlanID: "plan-2", Revision: 2, Title: "Investigate", Status: work.StatusInProgress, Depth: 1, ParentPlanID: "plan-1",
		Steps: []work.StepView{{ID: "step-3", Title: "Read logs", Status: "pending"}, {ID: "step-4", Title: "Bisect", Status: "pending"}}}
	if !reflect.DeepEqual(sub, want) {
		t.Errorf("sub-plan\n got %+v\nwant %+v", sub, want)
	}

	w.must(work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(2), Title: "Deeper", Steps: steps("x")})
	if v := w.s.PlanView(); v.Depth != 2 || v.ParentPlanID != "plan-2" {
		t.Errorf("nested sub-plan %+v", v)
	}
	out := w.must(work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(3), Status: work.StatusSuperseded})
	if p := out[0].(events.WorkPlanPopped); p.PlanID != "plan-3" || p.Status != work.StatusSuperseded || p.RestoredPlanID != "plan-2" {
		t.Errorf("popped %+v", p)
	}
	restored := *sub
	restored.Revision = 4
	if got := w.s.PlanView(); !reflect.DeepEqual(got, &restored) {
		t.Errorf("after pop\n got %+v\nwant %+v", got, &restored)
	}

	w.must(work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(4), Patches: []work.StepPatch{{ID: "step-3", Status: str("completed")}}})
	out = w.must(work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(5)})
	popped := out[0].(events.WorkPlanPopped)
	if popped.Status != work.StatusCompleted || popped.Depth != 1 || popped.Steps[0].Status != work.StatusCompleted {
		t.Errorf("popped %+v, want plan-2 completed with its patched step", popped)
	}
	parent.Revision = 6
	if got := w.s.PlanView(); !reflect.DeepEqual(got, parent) {
		t.Errorf("parent after pop\n got %+v\nwant %+v", got, parent)
	}
}

func TestPlanPopTerminalSubPlan(t *testing.T) {
	for _, status := range []string{"", work.StatusCompleted} {
		w := build(t, completedSub)
		out := w.must(work.PlanUpdate{Action: work.ActionPop, ExpectedRevision: rev(3), Status: status})
		if p := out[0].(events.WorkPlanPopped); p.Status != work.StatusCompleted {
			t.Errorf("popped with status %q: %+v", status, p)
		}
		if v := w.s.PlanView(); v.PlanID != "plan-1" || v.Revision != 4 {
			t.Errorf("view %+v", v)
		}
	}
}

func TestPlanDepthLimit(t *testing.T) {
	w := build(t, rootPlan)
	for i := range work.MaxPlanDepth {
		w.must(work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(uint64(i + 1)), Title: "Sub", Steps: steps("x")})
	}
	_, err := w.do(work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(work.MaxPlanDepth + 1), Title: "Sub", Steps: steps("x")})
	wantCode(t, err, domain.CodeInvalidArgument)
}

func TestTitleAtLimit(t *testing.T) {
	w := newWorld(t)
	title := strings.Repeat("界", domain.MaxTitleRunes)
	w.must(work.PlanUpdate{Action: work.ActionCreate, Title: title, Steps: []work.StepInput{{Title: title}}})
	if w.s.PlanView().Title != title {
		t.Error("title at the limit was changed")
	}
}

func TestPlanViewJSON(t *testing.T) {
	w := newWorld(t)
	if got := mustJSON(t, w.s.PlanView()); got != "null" {
		t.Errorf("no plan: %s, want null", got)
	}
	w.must(work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: steps("A")})
	want := `{"plan_id":"plan-1","revision":1,"title":"T","status":"in_progress","depth":0,"parent_plan_id":"",` +
		`"steps":[{"id":"step-1","title":"A","status":"pending"}]}`
	if got := mustJSON(t, w.s.PlanView()); got != want {
		t.Errorf("plan_get\n got %s\nwant %s", got, want)
	}
}

func TestPlanUpdateFromToolJSON(t *testing.T) {
	var c work.PlanUpdate
	err := json.Unmarshal([]byte(`{"action":"patch","expected_revision":3,"title":"T","status":"completed",
		"patches":[{"id":"step-1","status":"completed"},{"id":"step-2","title":"x"}],"steps":[{"id":"a","title":"b","status":"pending"}]}`), &c)
	if err != nil {
		t.Fatal(err)
	}
	want := work.PlanUpdate{Action: "patch", ExpectedRevision: rev(3), Title: "T", Status: "completed",
		Patches: []work.StepPatch{{ID: "step-1", Status: str("completed")}, {ID: "step-2", Title: str("x")}},
		Steps:   []work.StepInput{{ID: "a", Title: "b", Status: "pending"}}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if err := json.Unmarshal([]byte(`{"action":"create","session_id":"x"}`), &c); err != nil || c.SessionID != "" {
		t.Errorf("the model must not set the session id: %+v %v", c, err)
	}
}

func TestDecideNilStateAndMissingSession(t *testing.T) {
	out, err := work.Decide(nil, work.PlanUpdate{SessionID: sessionID, Action: work.ActionCreate, Title: "T", Steps: steps("a")})
	if err != nil || len(out) != 1 {
		t.Errorf("nil state: %v %v", out, err)
	}
	_, err = work.Decide(nil, work.PlanUpdate{Action: work.ActionCreate, Title: "T", Steps: steps("a")})
	wantCode(t, err, domain.CodeInvalidArgument)
}
