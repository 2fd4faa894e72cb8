package queries

import (
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
)

// AgentSettings are the configuration an agent report reads.
type AgentSettings struct {
	Agents map[string]agent.Override
	Tools  map[string]bool
	// Model is the default model; ModelNote says what is wrong with it, if anything.
	Model, ModelNote string
	// OpenTools opens the runtime's tools, to read their declarations.
	OpenTools turn.OpenTools
}

// AgentReport is zuno debug agent NAME: the definition, the effective model, the tools offered
// (the same computation a turn makes, agent.Offer) and those not offered with the reason, and
// the delegates. MCP, Skills and the sandbox are not built yet, and the report says so rather
// than implying they are ready.
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
	Delegates   []string            `json:"delegates"`
	Notes       []string            `json:"notes"`
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
	surface, err := s.OpenTools(dir, "debug-agent", ag.ReadOnly)
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
		Unavailable: append([]agent.Unavailable{}, offered.Unavailable...), Tools: []ToolReport{},
		Notes: []string{
			"no permission gate or sandbox in this build: every offered tool runs unconfined in the workspace",
			"MCP servers and Skills are not supported in this build",
		}}
	if rep.Delegates == nil {
		rep.Delegates = []string{}
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

// ReadOnly reports whether the agent's contract is read-only (it narrows the sandbox).
func ReadOnly(name string, overrides map[string]agent.Override) (bool, error) {
	ag, err := agent.Resolve(name, overrides, false)
	return ag.ReadOnly, err
}
