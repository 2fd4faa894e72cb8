package worktools_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
)

func byName() map[string]tools.Tool {
	m := map[string]tools.Tool{}
	for _, tl := range worktools.New(nil) {
		m[tl.Declaration().Name] = tl
	}
	return m
}

func TestValidateRefuses(t *testing.T) {
	all := byName()
	cases := []struct {
		name, tool, args string
		code, field      string
		// inFix is a piece of text the fix must hold.
		inFix string
		valid []string
	}{
		{"plan_get takes no arguments", tools.NamePlanGet, `{"session":"ses_2"}`, domain.CodeInvalidArgument, "session", "takes no arguments", nil},
		{"todo_get takes no arguments", tools.NameTodoGet, `{"look":"all"}`, domain.CodeInvalidArgument, "look", "takes no arguments", nil},
		{"not an object", tools.NamePlanGet, `[]`, domain.CodeInvalidArgument, "arguments", "JSON object", nil},
		{"broken JSON", tools.NamePlanUpdate, `{"action":`, domain.CodeInvalidArgument, "arguments", "JSON object", nil},
		{"data after the object", tools.NameTodoUpdate, `{"items":[{"title":"x"}]} {}`, domain.CodeInvalidArgument, "arguments", "JSON object", nil},
		{"invalid UTF-8", tools.NameTodoUpdate, "{\"items\":[{\"title\":\"\xff\"}]}", domain.CodeInvalidArgument, "arguments", "JSON object", nil},
		{"missing action", tools.NamePlanUpdate, `{"title":"x"}`, domain.CodeInvalidAction, "action", "create", work.PlanActions()},
		{"null action is missing", tools.NamePlanUpdate, `{"action":null}`, domain.CodeInvalidAction, "action", "pop", work.PlanActions()},
		{"unknown action", tools.NamePlanUpdate, `{"action":"remove"}`, domain.CodeInvalidAction, "action", "append", work.PlanActions()},
		{"action of the wrong type", tools.NamePlanUpdate, `{"action":1}`, domain.CodeInvalidAction, "action", "push", work.PlanActions()},
		{"unknown field", tools.NamePlanUpdate, `{"action":"create","title":"x","steps":[{"title":"a"}],"goal":"y"}`,
			domain.CodeInvalidArgument, "goal", "expected_revision", nil},
		{"field names are case-sensitive", tools.NamePlanUpdate, `{"Action":"create"}`, domain.CodeInvalidArgument, "Action", "case-sensitive", nil},
		{"unknown field of a step", tools.NamePlanUpdate, `{"action":"create","title":"x","steps":[{"title":"a","done":true}]}`,
			domain.CodeInvalidArgument, "steps[0].done", "id, title, status", nil},
		{"unknown field of a patch", tools.NamePlanUpdate, `{"action":"patch","expected_revision":1,"patches":[{"step":"s"}]}`,
			domain.CodeInvalidArgument, "patches[0].step", "id, title, status", nil},
		{"a patch without id", tools.NamePlanUpdate, `{"action":"patch","expected_revision":1,"patches":[{"status":"completed"}]}`,
			domain.CodeInvalidArgument, "patches[0].id", "existing step", nil},
		{"a step without title", tools.NamePlanUpdate, `{"action":"append","expected_revision":1,"steps":[{}]}`,
			domain.CodeInvalidArgument, "steps[0].title", "title", nil},
		{"a field the action does not read", tools.NamePlanUpdate, `{"action":"pop","expected_revision":1,"title":"x"}`,
			domain.CodeInvalidArgument, "title", "action=create", nil},
		{"steps with patch", tools.NamePlanUpdate, `{"action":"patch","expected_revision":1,"steps":[{"title":"a"}]}`,
			domain.CodeInvalidArgument, "steps", "action=create", nil},
		{"a key twice", tools.NamePlanUpdate, `{"action":"create","action":"pop"}`, domain.CodeInvalidArgument, "action", "once", nil},
		{"negative revision", tools.NamePlanUpdate, `{"action":"pop","expected_revision":-1}`, domain.CodeInvalidArgument, "expected_revision", "whole number", nil},
		{"fractional revision", tools.NamePlanUpdate, `{"action":"pop","expected_revision":1.5}`, domain.CodeInvalidArgument, "expected_revision", "whole number", nil},
		{"revision as a string", tools.NameTodoUpdate, `{"expected_revision":"2","items":[{"title":"x"}]}`, domain.CodeInvalidArgument, "expected_revision", "whole number", nil},
		{"revision out of range", tools.NameTodoUpdate, `{"expected_revision":18446744073709551616,"items":[{"title":"x"}]}`, domain.CodeInvalidArgument, "expected_revision", "whole number", nil},
		{"unknown plan status", tools.NamePlanUpdate, `{"action":"patch","expected_revision":1,"status":"done"}`, domain.CodeInvalidArgument, "status", "superseded", work.PlanStatuses()},
		{"unknown step status", tools.NamePlanUpdate, `{"action":"create","title":"x","steps":[{"title":"a","status":"cancelled"}]}`,
			domain.CodeInvalidArgument, "steps[0].status", "superseded", work.PlanStatuses()},
		{"steps not an array", tools.NamePlanUpdate, `{"action":"create","title":"x","steps":{"title":"a"}}`, domain.CodeInvalidArgument, "steps", "array of objects", nil},
		{"items missing", tools.NameTodoUpdate, `{"expected_revision":1}`, domain.CodeInvalidArgument, "items", "array of objects", nil},
		{"items null", tools.NameTodoUpdate, `{"items":null}`, domain.CodeInvalidArgument, "items", "array of objects", nil},
		{"an item that is not an object", tools.NameTodoUpdate, `{"items":[null]}`, domain.CodeInvalidArgument, "items[0]", "array of objects", nil},
		{"unknown field of an item", tools.NameTodoUpdate, `{"items":[{"title":"x","priority":1}]}`, domain.CodeInvalidArgument, "items[0].priority", "plan_step_id", nil},
		{"unknown todo status", tools.NameTodoUpdate, `{"items":[{"id":"a","status":"superseded"}]}`, domain.CodeInvalidArgument, "items[0].status", "cancelled", work.TodoStatuses()},
		{"dependencies not strings", tools.NameTodoUpdate, `{"items":[{"id":"a","dependencies":[1]}]}`, domain.CodeInvalidArgument, "items[0].dependencies[0]", "array of strings", nil},
		{"dependencies as one string", tools.NameTodoUpdate, `{"items":[{"id":"a","dependencies":"b"}]}`, domain.CodeInvalidArgument, "items[0].dependencies", "array of strings", nil},
		{"owner of the wrong type", tools.NameTodoUpdate, `{"items":[{"id":"a","owner":true}]}`, domain.CodeInvalidArgument, "items[0].owner", "string", nil},
		{"plan_update arguments to todo_update", tools.NameTodoUpdate, `{"action":"create","items":[]}`, domain.CodeInvalidArgument, "action", "items", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := all[tc.tool].Validate(json.RawMessage(tc.args))
			var de *domain.Error
			if !errors.As(err, &de) {
				t.Fatalf("Validate(%s) = %+v, %v; want a *domain.Error", tc.args, p, err)
			}
			if de.Code() != tc.code || de.Field != tc.field || !strings.Contains(de.Fix, tc.inFix) || de.Message == "" {
				t.Errorf("Validate(%s) = %s (field %q), want %s on %q with a fix about %q", tc.args, err, de.Field, tc.code, tc.field, tc.inFix)
			}
			if tc.valid != nil && !reflect.DeepEqual(de.Valid, tc.valid) {
				t.Errorf("Valid = %v, want %v", de.Valid, tc.valid)
			}
			if p.Args != nil || p.Action != "" {
				t.Errorf("a refusal returned arguments %+v", p)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	all := byName()
	cases := []struct {
		name, tool, args string
		action           string
		want             any
	}{
		{"plan_get with {}", tools.NamePlanGet, `{}`, "", nil},
		{"plan_get with nothing", tools.NamePlanGet, ``, "", nil},
		{"todo_get with space", tools.NameTodoGet, " \n", "", nil},
		{"first create", tools.NamePlanUpdate, `{"action":"create","title":"T","steps":[{"title":"a"},{"id":"b","title":"B","status":"in_progress"}]}`,
			work.ActionCreate, work.PlanUpdate{Action: "create", Title: "T",
				Steps: []work.StepInput{{Title: "a"}, {ID: "b", Title: "B", Status: "in_progress"}}}},
		{"null means absent", tools.NamePlanUpdate, `{"action":"pop","expected_revision":4,"status":null,"title":null}`,
			work.ActionPop, work.PlanUpdate{Action: "pop", ExpectedRevision: u64(4)}},
		{"patch", tools.NamePlanUpdate, `{"action":"patch","expected_revision":0,"patches":[{"id":"s","title":"S2"}],"status":"completed"}`,
			work.ActionPatch, work.PlanUpdate{Action: "patch", ExpectedRevision: u64(0), Status: "completed",
				Patches: []work.StepPatch{{ID: "s", Title: ptr("S2")}}}},
		{"todo items", tools.NameTodoUpdate,
			`{"expected_revision":2,"items":[{"id":"a","owner":"","dependencies":[],"plan_step_id":"s"},{"title":"n","dependencies":["a"],"status":null}]}`,
			"", work.TodoUpdate{ExpectedRevision: u64(2), Items: []work.TodoInput{
				{ID: "a", Owner: ptr(""), Dependencies: &[]string{}, PlanStepID: ptr("s")},
				{Title: ptr("n"), Dependencies: &[]string{"a"}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := all[tc.tool].Validate(json.RawMessage(tc.args))
			if err != nil {
				t.Fatalf("Validate(%q): %v", tc.args, err)
			}
			if p.Action != tc.action {
				t.Errorf("Action = %q, want %q", p.Action, tc.action)
			}
			if tc.want != nil && !reflect.DeepEqual(p.Args, tc.want) {
				t.Errorf("Args = %#v, want %#v", p.Args, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
