package work_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

func todo(title string) work.TodoInput { return work.TodoInput{Title: str(title)} }

// Fixture at todo revision 2: a (completed), b (pending, depends on a), c (cancelled), under
// plan-1 of rootPlan.
var todoFixture = append(clone(rootPlan),
	work.TodoUpdate{Items: []work.TodoInput{
		{ID: "a", Title: str("A"), Status: str(work.StatusInProgress), PlanStepID: str("step-1")},
		{ID: "b", Title: str("B"), Dependencies: strs("a")},
		{ID: "c", Title: str("C")},
	}},
	work.TodoUpdate{ExpectedRevision: rev(1), Items: []work.TodoInput{
		{ID: "a", Status: str(work.StatusCompleted)},
		{ID: "c", Status: str(work.StatusCancelled)},
	}},
)

func TestTodoUpdateErrors(t *testing.T) {
	long := strings.Repeat("x", domain.MaxTitleRunes+1)
	var tooMany []work.TodoInput
	for range work.MaxTodoItemsPerCall + 1 {
		tooMany = append(tooMany, todo("t"))
	}
	tests := []struct {
		name  string
		setup []work.Command
		cmd   work.TodoUpdate
		code  string
		field string
	}{
		{"stale revision", todoFixture, work.TodoUpdate{ExpectedRevision: rev(1), Items: []work.TodoInput{todo("x")}}, domain.CodeStaleRevision, "expected_revision"},
		{"stale revision on empty list", nil, work.TodoUpdate{ExpectedRevision: rev(1), Items: []work.TodoInput{todo("x")}}, domain.CodeStaleRevision, "expected_revision"},

		{"no items", nil, work.TodoUpdate{}, domain.CodeInvalidArgument, "items"},
		{"too many items in a call", nil, work.TodoUpdate{Items: tooMany}, domain.CodeInvalidArgument, "items"},
		{"new item without title", nil, work.TodoUpdate{Items: []work.TodoInput{{Status: str("pending")}}}, domain.CodeInvalidArgument, "items[0].title"},
		{"unknown id without title", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "zz", Status: str("pending")}}}, domain.CodeInvalidArgument, "items[0].title"},
		{"empty title", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "b", Title: str(" ")}}}, domain.CodeInvalidArgument, "items[0].title"},
		{"long title", nil, work.TodoUpdate{Items: []work.TodoInput{todo(long)}}, domain.CodeInvalidArgument, "items[0].title"},
		{"bad status", nil, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), Status: str("superseded")}}}, domain.CodeInvalidArgument, "items[0].status"},
		{"duplicate id in call", nil, work.TodoUpdate{Items: []work.TodoInput{{ID: "x", Title: str("x")}, {ID: "x", Status: str("blocked")}}}, domain.CodeInvalidArgument, "items[1].id"},
		{"bad id", nil, work.TodoUpdate{Items: []work.TodoInput{{ID: "x y", Title: str("x")}}}, domain.CodeInvalidArgument, "items[0].id"},
		{"bad dependency id", nil, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), Dependencies: strs("")}}}, domain.CodeInvalidArgument, "items[0].dependencies[0]"},
		{"multi-line owner", nil, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), Owner: str("a\nb")}}}, domain.CodeInvalidArgument, "items[0].owner"},
		{"wrong session", todoFixture, work.TodoUpdate{SessionID: "ses_other", Items: []work.TodoInput{todo("x")}}, domain.CodeInvalidArgument, "session_id"},

		{"reopen completed", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "a", Status: str("pending")}}}, domain.CodeTerminalState, "items[0]"},
		{"retitle completed", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "a", Title: str("A2")}}}, domain.CodeTerminalState, "items[0]"},
		{"reassign completed", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "a", Owner: str("explore")}}}, domain.CodeTerminalState, "items[0]"},
		{"relink completed", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "a", PlanStepID: str("")}}}, domain.CodeTerminalState, "items[0]"},
		{"reopen cancelled", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "c", Status: str("in_progress")}}}, domain.CodeTerminalState, "items[0]"},
		{"complete cancelled", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "c", Status: str("completed")}}}, domain.CodeTerminalState, "items[0]"},
		{"add dependency to cancelled", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "c", Dependencies: strs("b")}}}, domain.CodeTerminalState, "items[0]"},

		{"unknown dependency", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "b", Dependencies: strs("a", "nope")}}}, domain.CodeDependencyNotFound, "items[0].dependencies"},
		{"new item with unknown dependency", nil, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), Dependencies: strs("todo-1")}}}, domain.CodeDependencyNotFound, "items[0].dependencies"},
		{"self dependency", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "b", Dependencies: strs("b")}}}, domain.CodeDependencyCycle, "items[0].dependencies"},
		{"cycle within a call", nil, work.TodoUpdate{Items: []work.TodoInput{
			{ID: "x", Title: str("x"), Dependencies: strs("y")},
			{ID: "y", Title: str("y"), Dependencies: strs("z")},
			{ID: "z", Title: str("z"), Dependencies: strs("x")},
		}}, domain.CodeDependencyCycle, "items[0].dependencies"},
		{"cycle with stored items", append(clone(todoFixture), work.TodoUpdate{Items: []work.TodoInput{{ID: "d", Title: str("D"), Dependencies: strs("b")}}}),
			work.TodoUpdate{Items: []work.TodoInput{{ID: "b", Dependencies: strs("a", "d")}}}, domain.CodeDependencyCycle, "items[0].dependencies"},

		{"start with pending dependency", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), Status: str("in_progress"), Dependencies: strs("b")}}}, domain.CodeDependencyUnmet, "items[0].status"},
		{"complete with pending dependency", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), Status: str("completed"), Dependencies: strs("b")}}}, domain.CodeDependencyUnmet, "items[0].status"},
		{"depend on cancelled while running", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), Status: str("in_progress"), Dependencies: strs("c")}}}, domain.CodeDependencyUnmet, "items[0].status"},
		{"add pending dependency to running item", append(clone(todoFixture), work.TodoUpdate{Items: []work.TodoInput{{ID: "d", Title: str("D"), Status: str("in_progress")}}}),
			work.TodoUpdate{Items: []work.TodoInput{{ID: "d", Dependencies: strs("b")}}}, domain.CodeDependencyUnmet, "items[0].status"},

		{"plan step without plan", nil, work.TodoUpdate{Items: []work.TodoInput{{Title: str("x"), PlanStepID: str("step-1")}}}, domain.CodeStepNotFound, "items[0].plan_step_id"},
		{"unknown plan step", todoFixture, work.TodoUpdate{Items: []work.TodoInput{{ID: "b", PlanStepID: str("step-7")}}}, domain.CodeStepNotFound, "items[0].plan_step_id"},
		{"step of the parent plan", append(clone(todoFixture), work.PlanUpdate{Action: work.ActionPush, ExpectedRevision: rev(1), Title: "Sub", Steps: steps("x")}),
			work.TodoUpdate{Items: []work.TodoInput{{ID: "b", PlanStepID: str("step-1")}}}, domain.CodeStepNotFound, "items[0].plan_step_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := build(t, tt.setup)
			_, err := w.do(tt.cmd)
			de := wantCode(t, err, tt.code)
			if de.Field != tt.field {
				t.Errorf("field %q, want %q (%v)", de.Field, tt.field, err)
			}
			if de.Message == "" || de.Fix == "" {
				t.Errorf("error %q lacks a message or a fix", err)
			}
		})
	}
}

func TestTodoCreateAndPatch(t *testing.T) {
	w := build(t, rootPlan)
	out := w.must(work.TodoUpdate{Items: []work.TodoInput{
		todo("First"),
		{ID: "todo-2", Title: str("Mine"), Owner: str(" build "), Dependencies: strs("todo-9", "todo-9")},
		{ID: "todo-9", Title: str("Third"), PlanStepID: str("step-1"), Status: str(work.StatusBlocked)},
	}})
	ev := out[0].(events.WorkTodoUpdated)
	if !reflect.DeepEqual(ev.CreatedIDs, []string{"todo-1", "todo-2", "todo-9"}) {
		t.Errorf("created %v", ev.CreatedIDs)
	}
	want := work.TodoView{Revision: 1, Items: []work.TodoItemView{
		{ID: "todo-1", Title: "First", Status: "pending", Dependencies: []string{}},
		{ID: "todo-2", Title: "Mine", Status: "pending", Owner: "build", Dependencies: []string{"todo-9"}},
		{ID: "todo-9", Title: "Third", Status: "blocked", Dependencies: []string{}, PlanStepID: "step-1"},
	}}
	if got := w.s.TodoView(); !reflect.DeepEqual(got, want) {
		t.Errorf("view\n got %+v\nwant %+v", got, want)
	}

	// Only the given fields change; an unknown explicit id creates; host ids skip taken ids.
	out = w.must(work.TodoUpdate{ExpectedRevision: rev(1), Items: []work.TodoInput{
		{ID: "todo-9", Status: str(work.StatusCompleted), Owner: str("explore")},
		{ID: "todo-2", Status: str(work.StatusInProgress), PlanStepID: str("step-2")},
		{ID: "todo-5", Title: str("Later")},
		todo("Host numbered"),
	}})
	ev = out[0].(events.WorkTodoUpdated)
	if !reflect.DeepEqual(ev.CreatedIDs, []string{"todo-5", "todo-4"}) || len(ev.Items) != 4 {
		t.Errorf("event %+v", ev)
	}
	want = work.TodoView{Revision: 2, Items: []work.TodoItemView{
		{ID: "todo-1", Title: "First", Status: "pending", Dependencies: []string{}},
		{ID: "todo-2", Title: "Mine", Status: "in_progress", Owner: "build", Dependencies: []string{"todo-9"}, PlanStepID: "step-2"},
		{ID: "todo-9", Title: "Third", Status: "completed", Owner: "explore", Dependencies: []string{}, PlanStepID: "step-1"},
		{ID: "todo-5", Title: "Later", Status: "pending", Dependencies: []string{}},
		{ID: "todo-4", Title: "Host numbered", Status: "pending", Dependencies: []string{}},
	}}
	if got := w.s.TodoView(); !reflect.DeepEqual(got, want) {
		t.Errorf("view\n got %+v\nwant %+v", got, want)
	}

	// Clearing, and re-sending a completed item unchanged.
	w.must(work.TodoUpdate{Items: []work.TodoInput{
		{ID: "todo-2", Owner: str(""), PlanStepID: str(""), Dependencies: strs()},
		{ID: "todo-9", Status: str(work.StatusCompleted), Title: str("Third")},
		todo("Next"),
	}})
	v := w.s.TodoView()
	if it := v.Items[1]; it.Owner != "" || it.PlanStepID != "" || len(it.Dependencies) != 0 {
		t.Errorf("not cleared: %+v", it)
	}
	if it := v.Items[5]; it.ID != "todo-6" {
		t.Errorf("next host id %s, want todo-6", it.ID)
	}
}

func TestTodoDependencySatisfiedInSameCall(t *testing.T) {
	w := build(t, todoFixture)
	// b is listed after the item that needs it completed; the call is judged as a whole.
	w.must(work.TodoUpdate{ExpectedRevision: rev(2), Items: []work.TodoInput{
		{ID: "d", Title: str("D"), Status: str(work.StatusInProgress), Dependencies: strs("b", "a")},
		{ID: "b", Status: str(work.StatusCompleted)},
	}})
	if v := w.s.TodoView(); v.Items[3].Status != work.StatusInProgress || v.Items[1].Status != work.StatusCompleted {
		t.Errorf("view %+v", v)
	}
}

func TestTodoKeepsLinkToOlderPlan(t *testing.T) {
	w := build(t, append(clone(todoFixture),
		work.PlanUpdate{Action: work.ActionCreate, ExpectedRevision: rev(1), Title: "New", Steps: steps("x")}))
	// a is linked to step-1 of the superseded plan-1; re-sending it unchanged is accepted.
	w.must(work.TodoUpdate{Items: []work.TodoInput{{ID: "a", Status: str(work.StatusCompleted), PlanStepID: str("step-1")}}})
	_, err := w.do(work.TodoUpdate{Items: []work.TodoInput{{ID: "b", PlanStepID: str("step-1")}}})
	wantCode(t, err, domain.CodeStepNotFound)
	w.must(work.TodoUpdate{Items: []work.TodoInput{{ID: "b", PlanStepID: str("step-3")}}})
}

func TestTodoTotalLimit(t *testing.T) {
	w := newWorld(t)
	for call := range work.MaxTodoItems / work.MaxTodoItemsPerCall {
		var items []work.TodoInput
		for i := range work.MaxTodoItemsPerCall {
			items = append(items, todo(fmt.Sprint(call, i)))
		}
		w.must(work.TodoUpdate{Items: items})
	}
	if n := len(w.s.TodoView().Items); n != work.MaxTodoItems {
		t.Fatalf("%d items", n)
	}
	_, err := w.do(work.TodoUpdate{Items: []work.TodoInput{todo("one more")}})
	wantCode(t, err, domain.CodeInvalidArgument)
	// Updating is still allowed at the limit.
	w.must(work.TodoUpdate{Items: []work.TodoInput{{ID: "todo-256", Status: str(work.StatusCompleted)}}})
}

func TestTodoViewJSON(t *testing.T) {
	w := newWorld(t)
	if got, want := mustJSON(t, w.s.TodoView()), `{"revision":0,"items":[]}`; got != want {
		t.Errorf("empty todo_get %s, want %s", got, want)
	}
	w.must(work.TodoUpdate{Items: []work.TodoInput{todo("A")}})
	want := `{"revision":1,"items":[{"id":"todo-1","title":"A","status":"pending","owner":"","dependencies":[],"plan_step_id":""}]}`
	if got := mustJSON(t, w.s.TodoView()); got != want {
		t.Errorf("todo_get\n got %s\nwant %s", got, want)
	}
}

func TestTodoUpdateFromToolJSON(t *testing.T) {
	var c work.TodoUpdate
	err := json.Unmarshal([]byte(`{"expected_revision":2,"items":[{"id":"a","title":"T","status":"pending","owner":"","dependencies":[],"plan_step_id":"step-1"},{"title":"U","dependencies":null}]}`), &c)
	if err != nil {
		t.Fatal(err)
	}
	want := work.TodoUpdate{ExpectedRevision: rev(2), Items: []work.TodoInput{
		{ID: "a", Title: str("T"), Status: str("pending"), Owner: str(""), Dependencies: strs(), PlanStepID: str("step-1")},
		{Title: str("U")},
	}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

func TestTodoEventCarriesWholeItems(t *testing.T) {
	w := build(t, todoFixture)
	out := w.must(work.TodoUpdate{Items: []work.TodoInput{{ID: "b", Owner: str("explore")}}})
	want := events.WorkTodoUpdated{SessionID: sessionID, Revision: 3, CreatedIDs: []string{}, Items: []events.WorkItem{
		{ID: "b", Title: "B", Status: "pending", Owner: "explore", Dependencies: []string{"a"}},
	}}
	if !reflect.DeepEqual(out, []events.Payload{want}) {
		t.Errorf("events\n got %+v\nwant %+v", out, want)
	}
}
