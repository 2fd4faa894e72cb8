package work_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/work"
)

var fuzzStates = [][]work.Command{nil, rootPlan, subPlan, completedRoot, completedSub, todoFixture}

// fuzzWorld builds one of the fixtures. The fuzz targets' fixRevision flag then makes the
// command's expected revision current, so that the fuzzer gets past the revision check.
func fuzzWorld(t *testing.T, state uint8) *world {
	return build(t, fuzzStates[int(state)%len(fuzzStates)])
}

// checkPlanInvariants holds after every decision, successful or not.
func checkPlanInvariants(t *testing.T, s *work.State) {
	v := s.PlanView()
	if v == nil {
		return
	}
	if len(v.Steps) > work.MaxPlanSteps || v.Depth > work.MaxPlanDepth || (v.Depth == 0) != (v.ParentPlanID == "") {
		t.Fatalf("plan out of bounds: %+v", v)
	}
	if !slices.Contains(work.PlanStatuses(), v.Status) {
		t.Fatalf("plan status %q", v.Status)
	}
	seen := map[string]bool{}
	for _, st := range v.Steps {
		if st.ID == "" || seen[st.ID] || st.Title == "" || !slices.Contains(work.PlanStatuses(), st.Status) {
			t.Fatalf("bad step %+v in %+v", st, v)
		}
		seen[st.ID] = true
	}
}

func FuzzPlanUpdate(f *testing.F) {
	seeds := []string{
		`{"action":"create","title":"T","steps":[{"title":"a"},{"id":"step-2","title":"b","status":"completed"}]}`,
		`{"action":"create","expected_revision":1,"title":"T","steps":[{"id":"x","title":"a"},{"id":"x","title":"b"}]}`,
		`{"action":"patch","expected_revision":1,"title":"U","status":"completed","patches":[{"id":"step-1","status":"in_progress"},{"id":"step-2","title":"z"}]}`,
		`{"action":"patch","expected_revision":2,"patches":[{"id":"step-3","status":"superseded"}]}`,
		`{"action":"append","expected_revision":1,"steps":[{"title":"c","status":"blocked"}]}`,
		`{"action":"push","expected_revision":1,"title":"Sub","steps":[{"title":"d"}]}`,
		`{"action":"pop","expected_revision":2,"status":"superseded"}`,
		`{"action":"pop","expected_revision":3}`,
		`{"action":"remove"}`,
		`{"expected_revision":0}`,
		`{"action":"create","title":"\u0000","steps":[{"title":""}]}`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, state uint8, fixRevision bool) {
		var cmd work.PlanUpdate
		if json.Unmarshal(data, &cmd) != nil {
			return
		}
		w := fuzzWorld(t, state)
		if fixRevision {
			cmd.ExpectedRevision = rev(w.s.PlanRevision())
		}
		// world.do checks that errors are *domain.Error, that Decide leaves the state alone, that
		// a success raises the plan revision by exactly one, and (at cleanup) that replaying the
		// encoded log rebuilds the same state.
		before := w.s.PlanRevision()
		if _, err := w.do(cmd); err == nil && w.s.PlanRevision() != before+1 {
			t.Fatalf("revision %d -> %d", before, w.s.PlanRevision())
		}
		checkPlanInvariants(t, &w.s)
	})
}

func FuzzTodoUpdate(f *testing.F) {
	seeds := []string{
		`{"items":[{"title":"a"},{"id":"todo-1","title":"b","dependencies":["todo-1"]}]}`,
		`{"expected_revision":2,"items":[{"id":"b","status":"in_progress"},{"id":"a","status":"completed"}]}`,
		`{"items":[{"id":"d","title":"d","dependencies":["b","a"],"status":"completed"},{"id":"b","status":"completed"}]}`,
		`{"items":[{"id":"x","title":"x","dependencies":["y"]},{"id":"y","title":"y","dependencies":["x"]}]}`,
		`{"items":[{"id":"b","plan_step_id":"step-1","owner":"build"}]}`,
		`{"items":[]}`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, state uint8, fixRevision bool) {
		var cmd work.TodoUpdate
		if json.Unmarshal(data, &cmd) != nil {
			return
		}
		w := fuzzWorld(t, state)
		if fixRevision {
			cmd.ExpectedRevision = rev(w.s.TodoRevision())
		}
		w.do(cmd)
		v := w.s.TodoView()
		if len(v.Items) > work.MaxTodoItems {
			t.Fatalf("%d items", len(v.Items))
		}
		index := map[string]int{}
		for i, it := range v.Items {
			if _, dup := index[it.ID]; dup || it.Title == "" || !slices.Contains(work.TodoStatuses(), it.Status) {
				t.Fatalf("bad item %+v", it)
			}
			index[it.ID] = i
		}
		for _, it := range v.Items {
			for _, dep := range it.Dependencies {
				d, ok := index[dep]
				if !ok || dep == it.ID {
					t.Fatalf("item %s has bad dependency %s", it.ID, dep)
				}
				if (it.Status == work.StatusInProgress || it.Status == work.StatusCompleted) &&
					v.Items[d].Status != work.StatusCompleted {
					t.Fatalf("item %s is %s with dependency %s %s", it.ID, it.Status, dep, v.Items[d].Status)
				}
			}
		}
		// No stored dependency graph may hold a cycle: an item in one could never start.
		const white, grey, black = 0, 1, 2
		color := make([]int, len(v.Items))
		var visit func(i int)
		visit = func(i int) {
			color[i] = grey
			for _, dep := range v.Items[i].Dependencies {
				switch j := index[dep]; color[j] {
				case grey:
					t.Fatalf("dependency cycle through %s and %s", v.Items[i].ID, dep)
				case white:
					visit(j)
				}
			}
			color[i] = black
		}
		for i := range v.Items {
			if color[i] == white {
				visit(i)
			}
		}
	})
}
