package worktools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
)

func TestDeclarations(t *testing.T) {
	read := tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	want := []struct {
		name   string
		policy tools.Policy
	}{
		{tools.NamePlanGet, read},
		{tools.NamePlanUpdate, tools.Policy{}}, // SideEffecting, Never, Exclusive
		{tools.NameTodoGet, read},
		{tools.NameTodoUpdate, tools.Policy{}},
	}
	all := worktools.New(nil)
	if len(all) != len(want) {
		t.Fatalf("New returned %d tools, want %d", len(all), len(want))
	}
	var decls []tools.Declaration
	for i, tl := range all {
		d := tl.Declaration()
		decls = append(decls, d)
		if d.Name != want[i].name || d.Mixed() || d.PolicyFor("") != want[i].policy {
			t.Errorf("tool %d: %s mixed=%v policy %+v, want %s %+v", i, d.Name, d.Mixed(), d.PolicyFor(""), want[i].name, want[i].policy)
		}
		if tl.WritesWorkspace() {
			t.Errorf("%s writes the workspace", d.Name)
		}
		s := tl.Spec()
		if s.Name != d.Name || s.Description == "" {
			t.Errorf("%s: spec %+v", d.Name, s)
		}
		var schema map[string]any
		if err := json.Unmarshal(s.Schema, &schema); err != nil || schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: schema %s (%v)", d.Name, s.Schema, err)
		}
	}
	if _, err := tools.NewRegistry(decls...); err != nil {
		t.Errorf("the declarations do not register: %v", err)
	}
}

// The schemas list every action and every field the domain reads, with its enum.
func TestSchemas(t *testing.T) {
	spec := map[string]tools.Spec{}
	for _, tl := range worktools.New(nil) {
		spec[tl.Declaration().Name] = tl.Spec()
	}
	var plan struct {
		Properties map[string]struct {
			Enum        []string `json:"enum"`
			Description string   `json:"description"`
			Items       struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
				Required []string `json:"required"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(spec[tools.NamePlanUpdate].Schema, &plan); err != nil {
		t.Fatal(err)
	}
	if got := plan.Properties["action"].Enum; !reflect.DeepEqual(got, work.PlanActions()) {
		t.Errorf("action enum = %v, want %v", got, work.PlanActions())
	}
	if !reflect.DeepEqual(plan.Required, []string{"action"}) {
		t.Errorf("plan_update required = %v", plan.Required)
	}
	for _, a := range work.PlanActions() {
		usage := fmt.Sprintf("%s: %s", a, strings.Join(work.PlanActionFields(a), ", "))
		if !strings.Contains(plan.Properties["action"].Description, usage) {
			t.Errorf("action description does not list %q: %s", usage, plan.Properties["action"].Description)
		}
		for _, f := range work.PlanActionFields(a) {
			p, ok := plan.Properties[f]
			if !ok || !strings.Contains(p.Description, a) {
				t.Errorf("field %s of action %s: listed %v, description %q", f, a, ok, p.Description)
			}
		}
	}
	if _, ok := plan.Properties["expected_revision"]; !ok {
		t.Error("plan_update has no expected_revision")
	}
	if got := plan.Properties["steps"].Items.Properties["status"].Enum; !reflect.DeepEqual(got, work.PlanStatuses()) {
		t.Errorf("step status enum = %v", got)
	}
	if got := plan.Properties["patches"].Items.Required; !reflect.DeepEqual(got, []string{"id"}) {
		t.Errorf("patches required = %v", got)
	}
	if d := spec[tools.NamePlanUpdate].Description; !strings.Contains(d, "expected_revision") || !strings.Contains(d, "stale_revision") {
		t.Errorf("plan_update description lacks the revision rule: %s", d)
	}

	var todo struct {
		Properties map[string]struct {
			Items struct {
				Properties map[string]struct {
					Type  string   `json:"type"`
					Enum  []string `json:"enum"`
					Items *struct {
						Type string `json:"type"`
					} `json:"items"`
				} `json:"properties"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(spec[tools.NameTodoUpdate].Schema, &todo); err != nil {
		t.Fatal(err)
	}
	item := todo.Properties["items"].Items.Properties
	var names []string
	for n := range item {
		names = append(names, n)
	}
	for _, n := range []string{"id", "title", "status", "owner", "dependencies", "plan_step_id"} {
		if _, ok := item[n]; !ok {
			t.Errorf("todo item has no %s (has %v)", n, names)
		}
	}
	if got := item["status"].Enum; !reflect.DeepEqual(got, work.TodoStatuses()) {
		t.Errorf("todo status enum = %v", got)
	}
	if d := item["dependencies"]; d.Type != "array" || d.Items == nil || d.Items.Type != "string" {
		t.Errorf("dependencies schema = %+v", d)
	}
	if _, ok := todo.Properties["expected_revision"]; !ok || !reflect.DeepEqual(todo.Required, []string{"items"}) {
		t.Errorf("todo_update expected_revision/required: %v", todo.Required)
	}
}

// step is one call of a scenario and what it must return.
type step struct {
	name, tool, args string
	outcome          tools.Outcome
	code             string
	check            func(t *testing.T, o out, d detailsOut)
}

func runSteps(t *testing.T, h *harness, steps []step) {
	t.Helper()
	for i, s := range steps {
		callID := fmt.Sprintf("c%d", i+1)
		before := len(h.stream(t))
		r := h.call(t, s.tool, callID, s.args)
		if r.Outcome != s.outcome || r.ErrorCode != s.code {
			t.Fatalf("%s: %s %s = %s/%q, want %s/%q\n%s", s.name, s.tool, s.args, r.Outcome, r.ErrorCode, s.outcome, s.code, r.Output)
		}
		o, d := parseOut(t, r), parseDetails(t, r)
		if r.Outcome == tools.OutcomeError {
			if o.Error == nil || o.Error.Code != s.code || o.Error.Message == "" || o.Error.Fix == "" || d.Code != s.code {
				t.Fatalf("%s: refusal without code/message/fix: %s / %s", s.name, r.Output, r.Metadata.Details)
			}
			if n := len(h.stream(t)); n != before {
				t.Fatalf("%s: a refusal wrote %d events", s.name, n-before)
			}
		}
		if s.check != nil {
			s.check(t, o, d)
		}
	}
}

func wantPlan(rev uint64, id, status string, steps ...string) func(*testing.T, out, detailsOut) {
	return func(t *testing.T, o out, d detailsOut) {
		t.Helper()
		if o.Plan == nil {
			t.Fatalf("no plan in the result: %+v", o.raw)
		}
		p := o.Plan
		var got []string
		for _, st := range p.Steps {
			got = append(got, st.ID+"="+st.Status)
		}
		if p.Revision != rev || p.PlanID != id || p.Status != status || !reflect.DeepEqual(got, steps) {
			t.Fatalf("plan = rev %d %s %s %v, want rev %d %s %s %v", p.Revision, p.PlanID, p.Status, got, rev, id, status, steps)
		}
		if !eq(d.Revision, u64(rev)) {
			t.Fatalf("details revision = %v, want %d", show(d.Revision), rev)
		}
	}
}

func TestPlan(t *testing.T) {
	h := newHarness(t)
	runSteps(t, h, []step{
		{name: "no plan yet", tool: tools.NamePlanGet, args: `{}`, outcome: tools.OutcomeCompleted,
			check: func(t *testing.T, o out, d detailsOut) {
				if string(o.raw["plan"]) != "null" || !strings.Contains(o.Note, "no plan") || !strings.Contains(o.Note, "action=create") {
					t.Fatalf("plan_get without a plan: %+v %q", o.raw, o.Note)
				}
				if !eq(d.Revision, u64(0)) || !strings.HasPrefix(d.Fingerprint, "sha256:") {
					t.Fatalf("details %+v", d)
				}
			}},
		{name: "patch before any plan", tool: tools.NamePlanUpdate, args: `{"action":"patch","expected_revision":0,"title":"x"}`,
			outcome: tools.OutcomeError, code: domain.CodeNoPlan,
			check: func(t *testing.T, o out, d detailsOut) {
				if string(o.raw["plan"]) != "null" || !eq(d.Revision, u64(0)) {
					t.Fatalf("current state with the refusal: %+v %+v", o.raw, d)
				}
			}},
		{name: "first create without expected_revision", tool: tools.NamePlanUpdate,
			args:    `{"action":"create","title":"Fix the parser","steps":[{"title":"Reproduce"},{"id":"fix","title":"Fix"}]}`,
			outcome: tools.OutcomeCompleted, check: wantPlan(1, "plan-1", "in_progress", "step-1=pending", "fix=pending")},
		{name: "plan_get after create", tool: tools.NamePlanGet, args: ``, outcome: tools.OutcomeCompleted,
			check: func(t *testing.T, o out, d detailsOut) {
				wantPlan(1, "plan-1", "in_progress", "step-1=pending", "fix=pending")(t, o, d)
				if o.Note != "" || d.Fingerprint == "" {
					t.Fatalf("message %q, details %+v", o.Note, d)
				}
			}},
		{name: "patch at the current revision", tool: tools.NamePlanUpdate,
			args:    `{"action":"patch","expected_revision":1,"patches":[{"id":"step-1","status":"in_progress"}]}`,
			outcome: tools.OutcomeCompleted, check: wantPlan(2, "plan-1", "in_progress", "step-1=in_progress", "fix=pending")},
		{name: "stale patch", tool: tools.NamePlanUpdate,
			args:    `{"action":"patch","expected_revision":1,"patches":[{"id":"fix","status":"in_progress"}]}`,
			outcome: tools.OutcomeError, code: domain.CodeStaleRevision,
			check: func(t *testing.T, o out, d detailsOut) {
				e := o.Error
				if !eq(e.Expected, u64(1)) || !eq(e.Current, u64(2)) || e.Field != "expected_revision" {
					t.Fatalf("stale refusal = %+v", e)
				}
				if !eq(d.Expected, u64(1)) || !eq(d.Current, u64(2)) || !eq(d.Revision, u64(2)) || d.Field != "expected_revision" {
					t.Fatalf("stale details = %+v", d)
				}
				// The current plan comes with the refusal, so the model decides again at once.
				wantPlan(2, "plan-1", "in_progress", "step-1=in_progress", "fix=pending")(t, o, d)
				if !strings.Contains(o.Note, "revision 2") || !strings.Contains(o.Note, "Nothing was written") {
					t.Fatalf("message %q", o.Note)
				}
			}},
		{name: "patch without expected_revision", tool: tools.NamePlanUpdate, args: `{"action":"patch","title":"Renamed"}`,
			outcome: tools.OutcomeError, code: domain.CodeExpectedRevisionRequired,
			check: func(t *testing.T, o out, d detailsOut) {
				if !eq(o.Error.Current, u64(2)) || o.Error.Expected != nil || !eq(d.Current, u64(2)) || !strings.Contains(o.Error.Fix, "plan_get") {
					t.Fatalf("refusal %+v details %+v", o.Error, d)
				}
			}},
		{name: "patch an unknown step", tool: tools.NamePlanUpdate,
			args:    `{"action":"patch","expected_revision":2,"patches":[{"id":"nope","status":"completed"}]}`,
			outcome: tools.OutcomeError, code: domain.CodeStepNotFound,
			check: func(t *testing.T, o out, d detailsOut) {
				if o.Error.ID != "nope" || o.Error.Field != "patches[0].id" || d.ID != "nope" || o.Plan == nil {
					t.Fatalf("refusal %+v details %+v", o.Error, d)
				}
			}},
		{name: "append gets host ids", tool: tools.NamePlanUpdate,
			args:    `{"action":"append","expected_revision":2,"steps":[{"title":"Verify"}]}`,
			outcome: tools.OutcomeCompleted, check: wantPlan(3, "plan-1", "in_progress", "step-1=in_progress", "fix=pending", "step-3=pending")},
		{name: "push a sub-plan", tool: tools.NamePlanUpdate,
			args:    `{"action":"push","expected_revision":3,"title":"Investigate","steps":[{"title":"Bisect"}]}`,
			outcome: tools.OutcomeCompleted,
			check: func(t *testing.T, o out, d detailsOut) {
				wantPlan(4, "plan-2", "in_progress", "step-4=pending")(t, o, d)
				if o.Plan.Depth != 1 || o.Plan.ParentPlanID != "plan-1" {
					t.Fatalf("sub-plan %+v", o.Plan)
				}
			}},
		{name: "plan_get shows the focused sub-plan", tool: tools.NamePlanGet, args: `{}`, outcome: tools.OutcomeCompleted,
			check: wantPlan(4, "plan-2", "in_progress", "step-4=pending")},
		{name: "pop back to the parent", tool: tools.NamePlanUpdate, args: `{"action":"pop","expected_revision":4}`,
			outcome: tools.OutcomeCompleted, check: wantPlan(5, "plan-1", "in_progress", "step-1=in_progress", "fix=pending", "step-3=pending")},
		{name: "pop the root", tool: tools.NamePlanUpdate, args: `{"action":"pop","expected_revision":5}`,
			outcome: tools.OutcomeError, code: domain.CodeNoSubPlan},
		{name: "complete a step", tool: tools.NamePlanUpdate,
			args:    `{"action":"patch","expected_revision":5,"patches":[{"id":"step-1","status":"completed"}]}`,
			outcome: tools.OutcomeCompleted, check: wantPlan(6, "plan-1", "in_progress", "step-1=completed", "fix=pending", "step-3=pending")},
		{name: "a completed step is final", tool: tools.NamePlanUpdate,
			args:    `{"action":"patch","expected_revision":6,"patches":[{"id":"step-1","status":"pending"}]}`,
			outcome: tools.OutcomeError, code: domain.CodeTerminalState},
		{name: "replacing the plan needs the revision", tool: tools.NamePlanUpdate,
			args:    `{"action":"create","title":"New goal","steps":[{"title":"Start"}]}`,
			outcome: tools.OutcomeError, code: domain.CodeExpectedRevisionRequired},
		{name: "replace the plan", tool: tools.NamePlanUpdate,
			args:    `{"action":"create","expected_revision":6,"title":"New goal","steps":[{"title":"Start"}]}`,
			outcome: tools.OutcomeCompleted, check: wantPlan(7, "plan-3", "in_progress", "step-5=pending")},
	})

	// Every update was written as a command of the call: its id, the agent, the session.
	recs := h.stream(t)
	first := recs[0].Metadata
	if first.CommandID != worktools.CommandID(session, "c3") || first.Actor != worktools.Actor || first.CorrelationID != session || first.CausationID != "c3" {
		t.Errorf("metadata of the first event = %+v", first)
	}
}

func TestTodo(t *testing.T) {
	h := newHarness(t)
	h.call(t, tools.NamePlanUpdate, "p1", `{"action":"create","title":"Ship","steps":[{"id":"build","title":"Build"}]}`)
	runSteps(t, h, []step{
		{name: "empty list", tool: tools.NameTodoGet, args: `{}`, outcome: tools.OutcomeCompleted,
			check: func(t *testing.T, o out, d detailsOut) {
				if o.Todos == nil || o.Todos.Revision != 0 || len(o.Todos.Items) != 0 || !eq(d.Revision, u64(0)) || d.Fingerprint == "" {
					t.Fatalf("todo_get = %+v %+v", o.raw, d)
				}
			}},
		{name: "create with dependencies", tool: tools.NameTodoUpdate,
			args: `{"items":[{"id":"a","title":"Write the fix","owner":"build","plan_step_id":"build"},` +
				`{"id":"b","title":"Run the tests","dependencies":["a"]},{"title":"Tidy up"}]}`,
			outcome: tools.OutcomeCompleted,
			check: func(t *testing.T, o out, d detailsOut) {
				v := o.Todos
				if v == nil || v.Revision != 1 || len(v.Items) != 3 || !eq(d.Revision, u64(1)) {
					t.Fatalf("todos = %+v", o.raw)
				}
				if a := v.Items[0]; a.Owner != "build" || a.PlanStepID != "build" || a.Status != "pending" {
					t.Fatalf("a = %+v", a)
				}
				if b := v.Items[1]; !reflect.DeepEqual(b.Dependencies, []string{"a"}) {
					t.Fatalf("b = %+v", b)
				}
				if c := v.Items[2]; c.ID != "todo-1" || c.Title != "Tidy up" {
					t.Fatalf("host-id item = %+v", c)
				}
			}},
		{name: "start before the dependency is done", tool: tools.NameTodoUpdate,
			args: `{"items":[{"id":"b","status":"in_progress"}]}`, outcome: tools.OutcomeError, code: domain.CodeDependencyUnmet,
			check: func(t *testing.T, o out, d detailsOut) {
				if o.Error.ID != "a" || o.Error.Field != "items[0].status" || o.Todos == nil || o.Todos.Revision != 1 {
					t.Fatalf("refusal %+v, todos %+v", o.Error, o.Todos)
				}
			}},
		{name: "a dependency that does not exist", tool: tools.NameTodoUpdate,
			args: `{"items":[{"id":"c","title":"Deploy","dependencies":["nope"]}]}`, outcome: tools.OutcomeError,
			code: domain.CodeDependencyNotFound},
		{name: "a link to a step the plan lacks", tool: tools.NameTodoUpdate,
			args: `{"items":[{"id":"c","title":"Deploy","plan_step_id":"deploy"}]}`, outcome: tools.OutcomeError,
			code: domain.CodeStepNotFound},
		{name: "a new item needs a title", tool: tools.NameTodoUpdate, args: `{"items":[{"id":"c"}]}`,
			outcome: tools.OutcomeError, code: domain.CodeInvalidArgument},
		{name: "a cycle", tool: tools.NameTodoUpdate, args: `{"items":[{"id":"a","dependencies":["b"]}]}`,
			outcome: tools.OutcomeError, code: domain.CodeDependencyCycle},
		{name: "complete the dependency and start in one call", tool: tools.NameTodoUpdate,
			args:    `{"expected_revision":1,"items":[{"id":"a","status":"completed"},{"id":"b","status":"in_progress"}]}`,
			outcome: tools.OutcomeCompleted,
			check: func(t *testing.T, o out, d detailsOut) {
				if v := o.Todos; v.Revision != 2 || v.Items[0].Status != "completed" || v.Items[1].Status != "in_progress" {
					t.Fatalf("todos = %+v", v)
				}
			}},
		{name: "stale expected_revision", tool: tools.NameTodoUpdate,
			args: `{"expected_revision":1,"items":[{"id":"b","status":"completed"}]}`, outcome: tools.OutcomeError,
			code: domain.CodeStaleRevision,
			check: func(t *testing.T, o out, d detailsOut) {
				if !eq(o.Error.Expected, u64(1)) || !eq(o.Error.Current, u64(2)) || !eq(d.Expected, u64(1)) ||
					!eq(d.Current, u64(2)) || o.Todos == nil || o.Todos.Revision != 2 || !strings.Contains(o.Error.Fix, "todo_get") {
					t.Fatalf("refusal %+v details %+v todos %+v", o.Error, d, o.Todos)
				}
			}},
		{name: "a completed item is final", tool: tools.NameTodoUpdate,
			args: `{"items":[{"id":"a","title":"Rewrite the fix"}]}`, outcome: tools.OutcomeError, code: domain.CodeTerminalState},
		{name: "cancel the host-id item without a revision", tool: tools.NameTodoUpdate,
			args: `{"items":[{"id":"todo-1","status":"cancelled","owner":""}]}`, outcome: tools.OutcomeCompleted},
		{name: "todo_get after", tool: tools.NameTodoGet, args: `{}`, outcome: tools.OutcomeCompleted,
			check: func(t *testing.T, o out, d detailsOut) {
				var got []string
				for _, it := range o.Todos.Items {
					got = append(got, it.ID+"="+it.Status)
				}
				want := []string{"a=completed", "b=in_progress", "todo-1=cancelled"}
				if o.Todos.Revision != 3 || !reflect.DeepEqual(got, want) || !eq(d.Revision, u64(3)) {
					t.Fatalf("todo_get = rev %d %v, want 3 %v", o.Todos.Revision, got, want)
				}
			}},
	})
}

// The fingerprint follows the state: repeated reads of an unchanged state agree, and a real
// change of either the plan or the todo list changes it.
func TestFingerprint(t *testing.T) {
	h := newHarness(t)
	fp := func(tool string) string { return parseDetails(t, h.call(t, tool, "r", `{}`)).Fingerprint }
	empty := fp(tools.NamePlanGet)
	if fp(tools.NamePlanGet) != empty || fp(tools.NameTodoGet) != empty {
		t.Fatal("reads of one unchanged state disagree")
	}
	h.call(t, tools.NameTodoUpdate, "u1", `{"items":[{"title":"One"}]}`)
	afterTodo := fp(tools.NamePlanGet)
	if afterTodo == empty {
		t.Fatal("a todo change did not change plan_get's fingerprint")
	}
	h.call(t, tools.NamePlanUpdate, "u2", `{"action":"create","title":"P","steps":[{"title":"s"}]}`)
	if fp(tools.NameTodoGet) == afterTodo {
		t.Fatal("a plan change did not change todo_get's fingerprint")
	}
}

// A call executed again (a recovered run, a re-delivered turn) is the same command: it
// returns the first result byte for byte and writes nothing.
func TestReExecutedCallIsDuplicate(t *testing.T) {
	h := newHarness(t)
	calls := []struct{ tool, id, args string }{
		{tools.NamePlanUpdate, "c1", `{"action":"create","title":"P","steps":[{"title":"a"},{"title":"b"}]}`},
		{tools.NameTodoUpdate, "c2", `{"items":[{"id":"x","title":"X"}]}`},
		{tools.NamePlanUpdate, "c3", `{"action":"append","expected_revision":1,"steps":[{"title":"c"}]}`},
	}
	first := make([]string, len(calls))
	for i, c := range calls {
		r := h.call(t, c.tool, c.id, c.args)
		if r.Outcome != tools.OutcomeCompleted || parseDetails(t, r).Duplicate {
			t.Fatalf("%s: %+v", c.id, r)
		}
		first[i] = r.Output
	}
	n := len(h.stream(t))
	for i, c := range calls {
		r := h.call(t, c.tool, c.id, c.args)
		d := parseDetails(t, r)
		if r.Outcome != tools.OutcomeCompleted || r.Output != first[i] || !d.Duplicate {
			t.Errorf("%s again: %s %s (duplicate %v), want the first output %s", c.id, r.Outcome, r.Output, d.Duplicate, first[i])
		}
	}
	if got := len(h.stream(t)); got != n {
		t.Errorf("re-executed calls wrote %d events", got-n)
	}
	// The same call id with other arguments is not the same call.
	r := h.call(t, tools.NameTodoUpdate, "c2", `{"items":[{"id":"y","title":"Y"}]}`)
	if r.Outcome != tools.OutcomeError || r.ErrorCode != "command_id_reused" || parseOut(t, r).Error.Fix == "" {
		t.Errorf("reused call id: %+v", r)
	}
	if got := len(h.stream(t)); got != n {
		t.Errorf("a reused call id wrote %d events", got-n)
	}
}

func TestNotValidated(t *testing.T) {
	all := worktools.New(nil)
	// Each tool is also handed the next tool's validated arguments: a call is run only with
	// what its own Validate produced.
	for i, tl := range all {
		next := all[(i+1)%len(all)]
		var other tools.Parsed
		err := errors.New("no arguments")
		for _, a := range []string{`{}`, `{"items":[]}`, `{"action":"pop"}`} {
			if other, err = next.Validate(json.RawMessage(a)); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range []any{nil, "x", struct{}{}, other.Args} {
			r := tl.Execute(context.Background(), tools.Invocation{SessionID: session, CallID: "c", Parsed: tools.Parsed{Args: args}})
			if r.Outcome != tools.OutcomeError || r.ErrorCode != tools.CodeNotValidated {
				t.Errorf("%s with %T: %+v", tl.Declaration().Name, args, r)
			}
		}
	}
}

func TestCancelledBeforeItStarts(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct{ tool, args string }{
		{tools.NamePlanGet, `{}`}, {tools.NameTodoGet, `{}`},
		{tools.NamePlanUpdate, `{"action":"create","title":"P","steps":[{"title":"a"}]}`},
		{tools.NameTodoUpdate, `{"items":[{"title":"X"}]}`},
	} {
		r := h.callCtx(t, ctx, c.tool, "c1", c.args)
		if r.Outcome != tools.OutcomeCancelled || r.ErrorCode != worktools.CodeCancelled {
			t.Errorf("%s: %+v", c.tool, r)
		}
	}
	if n := len(h.stream(t)); n != 0 {
		t.Errorf("cancelled calls wrote %d events", n)
	}
}

// A failing store: a read is an error (nothing changed), an update is uncertain (it may have
// been written before the failure), and both tell the model to look before acting again.
func TestStoreFailure(t *testing.T) {
	h := newHarness(t)
	h.store.Close()
	r := h.call(t, tools.NamePlanGet, "c1", `{}`)
	if r.Outcome != tools.OutcomeError || r.ErrorCode == "" || parseOut(t, r).Error == nil {
		t.Errorf("plan_get on a closed store: %+v", r)
	}
	r = h.call(t, tools.NamePlanUpdate, "c2", `{"action":"create","title":"P","steps":[{"title":"a"}]}`)
	o := parseOut(t, r)
	if r.Outcome != tools.OutcomeUncertain || r.ErrorCode == "" || o.Error == nil || !strings.Contains(o.Error.Fix, "plan_get") {
		t.Errorf("plan_update on a closed store: %+v", r)
	}
}
