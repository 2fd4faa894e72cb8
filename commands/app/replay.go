package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/zuno-run/zuno/commands/replay"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
)

// Replay re-drives a session's turns through today's driver with today's configuration (the
// agent, the tools, the permission policy, AGENTS.md as it is now) and the recorded model
// responses, tool results and answers, and reports where it decides differently from the log
// (docs/replay.md). Nothing is written.
func (c *Commands) Replay(ctx context.Context, sessionID string) (replay.Report, error) {
	return replay.Session(ctx, c.ports.Log, c.ports.Driver.Registry, sessionID, c.replayRequest)
}

// replayRequest resolves a recorded turn as RunTurn resolves a new one, without recording
// anything: the same agent resolution, tool surface, offer, policy and gate.
func (c *Commands) replayRequest(ctx context.Context, t replay.Turn) (turn.Request, func() error, error) {
	sc, err := c.ports.Configure(t.Directory)
	if err != nil {
		return turn.Request{}, nil, err
	}
	ag, err := agent.Resolve(t.Started.Agent, sc.Settings.Agents, !t.Child)
	if err != nil {
		return turn.Request{}, nil, err
	}
	tr := turn.ToolsRequest{Dir: t.Directory, SessionID: t.Started.SessionID, ReadOnly: ag.ReadOnly, RequiredSkills: ag.RequiredSkills, Replay: true}
	if workspaceGone(t.Directory) {
		tr.Gone = t.Detach()
	}
	surface, err := sc.OpenTools(tr)
	if err != nil {
		return turn.Request{}, nil, err
	}
	req, err := c.replayResolve(ctx, t, sc, ag, surface)
	if err != nil {
		surface.Close()
		return turn.Request{}, nil, err
	}
	return req, surface.Close, nil
}

// workspaceGone reports whether dir, a recorded workspace, no longer exists: a replay never
// touches the workspace, so its absence is not a difference (docs/replay.md). Any other
// failure to look at it is left to the tools to report.
func workspaceGone(dir string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Lstat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

func (c *Commands) replayResolve(ctx context.Context, t replay.Turn, sc SessionConfig, ag agent.Agent, surface turn.Surface) (turn.Request, error) {
	set := sc.Settings
	skillLane, err := skillLanes(sc, ag, set.ContextWindow)
	if err != nil {
		return turn.Request{}, err
	}
	memory, err := replayMemoryLane(ctx, sc, t.Started.Memory)
	if err != nil {
		return turn.Request{}, err
	}
	offered, err := agent.Offer(ag, surface.Tools(), set.Tools)
	if err != nil {
		return turn.Request{}, err
	}
	conf := surface.Confinement()
	policy, err := set.Policy(ag, conf)
	if err != nil {
		return turn.Request{}, err
	}
	global, project, err := c.ports.Instructions(t.Directory)
	if err != nil {
		return turn.Request{}, fmt.Errorf("read AGENTS.md: %w", err)
	}
	// The gate's standing approvals are folded by the replayed driver from the recorded history
	// before the turn, as a run's are from the log (docs/replay.md).
	g := c.gateFor(policy, set, t.Directory, offered.Tools, conf, t.Interactive, t.Child)
	return turn.Request{Agent: ag, Model: model.ModelInfo{ID: t.Started.Model, ContextWindow: set.ContextWindow},
		MaxTokens: set.MaxTokens, Tools: surface.Tools(), ToolsConfig: set.Tools, ToolCalls: set.ToolCalls, Config: sc.Files, Bounds: set.Bounds,
		GlobalAgents: global, ProjectAgents: project, Skills: skillLane, Memory: memory, Gate: g}, nil
}
