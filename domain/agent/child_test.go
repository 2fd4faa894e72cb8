package agent_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
)

func builtin(t *testing.T, name string) agent.Agent {
	t.Helper()
	a, err := agent.Resolve(name, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// allowAll is a child policy under permission mode allow_all with the child's contract applied:
// its Hidden is the effective permission visibility.
func allowAll(t *testing.T, child agent.Agent) func(string) bool {
	t.Helper()
	p, err := permission.Resolve([]settings.Raw{{Layer: settings.Global, Source: "global.json",
		JSON: json.RawMessage(`{"mode":"allow_all"}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p.WithContract(permission.NewContract(child.Name, child.Tools)).Hidden
}

// TestChildTools: the intersection of seeds 002 §5, one row per sentence: a child never gains
// a tool the parent's attempt lacked, also under allow_all.
func TestChildTools(t *testing.T) {
	explorer := builtin(t, "explorer")
	orchestratorAll := []string{"apply_patch", "bg", "glob", "grep", "job", "job_reconcile", "plan_get", "plan_update",
		"read", "report_write", "session_message", "shell", "task", "todo_get", "todo_update", "write"}
	withAll := func() map[string]agent.Capability {
		r := runtime()
		for _, n := range []string{"task", "job", "job_reconcile", "session_message"} {
			r[n] = agent.Capability{Enabled: true}
		}
		return r
	}
	// wide is an agent that allowlists everything, read-only or not, with or without delegates.
	wide := func(readOnly bool, delegates ...string) agent.Agent {
		return agent.Agent{Name: "wide", Tools: append(slices.Clone(orchestratorAll), "mcp_*"), ReadOnly: readOnly,
			Delegates: delegates}
	}
	rows := []struct {
		seed     string
		child    agent.Agent
		in       agent.Child
		offered  []string
		withheld map[string]string
	}{
		{seed: "explorer under an orchestrator: its read-only allowlist, less nothing",
			child: explorer, in: agent.Child{Parent: orchestratorAll, Available: withAll()},
			offered: []string{"bg", "glob", "grep", "read", "report_write"}},
		{seed: "the parent attempt's exact tool schema bounds the child",
			child: explorer, in: agent.Child{Parent: []string{"read", "grep"}, Available: withAll()},
			offered:  []string{"grep", "read"},
			withheld: map[string]string{"bg": agent.ReasonNotInParent, "glob": agent.ReasonNotInParent, "report_write": agent.ReasonNotInParent}},
		{seed: "allow_all never restores a tool the parent's request did not show",
			child: explorer, in: agent.Child{Parent: []string{"read"}, Available: withAll(), Hidden: allowAll(t, explorer)},
			offered:  []string{"read"},
			withheld: map[string]string{"bg": agent.ReasonNotInParent, "glob": agent.ReasonNotInParent, "grep": agent.ReasonNotInParent, "report_write": agent.ReasonNotInParent}},
		{seed: "child role permissions: a read-only role gets no writing tool the parent had",
			child: wide(true), in: agent.Child{Parent: []string{"read", "write", "shell", "apply_patch"}, Available: withAll()},
			offered:  []string{"read"},
			withheld: map[string]string{"write": agent.ReasonReadOnly, "shell": agent.ReasonReadOnly, "apply_patch": agent.ReasonReadOnly}},
		{seed: "child allowlist: a parent tool the child does not list is not offered, nor reported",
			child: explorer, in: agent.Child{Parent: []string{"read", "write", "plan_update"}, Available: withAll()},
			offered:  []string{"read"},
			withheld: map[string]string{"bg": agent.ReasonNotInParent, "glob": agent.ReasonNotInParent, "grep": agent.ReasonNotInParent, "report_write": agent.ReasonNotInParent}},
		{seed: "effective permission visibility hides what the child's policy hides",
			child: wide(false), in: agent.Child{Parent: []string{"read", "shell"}, Available: withAll(),
				Hidden: func(n string) bool { return n == "shell" }},
			offered:  []string{"read"},
			withheld: map[string]string{"shell": agent.ReasonHidden}},
		{seed: "what is available now: a tool gone since the parent's attempt, or disabled, is withheld",
			child: wide(false), in: agent.Child{Parent: []string{"read", "grep", "glob"}, Available: func() map[string]agent.Capability {
				r := withAll()
				delete(r, "grep")
				r["glob"] = agent.Capability{}
				return r
			}()},
			offered:  []string{"read"},
			withheld: map[string]string{"grep": agent.ReasonNotImplemented, "glob": agent.ReasonDisabled}},
		{seed: "session_message is removed from every child, even when the parent attempt has it",
			child: wide(false, "explorer"), in: agent.Child{Parent: orchestratorAll, Available: withAll(), Hidden: allowAll(t, wide(false))},
			offered:  []string{"apply_patch", "bg", "glob", "grep", "job", "job_reconcile", "plan_get", "plan_update", "read", "report_write", "shell", "task", "todo_get", "todo_update", "write"},
			withheld: map[string]string{"session_message": agent.ReasonRootOnly}},
		{seed: "a child without delegates gets no task, job or job_reconcile",
			child: wide(false), in: agent.Child{Parent: orchestratorAll, Available: withAll()},
			offered: []string{"apply_patch", "bg", "glob", "grep", "plan_get", "plan_update", "read", "report_write", "shell", "todo_get", "todo_update", "write"},
			withheld: map[string]string{"session_message": agent.ReasonRootOnly, "task": agent.ReasonNoDelegates,
				"job": agent.ReasonNoDelegates, "job_reconcile": agent.ReasonNoDelegates}},
		{seed: "a child with delegates still needs task in the parent's attempt",
			child: wide(false, "explorer"), in: agent.Child{Parent: []string{"read"}, Available: withAll()},
			offered: []string{"read"}},
		{seed: "an allowlist pattern matches the parent's and the runtime's tools, and is still bounded by the parent",
			child: agent.Agent{Name: "p", Tools: []string{"mcp_gh_*", "nomatch_*"}},
			in: agent.Child{Parent: []string{"mcp_gh_issue"}, Available: map[string]agent.Capability{
				"mcp_gh_issue": {Enabled: true}, "mcp_gh_pr": {Enabled: true}}},
			offered:  []string{"mcp_gh_issue"},
			withheld: map[string]string{"mcp_gh_pr": agent.ReasonNotInParent, "nomatch_*": agent.ReasonNoMatch}},
	}
	for _, r := range rows {
		t.Run(r.seed, func(t *testing.T) {
			offered, withheld := agent.ChildTools(r.child, r.in)
			if !reflect.DeepEqual(offered, r.offered) {
				t.Errorf("offered %v, want %v", offered, r.offered)
			}
			got := map[string]string{}
			for _, w := range withheld {
				got[w.Tool] = w.Reason
			}
			for tool, reason := range r.withheld {
				if got[tool] != reason {
					t.Errorf("%s withheld for %q, want %q (all: %v)", tool, got[tool], reason, withheld)
				}
			}
			for _, n := range offered {
				if !slices.Contains(r.in.Parent, n) {
					t.Errorf("the child gained %s, which the parent's attempt lacked", n)
				}
				if n == tools.NameSessionMessage {
					t.Error("session_message reached a child")
				}
			}
		})
	}
}

// TestChildToolsNeverWidens: for every built-in pair and every subset of the parent's tools,
// the child's offer is inside the parent's attempt and inside the child's own offer as a root.
func TestChildToolsNeverWidens(t *testing.T) {
	all := runtime()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range all {
			if !yield(n) {
				return
			}
		}
	})
	for _, child := range agent.Builtins() {
		own, _ := child.EffectiveTools(all)
		for mask := 0; mask < 1<<len(names); mask += 37 {
			var parent []string
			for i, n := range names {
				if mask&(1<<i) != 0 {
					parent = append(parent, n)
				}
			}
			offered, _ := agent.ChildTools(child, agent.Child{Parent: parent, Available: all, Hidden: allowAll(t, child)})
			for _, n := range offered {
				if !slices.Contains(parent, n) || !slices.Contains(own, n) {
					t.Fatalf("%s under %v gained %s", child.Name, parent, n)
				}
			}
		}
	}
}
