package app

import (
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// Policy is the permission policy an agent runs under: the configured layers narrowed by the
// agent's contract, and allow_all when the sandbox says danger-full-access (docs/sandbox.md).
func (s Settings) Policy(ag agent.Agent, conf turn.Confinement) (permission.Policy, error) {
	p, err := permission.Resolve(s.Permission, s.ToolSwitches)
	if err != nil {
		return p, err
	}
	p = p.WithContract(permission.NewContract(ag.Name, ag.Tools))
	if conf.ForcesAllowAll {
		p = p.WithMode(permission.AllowAll, "sandbox.mode is danger-full-access")
	}
	return p, nil
}

// standingFor is the session's standing approvals in this process.
func (c *Commands) standingFor(sessionID string) *permission.Standing {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.standing[sessionID]
	if !ok {
		s = &permission.Standing{}
		c.standing[sessionID] = s
	}
	return s
}

// gateFor builds the gate of one run.
func (c *Commands) gateFor(policy permission.Policy, set Settings, sessionID, dir string, offered []tools.Tool, conf turn.Confinement, interactive bool) *gate.Gate {
	return gate.New(gate.Config{Policy: policy, Standing: c.standingFor(sessionID), Tools: offered, Workspace: dir,
		Home: set.Home, Zuno: set.Zuno, Interactive: interactive, Sandbox: conf.Resolution})
}

// inbox is where the run's asks are answered: the session's inbox stream in the log.
func (c *Commands) inbox() commands.Inbox {
	return commands.Inbox{Store: c.ports.Log, Registry: c.ports.Driver.Registry, Feed: c.ports.Feed}
}
