package app

import (
	"context"
	"errors"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/events"
)

// PermissionQuery is zuno debug permissions: an agent's resolved policy and, with a
// permission, the decision for one resource.
type PermissionQuery struct {
	// Agent defaults to the session's agent, else build.
	Agent string
	// Permission (a tool id or a permission key) and Resource ask for one decision ("shell",
	// "git push").
	Permission, Resource string
	// Session reads an existing session's agent and workspace; it changes nothing.
	Session string
	// Dir is the workspace when there is no session.
	Dir string
	// OpenTools opens the runtime's tools as a turn would, for their declarations and the
	// sandbox's confinement; the caller gives scratch ones, so the diagnostic leaves nothing
	// behind (as zuno debug agent does).
	OpenTools turn.OpenTools
}

// PermissionReport is what zuno debug permissions prints.
type PermissionReport struct {
	Agent     string `json:"agent"`
	Workspace string `json:"workspace"`
	permission.Report
	// Gate is the decision as the gate records it for the call (source rule, mode or risk):
	// the risk gate's refusal of a catastrophic command has no policy decision beside it.
	Gate *events.PermissionDecision `json:"gate,omitempty"`
	// Standing approvals are not shown, as the seeds say of runtime approvals; the session's
	// log holds them (session.permission.granted.1, docs/permissions.md).
	Note string `json:"note"`
}

// Permissions resolves the policy an agent runs under and decides one call with the gate a
// turn builds (gate.Gate.Explain: the same evaluation as its Check), without running anything:
// the configured layers, the agent's contract, the tools offered, the sandbox's forced mode.
func (a *Application) Permissions(ctx context.Context, q PermissionQuery) (PermissionReport, error) {
	name, dir, err := a.permissionTarget(ctx, q)
	if err != nil {
		return PermissionReport{}, err
	}
	// The workspace's configuration, as its turns resolve it (docs/config.md).
	sc, err := a.Commands.ports.Configure(dir)
	if err != nil {
		return PermissionReport{}, err
	}
	set := sc.Settings
	ag, err := agent.Resolve(name, set.Agents, false)
	if err != nil {
		return PermissionReport{}, err
	}
	if q.OpenTools == nil {
		return PermissionReport{}, errors.New("debug permissions needs the runtime's tools to decide as the gate does")
	}
	surface, err := q.OpenTools(turn.ToolsRequest{Dir: dir, SessionID: "debug-permissions", ReadOnly: ag.ReadOnly})
	if err != nil {
		return PermissionReport{}, err
	}
	defer surface.Close()
	offered, err := agent.Offer(ag, surface.Tools(), set.Tools)
	if err != nil {
		return PermissionReport{}, err
	}
	conf := surface.Confinement()
	policy, err := set.Policy(ag, conf)
	if err != nil {
		return PermissionReport{}, err
	}
	rep := PermissionReport{Agent: ag.Name, Workspace: dir, Report: permission.Explain(policy, nil),
		Note: "runtime approvals (answers of always) and connected MCP tools are not part of this output"}
	if q.Permission != "" {
		ev := a.Commands.gateFor(policy, set, dir, offered.Tools, conf, true, false).Explain(q.Permission, q.Resource)
		rep.Gate, rep.Message = &ev.Record, ev.Record.Message
		if ev.Refusal == nil {
			rep.Decision = &ev.Decision
		}
	}
	return rep, nil
}

// permissionTarget is the agent and workspace a query names: a session's, else the query's,
// the build agent by default.
func (a *Application) permissionTarget(ctx context.Context, q PermissionQuery) (name, dir string, err error) {
	name, dir = q.Agent, q.Dir
	if q.Session != "" {
		info, err := a.Queries.Session(ctx, q.Session)
		if err != nil {
			return "", "", err
		}
		if name == "" {
			name = info.Agent
		}
		if info.Directory != "" {
			dir = info.Directory
		}
	}
	if name == "" {
		name = "build"
	}
	return name, dir, nil
}
