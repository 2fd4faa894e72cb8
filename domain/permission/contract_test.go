package permission_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
)

func builtin(t *testing.T, name string) agent.Agent {
	t.Helper()
	a, err := agent.Resolve(name, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestContractHides: a contract starts with "*": "deny", so a tool it does not name is hidden;
// shell grants bg; report_write is granted only by name.
func TestContractHides(t *testing.T) {
	rows := []struct {
		agent, tool string
		hidden      bool
	}{
		{"plan", "read", false},
		{"plan", "shell", true},
		{"plan", "write", true},
		{"plan", "apply_patch", true},
		{"plan", "bg", false},
		{"plan", "report_write", false},
		{"plan", "plan_update", false},
		{"explorer", "plan_update", true},
		{"explorer", "task", true},
		{"build", "write", false},
		{"build", "bg", false},
		{"build", "task", true},
		{"orchestrator", "task", false},
		{"build", "webfetch", false},
		{"explorer", "webfetch", true},
		{"build", "council_run", true},
		{"build", "memory_read", false},
		{"explorer", "memory_read", true},
		{"explorer", "skill", false},
	}
	for _, r := range rows {
		a := builtin(t, r.agent)
		if got := permission.NewContract(a.Name, a.Tools).Hidden(r.tool); got != r.hidden {
			t.Errorf("%s: Hidden(%s) = %t, want %t", r.agent, r.tool, got, r.hidden)
		}
	}
	shellOnly := permission.NewContract("x", []string{"shell"})
	if shellOnly.Hidden("bg") || !shellOnly.Hidden("report_write") {
		t.Fatalf("shell must grant bg and only bg: %+v", shellOnly.Rules)
	}
	if !(permission.Contract{}).Hidden("read") {
		t.Fatal("an empty contract must hide every tool (default deny)")
	}
	// Frontmatter rules arrive in order and can hide a granted tool again, or narrow a pattern.
	c := permission.NewContract("x", []string{"read", "shell"}).With(
		permission.Rule{Key: "shell", Pattern: "*", Action: permission.Deny, Layer: settings.Agent, Source: "agent:x"},
		permission.Rule{Key: "shell", Pattern: "git *", Action: permission.Ask, Layer: settings.Agent, Source: "agent:x"})
	if c.Hidden("shell") {
		t.Fatal("shell with a git * ask after the deny must stay visible")
	}
	if !permission.NewContract("x", []string{"read"}).With(permission.Rule{Key: "read", Pattern: "*", Action: permission.Deny}).Hidden("read") {
		t.Fatal("a later whole-tool deny hides the tool")
	}
}

// TestContractOnlyNarrows: combining the configuration and a contract keeps the stricter
// answer, so a contract's allow never lifts a configured ask or deny.
func TestContractOnlyNarrows(t *testing.T) {
	p, err := permission.Resolve(list(at(settings.Global, `{"mode":"allow_all","rules":{"shell":{"rm *":"deny","make*":"ask"}}}`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := builtin(t, "plan")
	build := builtin(t, "build")
	rows := []struct {
		name     string
		contract permission.Contract
		req      permission.Request
		want     permission.Action
		msg      string
	}{
		{"contract grants shell, config denies rm", permission.NewContract(build.Name, build.Tools), shell("rm -rf x"), permission.Deny, `"rm *"`},
		{"contract grants shell, config asks make: allow_all answers", permission.NewContract(build.Name, build.Tools), shell("make"), permission.Allow, ""},
		{"config allows, contract hides shell", permission.NewContract(plan.Name, plan.Tools), shell("ls"), permission.Deny, "the plan contract does not grant it"},
		{"allow_all does not lift the contract", permission.NewContract(plan.Name, plan.Tools), file("write", "a.txt"), permission.Deny, "run an agent whose tools include write"},
		{"the contract names tool ids: write does not grant apply_patch", permission.NewContract("x", []string{"write"}), file("apply_patch", "a.txt"), permission.Deny, ""},
		{"read-only agent reads", permission.NewContract(plan.Name, plan.Tools), file("read", "a.txt"), permission.Allow, ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			d := p.WithContract(r.contract).Decide(r.req)
			if d.Action != r.want || !strings.Contains(d.Message(), r.msg) {
				t.Fatalf("decision %s, want %s; message %q lacks %q", d.Action, r.want, d.Message(), r.msg)
			}
		})
	}
	if p.Hidden("shell") || !p.WithContract(permission.NewContract(plan.Name, plan.Tools)).Hidden("shell") {
		t.Fatal("Policy.Hidden must follow the applied contract")
	}
}

// TestMessages: a refusal names the tool, the permission, the resource, the matched rule with
// its layer and source, and which rule to add in which layer.
func TestMessages(t *testing.T) {
	p, err := permission.Resolve(list(
		at(settings.Project, `{"rules":{"read":{"secrets/*":"deny"}}}`),
		at(settings.Managed, `{"rules":{"shell":{"curl*":"deny"}}}`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		req  permission.Request
		want []string
	}{
		{file("read", "secrets/k"), []string{"tool read was denied", `permission "read"`, `"secrets/k"`,
			`permission.rules.read["secrets/*"] in the project layer (project.json) says deny`,
			`add permission.rules.read {"secrets/k": "allow"} after that rule in the project layer or in a layer above it (explicit, cli, managed)`}},
		{shell("curl x"), []string{"tool shell was denied", "in the managed layer", "no other layer can override it"}},
		{file("read", "/etc/hosts"), []string{"tool read needs approval", `permission "external_directory" asks before "/etc/*"`,
			`answer "always"`, `permission.rules.external_directory {"/etc/*": "allow"} in the global layer or a layer above it (explicit, cli, managed)`}},
	}
	for _, r := range rows {
		d := p.Decide(r.req)
		for _, w := range r.want {
			if !strings.Contains(d.Message(), w) {
				t.Errorf("%s %s: message %q lacks %q", r.req.Tool, r.req.Resource, d.Message(), w)
			}
		}
	}
	if err := p.Decide(file("read", "secrets/k")).Err(); err == nil || !strings.HasPrefix(err.Error(), "denied: ") {
		t.Fatalf("Err() = %v, want the denied code", err)
	}
	if p.Decide(file("read", "a")).Err() != nil || p.Decide(file("read", "a")).Message() != "" {
		t.Fatal("an allowed call has no error and no message")
	}
}

// TestContractToolSearch: an allowlist entry that can name an MCP tool grants tool_search
// (offered beside the deferred tools it reaches, docs/mcp.md); no other entry does.
func TestContractToolSearch(t *testing.T) {
	for _, r := range []struct {
		allowlist []string
		hidden    bool
	}{
		{[]string{"read"}, true},
		{[]string{"read", "shell", "task"}, true},
		{[]string{"mcp_github_*"}, false},
		{[]string{"mcp_github_create_issue"}, false},
		{[]string{"mcp_*"}, false},
		{[]string{"mc*"}, false},
		{[]string{"*"}, false},
		{[]string{"tool_search"}, false},
		{[]string{"mcpx"}, true},
		{[]string{"my_mcp_tool"}, true},
	} {
		if got := permission.NewContract("x", r.allowlist).Hidden("tool_search"); got != r.hidden {
			t.Errorf("%v: Hidden(tool_search) = %t, want %t", r.allowlist, got, r.hidden)
		}
	}
	for _, name := range []string{"build", "plan", "explorer", "orchestrator"} {
		a := builtin(t, name)
		if !permission.NewContract(a.Name, a.Tools).Hidden("tool_search") {
			t.Errorf("the built-in %s grants tool_search without naming an MCP tool", name)
		}
	}
}
