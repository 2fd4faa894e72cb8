package prompt

import (
	"github.com/zuno-run/zuno/domain/tools"
	"slices"
	"strings"
)

// Ids of the six stable runtime sections and of the work state section.
const (
	SectionIntent       = "runtime.intent"
	SectionExecution    = "runtime.execution"
	SectionEditing      = "runtime.editing"
	SectionVerification = "runtime.verification"
	SectionDelegation   = "runtime.delegation"
	SectionPersistence  = "runtime.persistence"
	SectionWorkState    = "runtime.work_state"
)

// RuntimeSource is the fixed source of every host-written section: "zuno-runtime:<id>".
func RuntimeSource(id string) string { return "zuno-runtime:" + id }

// durableTools read or change the durable work state; any of them makes
// runtime.persistence relevant even before any state exists.
var durableTools = []string{tools.NameGoalGet, tools.NameGoalUpdate, tools.NameGoalRequestInput, tools.NameJob, tools.NameJobReconcile, tools.NamePlanGet, tools.NamePlanUpdate,
	tools.NameTodoGet, tools.NameTodoUpdate}

// Collaboration modes. ModeNone produces no mode section.
const (
	ModeNone = ""
	ModePlan = "plan"
	ModeWork = "work"
)

var modeText = map[string]string{
	ModePlan: "Collaboration mode: Plan. Stay read-only: do not edit files or run commands that change the workspace. " +
		"Establish the facts, make the decisions the task needs, and deliver a decision-complete implementation plan " +
		"with interfaces, steps, failure and recovery handling, and acceptance checks. Do not start the implementation.",
	ModeWork: "Collaboration mode: Work. Carry the task through to a verified result in the workspace.",
}

// RuntimeState is what the runtime sections' injection conditions read besides the tools.
type RuntimeState struct {
	// Delegates is the effective delegate roster: the child agents task may start.
	Delegates []string
	// DurableState is set when the root session has a Goal, Plan, Todo item, Job or inbox
	// input.
	DurableState bool
}

const (
	intentText = "Treat the current user request, or the delegation objective you were given, as the authority on what " +
		"to do. Do not widen the task: no unrequested features, refactors or clean-ups. If an ambiguity would change " +
		"the result, say so rather than guessing broadly."
	executionText = "Choose the smallest complete workflow that reaches the goal. Batch independent reads into one step. " +
		"Do not re-read files or state that have not changed since you last read them, and do not repeat a check " +
		"whose inputs have not changed."
	planThresholdText = "Plan threshold: keep a durable Plan with plan_update when the work spans research, change and " +
		"verification, crosses components, delegates, has several acceptance gates, or may outlive a compaction or " +
		"restart; a direct answer, one bounded read or one short commit of a prepared change needs none. Refining a " +
		"host-seeded Plan, keep its step ids and completed steps: change titles or statuses or append steps, never " +
		"replace it wholesale."
	editingText = "Preserve changes you did not make. Fix a problem in the abstraction that owns it rather than around it " +
		"at a call site. If a write or command may have had a side effect you cannot confirm, do not retry it " +
		"mechanically: inspect the state first."
	verificationText = "Prove completion with observed evidence: the commands you ran and what they returned, the files " +
		"you inspected. State plainly what you could not verify and what blocks you."
	delegationText = "Delegate with task only when a sub-task is worth a separate agent and its scope does not overlap " +
		"other work in flight. Give every delegation a complete contract: objective, deliverable, instructions and " +
		"success_evidence. Do not poll a delegated job or dispatch the same task twice; its report arrives as input. " +
		"Agents you may delegate to: "
	persistenceText = "The Goal, Plan, Todo items, inbox and jobs are the source of truth for continuing work, not your " +
		"recollection of the conversation. After a compaction or restart, read them before acting, and record progress " +
		"in them as you go."
)

// runtimeSections returns the six runtime sections whose conditions hold, in their stable
// order. tools is the final tool set, after the request hooks narrowed it, so no section can
// mention a tool the model will not see.
func runtimeSections(offered []ToolDecl, rs RuntimeState, workStatePresent bool) []Section {
	names := map[string]bool{}
	writes := false
	for _, t := range offered {
		names[t.Name] = true
		writes = writes || t.WritesWorkspace
	}
	var out []Section
	add := func(id, text string) {
		out = append(out, Section{PromptSection: hostSection(id, LaneRuntimePolicy), Content: text})
	}
	add(SectionIntent, intentText)
	execution := executionText
	if names[tools.NamePlanUpdate] {
		execution += "\n\n" + planThresholdText
	}
	add(SectionExecution, execution)
	if writes {
		add(SectionEditing, editingText)
	}
	add(SectionVerification, verificationText)
	if names[tools.NameTask] && len(rs.Delegates) > 0 {
		delegates := slices.Clone(rs.Delegates)
		slices.Sort(delegates)
		add(SectionDelegation, delegationText+strings.Join(slices.Compact(delegates), ", ")+".")
	}
	var present []string
	for _, n := range durableTools {
		if names[n] {
			present = append(present, n)
		}
	}
	if rs.DurableState || workStatePresent || len(present) > 0 {
		text := persistenceText
		if len(present) > 0 {
			text += " Tools for this state: " + strings.Join(present, ", ") + "."
		}
		add(SectionPersistence, text)
	}
	return out
}
