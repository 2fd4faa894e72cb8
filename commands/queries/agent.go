package queries

import (
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/events"
)

// AgentSettings are the configuration an agent report reads.
type AgentSettings struct {
	Agents map[string]agent.Override
	Tools  map[string]bool
	// Model is the default model; ModelNote says what is wrong with it, if anything.
	Model, ModelNote string
	// OpenTools opens the runtime's tools, to read their declarations.
	OpenTools turn.OpenTools
	// Policy is the permission policy the agent runs under (app.Settings.Policy).
	Policy func(agent.Agent, turn.Confinement) (permission.Policy, error)
	// Skills are the workspace's skills (docs/skills.md); nil reports none.
	Skills *AgentSkillSettings
}

// AgentReport is zuno debug agent NAME: the definition, the effective model, the tools offered
// (the same computation a turn makes, agent.Offer) and those not offered with the reason, and
// the delegates, the effective permission of each offered tool and the sandbox its commands
// run under, its skills, and the MCP servers as connected.
type AgentReport struct {
	Name        string              `json:"name"`
	Mode        string              `json:"mode"`
	Source      string              `json:"source"`
	Description string              `json:"description"`
	StepLimit   int                 `json:"stepLimit"`
	Model       string              `json:"model"`
	ModelNote   string              `json:"modelNote,omitempty"`
	Tools       []ToolReport        `json:"tools"`
	Unavailable []agent.Unavailable `json:"unavailable"`
	// Patterns are the allowlist's patterns (mcp_github_*) and the tools each matched.
	Patterns  []agent.PatternMatch `json:"patterns"`
	Delegates []string             `json:"delegates"`
	// Delegation is, for each delegate, the tools its child gets when this agent delegates to
	// it (agent.ChildTools over the tools this agent is offered).
	Delegation []DelegateReport `json:"delegation"`
	// Permissions is the effective permission of each offered tool under the configured
	// rules narrowed by the agent's contract; Sandbox how its commands are confined.
	Permissions AgentPermissions `json:"permissions"`
	Sandbox     AgentSandbox     `json:"sandbox"`
	// Skills is the agent's Skill lanes as a turn would build them (docs/skills.md).
	Skills *SkillsReport `json:"skills,omitempty"`
	// MCP is every enabled MCP server as the runtime connected it (the host fills it in:
	// docs/mcp.md, "zuno debug agent").
	MCP   []MCPServerReport `json:"mcp"`
	Notes []string          `json:"notes"`
}

// AgentPermissions is the agent's contract applied to the configured policy.
type AgentPermissions struct {
	ConfiguredMode string           `json:"configuredMode"`
	Mode           string           `json:"mode"`
	ModeReason     string           `json:"modeReason,omitempty"`
	Tools          []ToolPermission `json:"tools"`
}

// ToolPermission is what a call of the tool gets before any resource is named (zuno debug
// permissions --permission P --resource R decides one resource).
type ToolPermission struct {
	Tool       string `json:"tool"`
	Key        string `json:"permission"`
	RuleAction string `json:"ruleAction"`
	Action     string `json:"action"`
	Rule       string `json:"rule,omitempty"`
	Layer      string `json:"layer,omitempty"`
}

// AgentSandbox is the sandbox resolution of the agent's shell, or why it is not assembled.
type AgentSandbox struct {
	Resolution *events.SandboxResolution `json:"resolution,omitempty"`
	Refusal    string                    `json:"refusal,omitempty"`
}

// DelegateReport is one delegate and the capability intersection of its child (seeds 002 §5,
// docs/delegation.md): this agent's offered tools, as the configuration makes a request of it
// show them, ∩ the delegate's role and allowlist ∩ its effective permission visibility ∩ the
// runtime's tools now.
type DelegateReport struct {
	Agent    string              `json:"agent"`
	Tools    []string            `json:"tools"`
	Withheld []agent.Unavailable `json:"withheld"`
}

// ToolReport is one offered tool and its declarations.
type ToolReport struct {
	Name        string `json:"name"`
	SideEffect  string `json:"sideEffect"`
	Replay      string `json:"replay"`
	Concurrency string `json:"concurrency"`
}

// Agent reports an agent's effective configuration for a workspace. It creates no session;
// the tools are opened only to read their declarations (the host opens them with scratch
// state, so a diagnostic leaves nothing behind).
func Agent(name, dir string, s AgentSettings) (AgentReport, error) {
	ag, err := agent.Resolve(name, s.Agents, false)
	if err != nil {
		return AgentReport{}, err
	}
	surface, err := s.OpenTools(turn.ToolsRequest{Dir: dir, SessionID: "debug-agent", ReadOnly: ag.ReadOnly, RequiredSkills: ag.RequiredSkills})
	if err != nil {
		return AgentReport{}, err
	}
	defer surface.Close()
	offered, err := agent.Offer(ag, surface.Tools(), s.Tools)
	if err != nil {
		return AgentReport{}, err
	}
	rep := AgentReport{Name: ag.Name, Mode: string(ag.Mode), Source: ag.Source, Description: ag.Description,
		StepLimit: ag.Steps, Model: s.Model, ModelNote: s.ModelNote, Delegates: ag.Delegates,
		Unavailable: append([]agent.Unavailable{}, offered.Unavailable...), Tools: []ToolReport{}, Patterns: patternsOf(offered),
		Notes: []string{}, Skills: skillsReport(ag, s.Skills), MCP: []MCPServerReport{}}
	conf := surface.Confinement()
	rep.Sandbox.Resolution = conf.Resolution
	if conf.Refusal != nil {
		rep.Sandbox.Refusal = conf.Refusal.Error()
	}
	if rep.Permissions, err = agentPermissions(ag, offered.Tools, conf, dir, s); err != nil {
		return AgentReport{}, err
	}
	if rep.Delegates == nil {
		rep.Delegates = []string{}
	}
	if rep.Delegation, err = delegateReports(ag, surface.Tools(), offered, conf, s); err != nil {
		return AgentReport{}, err
	}
	for _, t := range offered.Tools {
		d := t.Declaration()
		tr := ToolReport{Name: d.Name, SideEffect: d.Policy.SideEffect.String(), Replay: d.Policy.Replay.String(), Concurrency: d.Policy.Concurrency.String()}
		if d.Mixed() {
			tr.SideEffect, tr.Replay, tr.Concurrency = "per action", "per action", "per action"
		}
		rep.Tools = append(rep.Tools, tr)
	}
	return rep, nil
}

func agentPermissions(ag agent.Agent, offered []turn.Tool, conf turn.Confinement, dir string, s AgentSettings) (AgentPermissions, error) {
	policy, err := s.Policy(ag, conf)
	if err != nil {
		return AgentPermissions{}, err
	}
	out := AgentPermissions{ConfiguredMode: string(policy.ConfiguredMode()), Mode: string(policy.Mode()),
		Tools: []ToolPermission{}}
	if rep := permission.Explain(policy, nil); rep.ModeReason != "" {
		out.ModeReason = rep.ModeReason
	}
	for _, t := range offered {
		d := t.Declaration()
		dec := policy.Decide(permission.Request{Tool: d.Name, Resource: "*", Workspace: dir,
			SideEffect: d.Policy.SideEffect.StrictAsks()})
		tp := ToolPermission{Tool: d.Name, Key: dec.Key, RuleAction: string(dec.RuleAction), Action: string(dec.Action)}
		if dec.Rule != nil {
			tp.Rule, tp.Layer = dec.Rule.Key+": "+dec.Rule.Pattern, string(dec.Rule.Layer)
		}
		out.Tools = append(out.Tools, tp)
	}
	return out, nil
}

// delegateReports computes each delegate's child tools, as the job runtime does when it starts a
// child: the parent's offered names are the parent attempt's, the child's policy runs under
// the parent's confinement (the child's sandbox is the parent's).
func delegateReports(parent agent.Agent, runtime []turn.Tool, offered agent.Offered, conf turn.Confinement,
	s AgentSettings) ([]DelegateReport, error) {
	caps, err := agent.Capabilities(runtime, s.Tools)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(offered.Tools))
	for i, t := range offered.Tools {
		names[i] = t.Declaration().Name
	}
	out := []DelegateReport{}
	for _, name := range parent.Delegates {
		rep := DelegateReport{Agent: name, Tools: []string{}, Withheld: []agent.Unavailable{}}
		child, err := agent.Resolve(name, s.Agents, false)
		if err != nil {
			return nil, err
		}
		policy, err := s.Policy(child, conf)
		if err != nil {
			return nil, err
		}
		got, withheld := agent.ChildTools(child, agent.Child{Parent: names, Available: caps, Hidden: policy.Hidden})
		rep.Tools = append(rep.Tools, got...)
		rep.Withheld = append(rep.Withheld, withheld...)
		out = append(out, rep)
	}
	return out, nil
}

// ReadOnly reports whether the agent's contract is read-only (it narrows the sandbox).
func ReadOnly(name string, overrides map[string]agent.Override) (bool, error) {
	ag, err := agent.Resolve(name, overrides, false)
	return ag.ReadOnly, err
}

// patternsOf keeps the allowlist entries that are patterns.
func patternsOf(o agent.Offered) []agent.PatternMatch {
	out := []agent.PatternMatch{}
	for _, m := range o.Patterns {
		if m.Pattern != "" {
			out = append(out, m)
		}
	}
	return out
}
