package app

import (
	"context"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
)

// PermissionQuery is zuno debug permissions: an agent's resolved policy and, with a
// permission, the decision for one resource.
type PermissionQuery struct {
	// Agent defaults to the session's agent, else build.
	Agent string
	// Permission and Resource ask for one decision ("shell", "git push").
	Permission, Resource string
	// Session reads an existing session's agent and workspace; it changes nothing.
	Session string
	// Dir is the workspace when there is no session.
	Dir string
}

// PermissionReport is what zuno debug permissions prints.
type PermissionReport struct {
	Agent     string `json:"agent"`
	Workspace string `json:"workspace"`
	permission.Report
	// Standing approvals are not shown, as the seeds say of runtime approvals; the session's
	// log holds them (session.permission.granted.1, docs/permissions.md).
	Note string `json:"note"`
}

// Permissions resolves the policy an agent runs under, as the gate would, without running
// anything: the configured layers, the agent's contract, the sandbox's forced mode.
func (a *Application) Permissions(ctx context.Context, q PermissionQuery) (PermissionReport, error) {
	name, dir := q.Agent, q.Dir
	if q.Session != "" {
		info, err := a.Queries.Session(ctx, q.Session)
		if err != nil {
			return PermissionReport{}, err
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
	policy, err := set.Policy(ag, turn.Confinement{ForcesAllowAll: set.FullAccess})
	if err != nil {
		return PermissionReport{}, err
	}
	var req *permission.Request
	if q.Permission != "" {
		req = &permission.Request{Tool: q.Permission, Key: q.Permission, Resource: q.Resource, SideEffect: true,
			Workspace: dir, Home: set.Home}
	}
	return PermissionReport{Agent: ag.Name, Workspace: dir, Report: permission.Explain(policy, req),
		Note: "runtime approvals (answers of always) and connected MCP tools are not part of this output"}, nil
}
