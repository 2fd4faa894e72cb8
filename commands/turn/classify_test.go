package turn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

const multiStage = "Fix divide() in calc.sh.\nThen add a test for 7/2 and run the suite."

func TestClassifyPlan(t *testing.T) {
	open := []events.WorkPlan{{PlanID: "plan-1", Status: work.StatusInProgress}}
	done := []events.WorkPlan{{PlanID: "plan-1", Status: work.StatusCompleted}}
	long := strings.Repeat("x", turn.AtomicMaxRunes+1)
	tests := []struct {
		name string
		in   turn.PlanInput
		want string
	}{
		{"a direct question", turn.PlanInput{Text: "What does divide() return for 7/2?"}, turn.PlanNone},
		{"a short single-line fix", turn.PlanInput{Text: "  Fix the typo in README.md  \n"}, turn.PlanNone},
		{"a multi-line request", turn.PlanInput{Text: multiStage}, turn.PlanSeed},
		{"a long single line", turn.PlanInput{Text: long}, turn.PlanSeed},
		{"large multi-block text", turn.PlanInput{Text: strings.Repeat("block\n\n", 40)}, turn.PlanSeed},
		{"an open plan is kept", turn.PlanInput{Text: multiStage, Plans: open}, turn.PlanKeep},
		{"an open plan is kept for a short line too", turn.PlanInput{Text: "go on", Plans: open}, turn.PlanKeep},
		{"a finished plan and a new multi-stage goal", turn.PlanInput{Text: multiStage, Plans: done}, turn.PlanEpoch},
		{"a finished plan and an atomic request", turn.PlanInput{Text: "thanks, commit it", Plans: done}, turn.PlanNone},
		{"a child report creates none", turn.PlanInput{Text: multiStage, Delivered: true}, turn.PlanNone},
		{"a delegated child creates none", turn.PlanInput{Text: multiStage, Child: true}, turn.PlanNone},
	}
	for _, tt := range tests {
		if got, reason := turn.ClassifyPlan(tt.in); got != tt.want || reason == "" {
			t.Errorf("%s: %s (%s), want %s", tt.name, got, reason, tt.want)
		}
	}
}

// workTurn runs one turn of agentName over the harness with the real work tools.
func workTurn(t *testing.T, h *harness, agentName, text string, steps ...string) turn.Outcome {
	t.Helper()
	p := script(t, `{"turns":[`+strings.Join(steps, ",")+`]}`)
	a := buildAgent(tools.NamePlanGet, tools.NamePlanUpdate, tools.NameTodoGet, tools.NameTodoUpdate)
	a.Name = agentName
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: text, Agent: a,
		Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"},
		Tools: worktools.New(commands.NewHandlers(h.store, h.registry, commands.SystemClock{}, nil))})
	if err != nil || out.Reason != events.FinishCompleted {
		t.Fatalf("turn: %+v %v", out, err)
	}
	return out
}

func (h *harness) work(t *testing.T) *work.State {
	t.Helper()
	st, err := commands.NewHandlers(h.store, h.registry, commands.SystemClock{}, nil).Work(context.Background(), h.session)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The seed is written before the first request: the first prompt already carries it in its
// runtime.work_state section, and the model refines it (keeping the host's step ids).
func TestClassifierSeedsBeforeTheFirstRequest(t *testing.T) {
	h := newHarness(t)
	workTurn(t, h, "build", multiStage,
		`{"toolCalls":[{"id":"p1","name":"plan_update","arguments":{"action":"patch","expected_revision":1,"patches":[{"id":"step-1","status":"completed"}]}}]}`,
		`{"text":"done"}`)
	v := h.work(t).PlanView()
	if v == nil || v.Origin != work.OriginHost || v.Title != "Fix divide() in calc.sh." || v.Revision != 2 ||
		len(v.Steps) != 3 || v.Steps[0].Status != work.StatusCompleted || v.Steps[1].Title != "Make the change" {
		t.Fatalf("plan %+v", v)
	}
	var first *events.PromptAssembled
	for _, p := range h.events(t) {
		if pa, ok := p.(events.PromptAssembled); ok && first == nil {
			first = &pa
		}
	}
	found := false
	for _, s := range first.PromptReceipt.Sections {
		found = found || s.ID == "runtime.work_state"
	}
	if !found {
		t.Fatal("the first prompt has no runtime.work_state section")
	}

	// A finished plan and a new multi-stage request: a new epoch keeps the completed step.
	h2 := newHarness(t)
	workTurn(t, h2, "deep", multiStage,
		`{"toolCalls":[{"id":"p1","name":"plan_update","arguments":{"action":"patch","expected_revision":1,"status":"completed"}}]}`,
		`{"text":"done"}`)
	workTurn(t, h2, "deep", "Now the same for multiply().\nWith a test.", `{"text":"ok"}`)
	v = h2.work(t).PlanView()
	if v.PlanID != "plan-2" || v.Origin != work.OriginHost || len(v.Steps) != 4 || v.Steps[0].Title != "Reproduce the failure" {
		t.Fatalf("epoch without completed steps kept? %+v", v)
	}
}

func TestClassifierEpochKeepsCompletedSteps(t *testing.T) {
	h := newHarness(t)
	workTurn(t, h, "build", multiStage,
		`{"toolCalls":[{"id":"p1","name":"plan_update","arguments":{"action":"patch","expected_revision":1,"patches":[{"id":"step-1","status":"completed"}]}}]}`,
		`{"toolCalls":[{"id":"p2","name":"plan_update","arguments":{"action":"patch","expected_revision":2,"status":"completed"}}]}`,
		`{"text":"done"}`)
	workTurn(t, h, "build", "Now multiply().\nWith a test.", `{"text":"ok"}`)
	v := h.work(t).PlanView()
	if v.PlanID != "plan-2" || len(v.Steps) != 4 || v.Steps[0].ID != "step-1" || v.Steps[0].Status != work.StatusCompleted ||
		v.Title != "Now multiply()." {
		t.Fatalf("epoch %+v", v)
	}
	// An atomic request and an open plan write nothing more.
	before := h.work(t).PlanRevision()
	workTurn(t, h, "build", "thanks", `{"text":"ok"}`)
	workTurn(t, h, "build", multiStage, `{"text":"ok"}`)
	if after := h.work(t).PlanRevision(); after != before {
		t.Fatalf("plan revision %d → %d", before, after)
	}
}

// An atomic request creates no plan; an agent without plan_update is never classified.
func TestClassifierAtomicAndNoPlanTool(t *testing.T) {
	h := newHarness(t)
	workTurn(t, h, "build", "Reply with exactly: done", `{"text":"done"}`)
	if v := h.work(t).PlanView(); v != nil {
		t.Fatalf("atomic request made a plan: %+v", v)
	}
	p := script(t, `{"turns":[{"text":"ok"}]}`)
	if _, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: multiStage,
		Agent: buildAgent(), Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}}); err != nil {
		t.Fatal(err)
	}
	if v := h.work(t).PlanView(); v != nil {
		t.Fatalf("an agent without plan_update got a plan: %+v", v)
	}
}
