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

// gateFor builds the gate of one run. The session's standing approvals are not the
// process's: the driver folds them into the gate from the session's stream.
func (c *Commands) gateFor(policy permission.Policy, set Settings, dir string, offered []tools.Tool, conf turn.Confinement, interactive, child bool) *gate.Gate {
	return gate.New(gate.Config{Policy: policy, Tools: offered, Workspace: dir, Home: set.Home, Zuno: set.Zuno,
		Interactive: interactive, Child: child, Sandbox: conf.Resolution})
}

// inbox is where the run's asks are answered: the session's inbox stream in the log.
func (c *Commands) inbox() commands.Inbox {
	return commands.Inbox{Store: c.ports.Driver.Store, Registry: c.ports.Driver.Registry, Feed: c.ports.Feed, Clock: c.ports.Driver.Clock}
}
