package agent_test

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// runtime is the tool surface with every tool enabled: the core tools, bg and the durable
// work tools, the three that change the workspace marked as writing.
func runtime() map[string]agent.Capability {
	return map[string]agent.Capability{
		tools.NameRead: {Enabled: true}, tools.NameGlob: {Enabled: true}, tools.NameGrep: {Enabled: true},
		tools.NameWrite: {Enabled: true, Writes: true}, tools.NameApplyPatch: {Enabled: true, Writes: true},
		tools.NameShell: {Enabled: true, Writes: true}, tools.NameBg: {Enabled: true},
		tools.NameReportWrite: {Enabled: true}, tools.NamePlanGet: {Enabled: true}, tools.NamePlanUpdate: {Enabled: true},
		tools.NameTodoGet: {Enabled: true}, tools.NameTodoUpdate: {Enabled: true}, tools.NameTaskContext: {Enabled: true},
		tools.NameGoalGet: {Enabled: true}, tools.NameGoalUpdate: {Enabled: true}, tools.NameGoalRequestInput: {Enabled: true},
		tools.NameQuestion: {Enabled: true}, tools.NameQuestionAsync: {Enabled: true}, tools.NamePlanExit: {Enabled: true},
	}
}

var workTools = []string{tools.NamePlanGet, tools.NamePlanUpdate, tools.NameTodoGet, tools.NameTodoUpdate, tools.NameTaskContext,
	tools.NameGoalGet, tools.NameGoalUpdate, tools.NameGoalRequestInput}

func domainError(t *testing.T, err error, code string) *domain.Error {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("err = %v (%T), want a *domain.Error %s", err, err, code)
	}
	if de.Code() != code {
		t.Fatalf("code = %q, want %q (%v)", de.Code(), code, err)
	}
	return de
}

func TestBuiltins(t *testing.T) {
	all := agent.Builtins()
	var names []string
	for _, a := range all {
		names = append(names, a.Name)
	}
	want := []string{"build", "deep", "explorer", "orchestrator", "plan"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("Builtins names = %v, want %v (sorted)", names, want)
	}
	if got := agent.Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	modes := map[string]agent.Mode{"build": agent.Primary, "deep": agent.Primary, "explorer": agent.Subagent,
		"orchestrator": agent.Primary, "plan": agent.Primary}
	readOnly := map[string]bool{"explorer": true, "plan": true}
	writing := []string{tools.NameWrite, tools.NameApplyPatch, tools.NameShell}
	for _, a := range all {
		if a.Source != "builtin:"+a.Name {
			t.Errorf("%s: Source = %q, want builtin:%s", a.Name, a.Source, a.Name)
		}
		if a.Mode != modes[a.Name] {
			t.Errorf("%s: Mode = %q, want %q", a.Name, a.Mode, modes[a.Name])
		}
		if a.ReadOnly != readOnly[a.Name] {
			t.Errorf("%s: ReadOnly = %v", a.Name, a.ReadOnly)
		}
		if a.Prompt == "" || a.Description == "" || len(a.Tools) == 0 {
			t.Errorf("%s: incomplete definition %+v", a.Name, a)
		}
		if !strings.Contains(a.Prompt, a.Name) {
			t.Errorf("%s: role prompt does not name the agent", a.Name)
		}
		if a.Steps != 0 {
			t.Errorf("%s: built-in step limit %d, want none (no implicit limit)", a.Name, a.Steps)
		}
		for _, w := range writing {
			if a.ReadOnly && slices.Contains(a.Tools, w) {
				t.Errorf("%s is read-only but lists %s", a.Name, w)
			}
			if !a.ReadOnly && !slices.Contains(a.Tools, w) {
				t.Errorf("%s should list %s", a.Name, w)
			}
		}
		for _, d := range []string{tools.NameTask, tools.NameJob, tools.NameJobReconcile} {
			if got := slices.Contains(a.Tools, d); got != (a.Name == "orchestrator") {
				t.Errorf("%s: lists %s = %v; only orchestrator delegates", a.Name, d, got)
			}
		}
		// The durable work tools join every root agent's surface, the read-only plan agent's
		// too (its deliverable is a durable Plan); the explorer child leaves the root's work
		// to its parent.
		for _, w := range workTools {
			if got := slices.Contains(a.Tools, w); got != (a.Name != "explorer") {
				t.Errorf("%s: lists %s = %v", a.Name, w, got)
			}
		}
	}
	if o := all[3]; !reflect.DeepEqual(o.Delegates, []string{"explorer"}) {
		t.Errorf("orchestrator delegates = %v, want [explorer]", o.Delegates)
	}
	if c := all[4].Collaboration; c != "plan" {
		t.Errorf("plan collaboration = %q", c)
	}
	if c := all[0].Collaboration; c != "work" {
		t.Errorf("build collaboration = %q", c)
	}
}

func TestResolveUnknown(t *testing.T) {
	for _, name := range []string{"nope", "", "Build"} {
		_, err := agent.Resolve(name, nil, true)
		de := domainError(t, err, agent.CodeUnknownAgent)
		if de.Field != "agent" || de.ID != name {
			t.Errorf("%q: Field %q ID %q", name, de.Field, de.ID)
		}
		if !reflect.DeepEqual(de.Valid, agent.Names()) {
			t.Errorf("%q: Valid = %v, want every agent name", name, de.Valid)
		}
		for _, n := range agent.Names() {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%q: error %q does not list %s", name, err, n)
			}
		}
	}
}

func TestResolvePrimaryRunOfSubagent(t *testing.T) {
	_, err := agent.Resolve("explorer", nil, true)
	de := domainError(t, err, domain.CodeInvalidArgument)
	if de.Field != "agent" || !strings.Contains(de.Message, "explorer") {
		t.Errorf("error = %+v", de)
	}
	for _, n := range []string{"build", "deep", "orchestrator", "plan"} {
		if !strings.Contains(de.Fix, n) {
			t.Errorf("fix %q does not offer %s", de.Fix, n)
		}
	}
	if strings.Contains(de.Fix, "explorer") {
		t.Errorf("fix %q offers the subagent itself", de.Fix)
	}
	// As a delegated child it resolves.
	a, err := agent.Resolve("explorer", nil, false)
	if err != nil || a.Name != "explorer" || a.Mode != agent.Subagent {
		t.Fatalf("Resolve(explorer, child) = %+v, %v", a, err)
	}
	// Primary agents resolve both ways.
	for _, n := range []string{"build", "deep", "orchestrator", "plan"} {
		for _, primary := range []bool{true, false} {
			if a, err := agent.Resolve(n, nil, primary); err != nil || a.Name != n {
				t.Errorf("Resolve(%s, %v) = %+v, %v", n, primary, a.Name, err)
			}
		}
	}
}

func TestResolveOverrides(t *testing.T) {
	builtin := agent.Builtins()[0] // build
	a, err := agent.Resolve("build", map[string]agent.Override{"build": {}}, true)
	if err != nil || !reflect.DeepEqual(a, builtin) {
		t.Fatalf("empty override: %+v, %v; want the built-in", a, err)
	}

	tools := []string{tools.NameRead, tools.NameShell}
	overrides := map[string]agent.Override{"build": {Steps: 24, Tools: tools}, "plan": {Steps: 3}}
	a, err = agent.Resolve("build", overrides, true)
	if err != nil {
		t.Fatal(err)
	}
	if a.Steps != 24 || !reflect.DeepEqual(a.Tools, tools) {
		t.Errorf("build = steps %d tools %v, want 24 and %v", a.Steps, a.Tools, tools)
	}
	if a.Prompt != builtin.Prompt || a.Source != builtin.Source || a.Mode != builtin.Mode {
		t.Errorf("override changed more than steps and tools: %+v", a)
	}
	// The allowlist is the agent's own copy.
	tools[0] = "mutated"
	if a.Tools[0] != "read" {
		t.Errorf("resolved tools alias the config: %v", a.Tools)
	}
	// Only the named agent is overridden; tools left nil keep the built-in list.
	p, err := agent.Resolve("plan", overrides, true)
	if err != nil || p.Steps != 3 || !reflect.DeepEqual(p.Tools, agent.Builtins()[4].Tools) {
		t.Errorf("plan = %+v, %v", p, err)
	}
	d, err := agent.Resolve("deep", overrides, true)
	if err != nil || d.Steps != 0 {
		t.Errorf("deep = %+v, %v", d, err)
	}

	// An empty (non-nil) list replaces the allowlist with nothing.
	e, err := agent.Resolve("build", map[string]agent.Override{"build": {Tools: []string{}}}, true)
	if err != nil || len(e.Tools) != 0 {
		t.Errorf("empty tools override = %v, %v", e.Tools, err)
	}
	if got, _ := e.EffectiveTools(runtime()); len(got) != 0 {
		t.Errorf("agent with no tools gets %v", got)
	}
}

func TestResolveNegativeSteps(t *testing.T) {
	overrides := map[string]agent.Override{"build": {Steps: -1}}
	_, err := agent.Resolve("build", overrides, true)
	de := domainError(t, err, domain.CodeInvalidArgument)
	if de.Field != "agents.build.steps" || !strings.Contains(de.Message, "-1") || de.Fix == "" {
		t.Errorf("error = %+v", de)
	}
	// Another agent's bad override does not refuse this one.
	if _, err := agent.Resolve("deep", overrides, true); err != nil {
		t.Errorf("deep refused for build's override: %v", err)
	}
	// The subagent refusal comes first for a primary run.
	_, err = agent.Resolve("explorer", map[string]agent.Override{"explorer": {Steps: -5}}, true)
	domainError(t, err, domain.CodeInvalidArgument)
	_, err = agent.Resolve("explorer", map[string]agent.Override{"explorer": {Steps: -5}}, false)
	if de := domainError(t, err, domain.CodeInvalidArgument); de.Field != "agents.explorer.steps" {
		t.Errorf("explorer override error field = %q", de.Field)
	}
}

func TestEffectiveTools(t *testing.T) {
	get := func(name string, o *agent.Override) agent.Agent {
		t.Helper()
		var ov map[string]agent.Override
		if o != nil {
			ov = map[string]agent.Override{name: *o}
		}
		a, err := agent.Resolve(name, ov, false)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	notImpl, disabled, readOnly := "not implemented by this runtime", "disabled by the tools config", "writes the workspace; the agent is read-only"
	shellOff := runtime()
	shellOff[tools.NameShell] = agent.Capability{Enabled: false, Writes: true}
	noBg := runtime()
	delete(noBg, tools.NameBg)
	cases := []struct {
		name        string
		agent       agent.Agent
		runtime     map[string]agent.Capability
		tools       []string
		unavailable []agent.Unavailable
	}{
		{name: "build gets its whole list", agent: get("build", nil), runtime: runtime(),
			tools: []string{"apply_patch", "bg", "glob", "goal_get", "goal_request_input", "goal_update", "grep", "plan_get", "plan_update", "question", "question_async", "read", "report_write", "shell",
				"task_context", "todo_get", "todo_update", "write"}},
		{name: "plan gets no writing tool, and the work and question tools", agent: get("plan", nil), runtime: runtime(),
			tools: []string{"bg", "glob", "goal_get", "goal_request_input", "goal_update", "grep", "plan_exit", "plan_get", "plan_update", "question", "question_async", "read", "report_write", "task_context",
				"todo_get", "todo_update"}},
		{name: "plan without the work tools in the runtime", agent: get("plan", nil),
			runtime: func() map[string]agent.Capability {
				r := runtime()
				for _, w := range workTools {
					delete(r, w)
				}
				return r
			}(),
			tools: []string{"bg", "glob", "grep", "plan_exit", "question", "question_async", "read", "report_write"},
			unavailable: []agent.Unavailable{{Tool: "goal_get", Reason: notImpl}, {Tool: "goal_request_input", Reason: notImpl},
				{Tool: "goal_update", Reason: notImpl}, {Tool: "plan_get", Reason: notImpl}, {Tool: "plan_update", Reason: notImpl},
				{Tool: "task_context", Reason: notImpl},
				{Tool: "todo_get", Reason: notImpl}, {Tool: "todo_update", Reason: notImpl}}},
		{name: "explorer gets no writing tool", agent: get("explorer", nil), runtime: runtime(),
			tools: []string{"bg", "glob", "grep", "read", "report_write"}},
		{name: "orchestrator without a task tool", agent: get("orchestrator", nil), runtime: runtime(),
			tools: []string{"apply_patch", "bg", "glob", "goal_get", "goal_request_input", "goal_update", "grep", "plan_get", "plan_update", "question", "question_async", "read", "report_write", "shell",
				"task_context", "todo_get", "todo_update", "write"},
			unavailable: []agent.Unavailable{{Tool: "job", Reason: notImpl}, {Tool: "job_reconcile", Reason: notImpl},
				{Tool: "session_message", Reason: notImpl}, {Tool: "task", Reason: notImpl}}},
		{name: "orchestrator with a task tool", agent: get("orchestrator", nil),
			runtime: func() map[string]agent.Capability {
				r := runtime()
				r["task"] = agent.Capability{Enabled: true}
				r["job"] = agent.Capability{Enabled: true}
				r["job_reconcile"] = agent.Capability{Enabled: true}
				r["session_message"] = agent.Capability{Enabled: true}
				return r
			}(),
			tools: []string{"apply_patch", "bg", "glob", "goal_get", "goal_request_input", "goal_update", "grep", "job", "job_reconcile", "plan_get", "plan_update", "question", "question_async", "read",
				"report_write", "session_message", "shell", "task", "task_context", "todo_get", "todo_update", "write"}},
		{name: "disabled and missing tools are reported", agent: get("build", nil),
			runtime: func() map[string]agent.Capability {
				r := runtime()
				r[tools.NameShell] = agent.Capability{Enabled: false, Writes: true}
				delete(r, tools.NameBg)
				return r
			}(),
			tools: []string{"apply_patch", "glob", "goal_get", "goal_request_input", "goal_update", "grep", "plan_get", "plan_update", "question", "question_async", "read", "report_write", "task_context", "todo_get",
				"todo_update", "write"},
			unavailable: []agent.Unavailable{{Tool: "bg", Reason: notImpl}, {Tool: "shell", Reason: disabled}}},
		{name: "missing bg", agent: get("deep", nil), runtime: noBg,
			tools: []string{"apply_patch", "glob", "goal_get", "goal_request_input", "goal_update", "grep", "plan_get", "plan_update", "question", "question_async", "read", "report_write", "shell",
				"task_context", "todo_get", "todo_update", "write"},
			unavailable: []agent.Unavailable{{Tool: "bg", Reason: notImpl}}},
		{name: "read-only agent configured with writing tools", agent: get("plan", &agent.Override{Tools: []string{"write", "shell", "read", "apply_patch", "nope"}}),
			runtime: runtime(), tools: []string{"read"},
			unavailable: []agent.Unavailable{{Tool: "apply_patch", Reason: readOnly}, {Tool: "nope", Reason: notImpl},
				{Tool: "shell", Reason: readOnly}, {Tool: "write", Reason: readOnly}}},
		{name: "disabled wins over read-only", agent: get("explorer", &agent.Override{Tools: []string{"shell"}}), runtime: shellOff,
			unavailable: []agent.Unavailable{{Tool: "shell", Reason: disabled}}},
		{name: "writable agent configured down", agent: get("build", &agent.Override{Tools: []string{"shell", "read", "read"}}),
			runtime: runtime(), tools: []string{"read", "shell"}},
		{name: "the continuity tools are offered when the runtime has them", agent: get("plan", &agent.Override{Tools: []string{"history", "notes", "read"}}),
			runtime: map[string]agent.Capability{"history": {Enabled: true}, "notes": {Enabled: true}, "read": {Enabled: true}},
			tools:   []string{"history", "notes", "read"}},
		{name: "no runtime tools", agent: get("explorer", nil), runtime: nil,
			unavailable: []agent.Unavailable{{Tool: "bg", Reason: notImpl}, {Tool: "glob", Reason: notImpl}, {Tool: "grep", Reason: notImpl},
				{Tool: "read", Reason: notImpl}, {Tool: "report_write", Reason: notImpl}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tools, unavailable := tc.agent.EffectiveTools(tc.runtime)
			if len(tools) != 0 || len(tc.tools) != 0 {
				if !reflect.DeepEqual(tools, tc.tools) {
					t.Errorf("tools = %v, want %v", tools, tc.tools)
				}
			}
			if len(unavailable) != 0 || len(tc.unavailable) != 0 {
				if !reflect.DeepEqual(unavailable, tc.unavailable) {
					t.Errorf("unavailable = %+v, want %+v", unavailable, tc.unavailable)
				}
			}
			if !slices.IsSorted(tools) {
				t.Errorf("tools not sorted: %v", tools)
			}
			if !slices.IsSortedFunc(unavailable, func(a, b agent.Unavailable) int { return strings.Compare(a.Tool, b.Tool) }) {
				t.Errorf("unavailable not sorted: %v", unavailable)
			}
			if tc.agent.ReadOnly {
				for _, n := range tools {
					if tc.runtime[n].Writes {
						t.Errorf("read-only %s got the writing tool %s", tc.agent.Name, n)
					}
				}
			}
			// Every listed tool is accounted for, exactly one way.
			seen := map[string]bool{}
			for _, n := range tools {
				seen[n] = true
			}
			for _, u := range unavailable {
				if seen[u.Tool] {
					t.Errorf("%s is both offered and unavailable", u.Tool)
				}
				seen[u.Tool] = true
			}
			for _, n := range tc.agent.Tools {
				if !seen[n] && !agent.OptIn(n) {
					t.Errorf("%s is neither offered nor reported unavailable", n)
				}
			}
		})
	}
}

// Whatever the runtime offers, a read-only agent never receives a tool that writes.
func TestEffectiveToolsReadOnlyWhateverTheRuntime(t *testing.T) {
	all := []string{tools.NameRead, tools.NameGlob, tools.NameGrep, tools.NameWrite, tools.NameApplyPatch, tools.NameShell,
		tools.NameBg, tools.NameReportWrite, tools.NameTask, tools.NamePlanGet, tools.NamePlanUpdate, tools.NameTodoGet,
		tools.NameTodoUpdate}
	for mask := 0; mask < 1<<len(all); mask += 7 {
		rt := map[string]agent.Capability{}
		for i, n := range all {
			rt[n] = agent.Capability{Enabled: true, Writes: mask&(1<<i) != 0}
		}
		for _, name := range []string{"plan", "explorer"} {
			a, err := agent.Resolve(name, map[string]agent.Override{name: {Tools: all}}, false)
			if err != nil {
				t.Fatal(err)
			}
			tools, unavailable := a.EffectiveTools(rt)
			for _, n := range tools {
				if rt[n].Writes {
					t.Fatalf("mask %b: read-only %s got %s", mask, name, n)
				}
			}
			if len(tools)+len(unavailable) != len(all) {
				t.Fatalf("mask %b: %d tools + %d unavailable, want %d", mask, len(tools), len(unavailable), len(all))
			}
		}
	}
}

// Issue 26, item 3: an allowlist entry may be a pattern, matched as a permission rule's key
// (permission.MatchesKey), so the offer and the contract built from the same list agree.
func TestAllowlistPatterns(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allow       []string
		readOnly    bool
		tools       []string
		unavailable []agent.Unavailable
	}{
		{"prefix", []string{"plan_*"}, false, []string{tools.NamePlanExit, tools.NamePlanGet, tools.NamePlanUpdate}, nil},
		{"suffix and name", []string{"*_get", tools.NameRead}, false, []string{tools.NameGoalGet, tools.NamePlanGet, tools.NameRead, tools.NameTodoGet}, nil},
		{"everything", []string{"*"}, false, slices.Sorted(maps.Keys(runtime())), nil},
		{"read-only agent keeps its rule", []string{"*"}, true,
			[]string{tools.NameBg, tools.NameGlob, tools.NameGoalGet, tools.NameGoalRequestInput, tools.NameGoalUpdate, tools.NameGrep,
				tools.NamePlanExit, tools.NamePlanGet, tools.NamePlanUpdate, tools.NameQuestion, tools.NameQuestionAsync, tools.NameRead,
				tools.NameReportWrite, tools.NameTaskContext, tools.NameTodoGet, tools.NameTodoUpdate},
			[]agent.Unavailable{{tools.NameApplyPatch, "writes the workspace; the agent is read-only"},
				{tools.NameShell, "writes the workspace; the agent is read-only"}, {tools.NameWrite, "writes the workspace; the agent is read-only"}}},
		{"matches nothing", []string{"mcp_github_*", tools.NameRead}, false, []string{tools.NameRead},
			[]agent.Unavailable{{"mcp_github_*", "a pattern that matches no tool of this runtime"}}},
		{"pattern and name overlap", []string{"g*", tools.NameGrep}, false, []string{tools.NameGlob, tools.NameGoalGet,
			tools.NameGoalRequestInput, tools.NameGoalUpdate, tools.NameGrep}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := agent.Agent{Name: "x", Tools: tc.allow, ReadOnly: tc.readOnly}
			got, unavailable := a.EffectiveTools(runtime())
			if !slices.Equal(got, tc.tools) || !slices.Equal(unavailable, tc.unavailable) {
				t.Fatalf("tools %q unavailable %q, want %q %q", got, unavailable, tc.tools, tc.unavailable)
			}
			c := permission.NewContract("x", tc.allow)
			p, err := permission.Resolve(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			p = p.WithContract(c)
			for _, name := range got {
				if d := p.Decide(permission.Request{Tool: name, Resource: "*", Workspace: "/ws"}); d.Action == permission.Deny {
					t.Errorf("offered %s, but the contract from the same allowlist denies it", name)
				}
			}
		})
	}
}

// agents.<name>.delegates replaces the roster task checks the contract's agent against; a
// name that is no agent is refused when the configuration is resolved.
func TestResolveDelegatesOverride(t *testing.T) {
	a, err := agent.Resolve("orchestrator", map[string]agent.Override{"orchestrator": {Delegates: []string{"explorer", "build"}}}, true)
	if err != nil || !slices.Equal(a.Delegates, []string{"explorer", "build"}) {
		t.Fatalf("got %v, %v", a.Delegates, err)
	}
	if b, _ := agent.Resolve("orchestrator", nil, true); !slices.Equal(b.Delegates, []string{"explorer"}) {
		t.Fatalf("the override leaked into the built-in: %v", b.Delegates)
	}
	_, err = agent.Resolve("orchestrator", map[string]agent.Override{"orchestrator": {Delegates: []string{"ghost"}}}, true)
	if domain.CodeOf(err) != agent.CodeUnknownAgent || !strings.Contains(err.Error(), `"ghost"`) {
		t.Fatalf("got %v", err)
	}
}
