package app

import (
	"context"
	"slices"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/skills"
	"github.com/zuno-run/zuno/events"
)

// SessionConfig is the configuration resolved for one workspace: what a turn of a session
// working there runs with. The project layer is the workspace's, never the caller's working
// directory (docs/config.md, "Which files a turn read").
type SessionConfig struct {
	Settings  Settings
	OpenTools turn.OpenTools
	// Files are the configuration files read, recorded on the turn's start.
	Files []events.ConfigFile
	// Notes are the loader's warnings and notes about these files.
	Notes []string
	// Skills are the workspace's skills and their budget settings (docs/skills.md).
	Skills      skills.Catalog
	SkillBudget skills.Settings
	// Memory reads the project memory a turn starts with, nil when memory is off
	// (docs/memory.md): the applied memory now, or, for a replay, as it was at a recorded
	// revision (at non-nil).
	Memory func(ctx context.Context, at *events.MemoryRead) (*prompt.MemoryPrompt, error)
}

// Configure resolves the configuration for a workspace directory.
type Configure func(workspace string) (SessionConfig, error)

// noticeNew says each of the session configuration's notes the process has not said already
// (the process said its own working directory's at start).
func (c *Commands) noticeNew(notice func(string), sc SessionConfig) {
	if notice == nil {
		return
	}
	for _, n := range sc.Notes {
		if !slices.Contains(c.said, n) {
			notice(n)
		}
	}
}

// skillLanes resolves the agent's requiredSkills against the workspace's catalogue and holds
// both Skill lanes to their budgets (docs/skills.md), before anything is recorded: a missing,
// ambiguous or over-budget skill fails the turn before any request. A child resolves its own
// agent's against its own catalogue; nothing of its parent's selection is copied.
func skillLanes(sc SessionConfig, ag agent.Agent, window int64) (*prompt.SkillsPrompt, error) {
	budgets, err := sc.SkillBudget.Derive(window)
	if err != nil {
		return nil, err
	}
	sel, err := skills.Select(sc.Skills, ag.Name, ag.RequiredSkills, budgets)
	if err != nil {
		return nil, err
	}
	return sel.Prompt, nil
}

// memoryLane is the project memory a turn starts with, nil when memory is off or empty.
func memoryLane(ctx context.Context, sc SessionConfig) (*prompt.MemoryPrompt, error) {
	if sc.Memory == nil {
		return nil, nil
	}
	return sc.Memory(ctx, nil)
}

// replayMemoryLane is the memory lane a recorded turn held: the revision its start records,
// read again from the memory stream; none when it recorded none (a turn before memory, or
// with memory off).
func replayMemoryLane(ctx context.Context, sc SessionConfig, at *events.MemoryRead) (*prompt.MemoryPrompt, error) {
	if at == nil || sc.Memory == nil {
		return nil, nil
	}
	return sc.Memory(ctx, at)
}
