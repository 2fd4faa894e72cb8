// Package agent defines the built-in agents: their role prompts, tool
// allowlists, collaboration mode and optional step limit, and resolves an agent's effective
// tool set against what the runtime actually has. Tools, permissions and the rest are not
// repeated in the role prompts: the runtime sections describe the effective capabilities.
package agent

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// Mode says where an agent may run.
type Mode string

const (
	// Primary agents run a root session (zuno run --agent).
	Primary Mode = "primary"
	// Subagent agents only run as delegated children.
	Subagent Mode = "subagent"
	// All agents run either way.
	All Mode = "all"
)

// Agent is one agent definition.
type Agent struct {
	Name        string
	Mode        Mode
	Description string
	// Source is where the definition comes from: "builtin:<name>" or a config file.
	Source string
	// Prompt is the English role prompt, the agent_role section.
	Prompt string
	// Tools is the exact allowlist; it replaces the default surface rather than extending it.
	Tools []string
	// Collaboration is the collaboration mode section ("plan", "work" or "").
	Collaboration string
	// ReadOnly agents never receive a tool that writes the workspace.
	ReadOnly bool
	// Steps is the explicit limit on tool-capable provider steps; 0 means none (there is no
	// implicit limit; see "The step limit" in docs/turns.md).
	Steps int
	// Delegates are the agents task may start from this one.
	Delegates []string
}

var (
	readOnlyTools = []string{tools.NameRead, tools.NameGlob, tools.NameGrep, tools.NameBg, tools.NameReportWrite}
	// workTools are the durable work state's tools, which join the default surface. They
	// change the session's plan and todo items, never the workspace, so a read-only agent
	// keeps them: the plan agent's deliverable is a durable Plan.
	workTools = []string{tools.NamePlanGet, tools.NamePlanUpdate, tools.NameTodoGet, tools.NameTodoUpdate, tools.NameTaskContext,
		tools.NameGoalGet, tools.NameGoalUpdate, tools.NameGoalRequestInput}
	// questionTools ask the user (docs/questions.md); plan_exit is the plan agent's alone.
	questionTools = []string{tools.NameQuestion, tools.NameQuestionAsync}
	// continuityTools are offered only when continuity is enabled (docs/tools.md, "history and
	// notes"); they read the session's records and keep its notes, never the workspace.
	continuityTools = []string{tools.NameHistory, tools.NameNotes}
	// webTools read the web (docs/web.md); offered only where the catalogue has them.
	webTools  = []string{tools.NameWebFetch, tools.NameWebSearch}
	planTools = slices.Concat(readOnlyTools, workTools, questionTools, []string{tools.NamePlanExit}, continuityTools, webTools)
	// delegationTools start children, read and settle their jobs, and message peer sessions.
	delegationTools = []string{tools.NameTask, tools.NameJob, tools.NameJobReconcile, tools.NameSessionMessage}
	buildTools      = slices.Concat([]string{tools.NameRead, tools.NameGlob, tools.NameGrep, tools.NameWrite, tools.NameApplyPatch,
		tools.NameShell, tools.NameBg, tools.NameReportWrite}, workTools, questionTools, continuityTools, webTools)
)

const (
	buildPrompt = "You are build, Zuno's implementation agent. Carry one task end to end in a single lane: " +
		"understand the relevant code, make the change in the abstraction that owns it, and verify it with " +
		"the project's own tests or checks. Do not delegate. Keep your final answer short: what changed, " +
		"the evidence it works, and anything left unverified."
	deepPrompt = "You are deep, Zuno's debugging agent. Reproduce the problem first. Rank the hypotheses that " +
		"could explain it and falsify them with observations, tracing the causal chain to the owning " +
		"abstraction. Fix the root cause, not the symptom, then verify both the original failure and the " +
		"recovery path. Do not delegate recursively. Report the reproduction, the hypotheses you ruled out, " +
		"the cause, the fix and the verification."
	planPrompt = "You are plan, Zuno's planning agent. Stay strictly read-only. Establish the facts by reading " +
		"the code, make the decisions the task needs, and produce a decision-complete plan: the facts, the " +
		"decisions and their reasons, interfaces, ordered steps, failure and recovery handling, and " +
		"acceptance checks. Do not edit product files and do not start the implementation."
	orchestratorPrompt = "You are orchestrator, Zuno's coordinating agent. Do one clear, independent action " +
		"yourself. Only for complex work, build a dependency graph and delegate bounded, non-overlapping " +
		"lanes. You keep integration, conflict resolution and final acceptance in this session."
	explorerPrompt = "You are explorer, a read-only investigation agent. Find and read what the objective " +
		"asks about and report it in plain Markdown: Outcome, Evidence (exact files, symbols and lines), " +
		"what you inspected, and risks or blockers. Separate facts you observed from inferences. Never " +
		"change files."
)

// Builtins returns the built-in agents, sorted by name.
func Builtins() []Agent {
	all := []Agent{
		{Name: "build", Mode: Primary, Description: "Implements a task end to end in one lane, without delegating.",
			Prompt: buildPrompt, Tools: buildTools, Collaboration: "work"},
		{Name: "deep", Mode: Primary, Description: "Debugs: reproduces, ranks hypotheses, fixes the root cause, verifies recovery.",
			Prompt: deepPrompt, Tools: buildTools, Collaboration: "work"},
		// explorer lists no work tools: a child hands decisions to its parent instead of
		// rewriting the root's state, and the parent owns the plan and todo items.
		{Name: "explorer", Mode: Subagent, Description: "Read-only investigation that reports evidence.",
			Prompt: explorerPrompt, Tools: readOnlyTools, ReadOnly: true},
		// The orchestrator delegates, so it also reads and reconciles its jobs: job is granted
		// only to an agent that can delegate, because a job resolves only for the session whose
		// task created it (docs/delegation.md, "The capability intersection").
		{Name: "orchestrator", Mode: Primary, Description: "Does clear single actions itself; delegates non-overlapping lanes of complex work.",
			Prompt: orchestratorPrompt, Tools: append(slices.Clone(buildTools), delegationTools...), Collaboration: "work",
			Delegates: []string{"explorer"}},
		{Name: "plan", Mode: Primary, Description: "Strictly read-only: explores and delivers a decision-complete plan.",
			Prompt: planPrompt, Tools: planTools, Collaboration: "plan", ReadOnly: true},
	}
	for i := range all {
		all[i].Source = "builtin:" + all[i].Name
		// Each definition owns its lists: a caller that edits one agent's tools must not
		// change another's, or the next Builtins().
		all[i].Tools = slices.Clone(all[i].Tools)
		all[i].Delegates = slices.Clone(all[i].Delegates)
	}
	return all
}

// Names returns the built-in agent names, sorted.
func Names() []string {
	var n []string
	for _, a := range Builtins() {
		n = append(n, a.Name)
	}
	return n
}

// Override is the user's configuration of one agent (agents.<name> in the config).
type Override struct {
	// Steps, when positive, sets the step limit.
	Steps int `json:"steps,omitempty"`
	// Tools, when non-nil, replaces the allowlist.
	Tools []string `json:"tools,omitempty"`
	// Delegates, when non-nil, replaces the delegate roster: the agents task may start
	// from this one (docs/delegation.md).
	Delegates []string `json:"delegates,omitempty"`
}

// CodeUnknownAgent is the stable code of an agent name that names no agent.
const CodeUnknownAgent = "unknown_agent"

// Resolve returns the named agent with its configured override applied. A primary run of a
// subagent-only agent is refused (primary=true).
func Resolve(name string, overrides map[string]Override, primary bool) (Agent, error) {
	for _, a := range Builtins() {
		if a.Name != name {
			continue
		}
		if primary && a.Mode == Subagent {
			e := domain.NewError(domain.CodeInvalidArgument, fmt.Sprintf("agent %s only runs as a delegated child", name),
				"run a primary agent: "+strings.Join(primaryNames(), ", "))
			e.Field = "agent"
			return Agent{}, e
		}
		if o, ok := overrides[name]; ok {
			if o.Steps < 0 {
				e := domain.Invalid(fmt.Sprintf("agents.%s.steps", name), fmt.Sprintf("is %d", o.Steps), "use a positive step limit, or omit it for none")
				return Agent{}, e
			}
			if o.Steps > 0 {
				a.Steps = o.Steps
			}
			if o.Tools != nil {
				a.Tools = slices.Clone(o.Tools)
			}
			if o.Delegates != nil {
				if err := checkRoster(name, o.Delegates); err != nil {
					return Agent{}, err
				}
				a.Delegates = slices.Clone(o.Delegates)
			}
		}
		return a, nil
	}
	e := domain.NewError(CodeUnknownAgent, fmt.Sprintf("no agent is named %q", name), "use one of: "+strings.Join(Names(), ", "))
	e.Field, e.ID, e.Valid = "agent", name, Names()
	return Agent{}, e
}

func primaryNames() []string {
	var n []string
	for _, a := range Builtins() {
		if a.Mode != Subagent {
			n = append(n, a.Name)
		}
	}
	return n
}

// Unavailable is a tool the agent lists but will not get, and why.
type Unavailable struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Capability is what a tool offers for the intersection: whether it exists and is enabled,
// and whether it writes the workspace.
type Capability struct {
	Enabled bool
	Writes  bool
}

// OptIn reports whether a listed tool exists only when the configuration turns it on (the
// continuity tools, continuity.enabled; web_search, a provider; webfetch, which a runtime
// without the web catalogue lacks): its absence is not reported as unavailable.
func OptIn(name string) bool {
	return slices.Contains(continuityTools, name) || slices.Contains(webTools, name)
}

// EffectiveTools intersects the agent's allowlist with the runtime's tools (name → capability)
// and returns the tools the agent gets, sorted, and the ones it does not, with the reason.
func (a Agent) EffectiveTools(runtime map[string]Capability) (tools []string, unavailable []Unavailable) {
	for _, name := range a.expand(runtime) {
		c, ok := runtime[name]
		switch {
		case !ok && OptIn(name):
			// Opt-in by configuration: absent, it is not a gap to report.
		case !ok && strings.Contains(name, "*"):
			unavailable = append(unavailable, Unavailable{name, "a pattern that matches no tool of this runtime"})
		case !ok:
			unavailable = append(unavailable, Unavailable{name, "not implemented by this runtime"})
		case !c.Enabled:
			unavailable = append(unavailable, Unavailable{name, "disabled by the tools config"})
		case a.ReadOnly && c.Writes:
			unavailable = append(unavailable, Unavailable{name, "writes the workspace; the agent is read-only"})
		default:
			tools = append(tools, name)
		}
	}
	sort.Strings(tools)
	sort.Slice(unavailable, func(i, j int) bool { return unavailable[i].Tool < unavailable[j].Tool })
	return slices.Compact(tools), slices.Compact(unavailable)
}

// expand replaces each pattern of the allowlist (mcp_github_*) by the runtime's tools it
// matches, with the matching of permission rules (permission.MatchesKey), so the allowlist
// and the contract built from it (permission.NewContract) agree on every name. A pattern
// that matches nothing stays, and is reported unavailable.
func (a Agent) expand(runtime map[string]Capability) []string {
	var out []string
	for _, m := range a.Patterns(slices.Sorted(maps.Keys(runtime))) {
		if m.Pattern == "" || len(m.Tools) == 0 {
			out = append(out, m.Entry)
			continue
		}
		out = append(out, m.Tools...)
	}
	return out
}

// PatternMatch is one entry of an agent's tools allowlist and, for a pattern, the tools it
// matched (zuno debug agent shows them).
type PatternMatch struct {
	Entry string `json:"entry"`
	// Pattern is Entry when it holds a wildcard, "" for a plain name.
	Pattern string   `json:"pattern,omitempty"`
	Tools   []string `json:"tools,omitempty"`
}

// Patterns matches each allowlist entry against the tool names, in allowlist order.
func (a Agent) Patterns(names []string) []PatternMatch {
	out := make([]PatternMatch, 0, len(a.Tools))
	for _, e := range a.Tools {
		m := PatternMatch{Entry: e}
		if strings.Contains(e, "*") {
			m.Pattern = e
			for _, n := range names {
				if permission.MatchesKey(e, n) {
					m.Tools = append(m.Tools, n)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// Offered is the tool surface an agent gets in a run: the tools offered to the model, in
// name order, and the agent's allowlisted tools it does not get, with the reason.
type Offered struct {
	Tools       []tools.Tool
	Unavailable []Unavailable
	// Patterns is the allowlist with what each pattern in it matched.
	Patterns []PatternMatch
}

// Offer is the one computation of the tools a model is offered: the runtime's tools, less
// those the tools config disables (a name the config gives that no tool has is refused as
// unknown_tool), intersected with the agent's allowlist (a read-only agent never gets a tool
// that writes). The turn and zuno debug agent both use it, so what the report shows is what a
// turn offers.
func Offer(a Agent, runtime []tools.Tool, config map[string]bool) (Offered, error) {
	caps, err := Capabilities(runtime, config)
	if err != nil {
		return Offered{}, err
	}
	byName := make(map[string]tools.Tool, len(runtime))
	for _, t := range runtime {
		byName[t.Declaration().Name] = t
	}
	names, unavailable := a.EffectiveTools(caps)
	out := Offered{Unavailable: unavailable, Patterns: a.Patterns(slices.Sorted(maps.Keys(caps)))}
	for _, n := range names {
		out.Tools = append(out.Tools, byName[n])
	}
	return out, nil
}

// Capabilities is the runtime's tools as the intersections read them: each declared name,
// whether the tools config leaves it enabled (a name the config gives that no tool has is
// refused as unknown_tool), and whether it writes the workspace. Offer and a delegated
// child's ChildTools read the same map.
func Capabilities(runtime []tools.Tool, config map[string]bool) (map[string]Capability, error) {
	decls := make([]tools.Declaration, len(runtime))
	caps := make(map[string]Capability, len(runtime))
	for i, t := range runtime {
		decls[i] = t.Declaration()
		caps[decls[i].Name] = Capability{Writes: t.WritesWorkspace()}
	}
	reg, err := tools.NewRegistry(decls...)
	if err == nil {
		reg, err = reg.Configure(config)
	}
	if err != nil {
		return nil, err
	}
	for _, d := range reg.Enabled() {
		c := caps[d.Name]
		c.Enabled = true
		caps[d.Name] = c
	}
	return caps, nil
}

// checkRoster refuses a configured delegate that names no agent.
func checkRoster(name string, roster []string) error {
	for _, d := range roster {
		if !slices.Contains(Names(), d) {
			e := domain.NewError(CodeUnknownAgent, fmt.Sprintf("agents.%s.delegates names %q, which is no agent", name, d),
				"list agents among: "+strings.Join(Names(), ", "))
			e.Field, e.ID, e.Valid = fmt.Sprintf("agents.%s.delegates", name), d, Names()
			return e
		}
	}
	return nil
}
