package turn

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// The plan classifier (docs/plan-classifier.md): before the first provider request of a turn
// whose agent has plan_update, the host decides from what it can observe — never from the
// words of the prompt — whether the turn needs a durable Plan, and writes the agent's light
// Plan itself when it does, so the model refines a Plan rather than deciding whether to keep
// one at all.

// Plan paths, the classifier's decisions.
const (
	// PlanKeep: an open plan exists; it is kept and maintained, never overwritten by a seed.
	PlanKeep = "keep"
	// PlanEpoch: the plan is finished and a new multi-stage goal arrives: a new plan keeps the
	// completed steps and adds the agent's light steps.
	PlanEpoch = "epoch"
	// PlanSeed: an engineering task with no plan: the agent's light plan is written.
	PlanSeed = "seed"
	// PlanNone: no plan is created (an atomic input, a delivered input, a delegated child).
	PlanNone = "none"
)

// AtomicMaxRunes is the longest single-line input that counts as atomic.
const AtomicMaxRunes = 200

// PlanInput is what the classifier observes of a turn: all of it structure, none of it the
// meaning of words.
type PlanInput struct {
	// Text is the turn's user input.
	Text string
	// Delivered is set when the input is a job's report, a peer session's message or the
	// user's steering input delivered from the inbox: none of them starts a goal.
	Delivered bool
	// Child is set for a delegated child's session: its parent owns the plan.
	Child bool
	// Plans is the root session's plan stack, root first.
	Plans []events.WorkPlan
}

// ClassifyPlan decides the plan path of a turn; reason says which rule decided.
func ClassifyPlan(in PlanInput) (path, reason string) {
	switch {
	case in.Child:
		return PlanNone, "a delegated child hands decisions to its parent, which owns the plan"
	case in.Delivered:
		return PlanNone, "a child report, peer message or steering input is no new goal"
	case openPlan(in.Plans):
		return PlanKeep, "an open plan exists"
	case Atomic(in.Text):
		return PlanNone, "a single short line is an atomic request"
	case len(in.Plans) > 0:
		return PlanEpoch, "the plan is finished and a new multi-stage request arrived"
	}
	return PlanSeed, "an engineering request with no plan"
}

func openPlan(plans []events.WorkPlan) bool {
	for _, p := range plans {
		if !work.Terminal(p.Status) {
			return true
		}
	}
	return false
}

// Atomic reports whether an input is atomic by its shape alone: one line (after trimming) of
// at most AtomicMaxRunes. Several lines or blocks, or a long line, are the planned path.
func Atomic(text string) bool {
	t := strings.TrimSpace(text)
	return !strings.ContainsAny(t, "\n\r") && utf8.RuneCountInString(t) <= AtomicMaxRunes
}

// lightPlans are the agents' light plans: the stages each built-in agent's role names
// (docs/plan-classifier.md); any other agent gets defaultLightPlan.
var (
	lightPlans = map[string][]string{
		"plan": {"Establish the facts", "Make the decisions", "Design the interfaces", "Write the implementation steps",
			"Plan failure and recovery", "Define acceptance"},
		"deep": {"Reproduce the failure", "Rank the hypotheses and trace the cause", "Fix the root cause",
			"Verify the fix and the recovery path"},
		"orchestrator": {"Inspect and split the work", "Do or delegate each part", "Integrate and verify"},
	}
	defaultLightPlan = []string{"Inspect the relevant code", "Make the change", "Verify the result"}
)

// LightPlan returns the steps of agent's light plan.
func LightPlan(agentName string) []string {
	if s, ok := lightPlans[agentName]; ok {
		return s
	}
	return defaultLightPlan
}

// maxTitleRunes bounds the seeded plan's title, the request's first line.
const maxTitleRunes = 80

// seedUpdate is the plan_update the host sends for path, over the current plans.
func seedUpdate(path, agentName, text string, st *work.State) work.PlanUpdate {
	u := work.PlanUpdate{Action: work.ActionCreate, Origin: work.OriginHost, Title: planTitle(text)}
	if path == PlanEpoch {
		rev := st.PlanRevision()
		u.ExpectedRevision = &rev
		for _, s := range st.Plans()[0].Steps {
			if s.Status == work.StatusCompleted {
				u.Steps = append(u.Steps, work.StepInput{ID: s.ID, Title: s.Title, Status: s.Status})
			}
		}
	}
	for _, title := range LightPlan(agentName) {
		u.Steps = append(u.Steps, work.StepInput{Title: title})
	}
	if len(u.Steps) > work.MaxPlanSteps { // keep the newest completed steps and every light step
		u.Steps = u.Steps[len(u.Steps)-work.MaxPlanSteps:]
	}
	return u
}

// planTitle is the request's first non-empty line, control characters made spaces, cut to
// maxTitleRunes.
func planTitle(text string) string {
	line := ""
	for l := range strings.SplitSeq(text, "\n") {
		if line = strings.TrimSpace(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, l)); line != "" {
			break
		}
	}
	if line == "" {
		return "Work"
	}
	if r := []rune(line); len(r) > maxTitleRunes {
		line = strings.TrimSpace(string(r[:maxTitleRunes-1])) + "…"
	}
	return line
}

// classifyPlan runs the classifier once, before the turn's first request, and writes the seed
// or the new epoch it decides. The turn's opening is committed first, so the plan follows the
// message that caused it in the log. A refusal of the seed (another writer changed the plan
// in between) leaves the plan to the model: it is shown whatever the plan now is.
func (r *run) classifyPlan(ctx context.Context) error {
	if _, ok := r.tools[tools.NamePlanUpdate]; !ok {
		return nil
	}
	path, _ := ClassifyPlan(PlanInput{Text: r.req.Text, Delivered: r.req.Report != nil,
		Child: r.sess.ParentSessionID != "", Plans: r.work.Plans()})
	if path != PlanSeed && path != PlanEpoch {
		return nil
	}
	if err := r.commit(ctx); err != nil {
		return err
	}
	h := commands.NewHandlers(r.d.Store, r.d.Registry, r.d.Clock, nil)
	res, err := h.UpdatePlan(ctx, &commands.UpdatePlan{SessionID: r.req.SessionID,
		Meta:   commands.Meta{CommandID: "plan-classifier/" + r.turnID, Actor: "host", CorrelationID: r.req.SessionID, CausationID: r.turnID},
		Update: seedUpdate(path, r.req.Agent.Name, r.req.Text, r.work)})
	if err == nil && res.Error != nil {
		var de *domain.Error
		if err = res.Error.Typed(); errors.As(err, &de) {
			err = nil
		}
	}
	return err
}
