package worktools_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
)

// FuzzValidate: Validate parses untrusted model output for all four tools. It never panics;
// every refusal is a *domain.Error naming a field and a fix, with no arguments; every
// acceptance is the tool's own argument type, and a plan_update carries an action the domain
// knows and only the fields that action reads.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"action":"create","title":"T","steps":[{"title":"a"},{"id":"b","title":"B","status":"blocked"}]}`,
		`{"action":"patch","expected_revision":3,"patches":[{"id":"s","status":"completed","title":"x"}],"status":"superseded"}`,
		`{"action":"append","expected_revision":1,"steps":[{"title":"c"}]}`, `{"action":"pop","expected_revision":2,"status":null}`,
		`{"action":"push","expected_revision":0,"title":"Sub","steps":[]}`, `{"action":"remove"}`, `{"action":"pop","title":"x"}`,
		`{"expected_revision":1,"items":[{"id":"a","title":"A","status":"in_progress","owner":"build","dependencies":["b"],"plan_step_id":"s"}]}`,
		`{"items":[null]}`, `{"items":[{"dependencies":[1]}]}`, `{"expected_revision":-0}`, `{"expected_revision":1e3}`,
		`{"action":"create","action":"pop"}`, `{"":1}`, `{"items":[{"":1}]}`, "{\"action\":\"\xff\"}", `{"items":[]} x`,
		`{"steps":[{"title":"\ud800"}]}`,
	} {
		for i := range 4 {
			f.Add(s, uint8(i))
		}
	}
	all := []tools.Tool{}
	for _, name := range []string{tools.NamePlanGet, tools.NamePlanUpdate, tools.NameTodoGet, tools.NameTodoUpdate} {
		all = append(all, byName()[name])
	}
	f.Fuzz(func(t *testing.T, in string, which uint8) {
		tl := all[int(which)%len(all)]
		p, err := tl.Validate(json.RawMessage(in))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Field == "" || de.Fix == "" || de.Message == "" || p.Args != nil || p.Action != "" {
				t.Fatalf("%s %q: refusal %v (%T), parsed %+v", tl.Declaration().Name, in, err, err, p)
			}
			return
		}
		switch name := tl.Declaration().Name; name {
		case tools.NamePlanUpdate:
			u, ok := p.Args.(work.PlanUpdate)
			if !ok || u.Action != p.Action || !slices.Contains(work.PlanActions(), u.Action) || u.CheckShape() != nil {
				t.Fatalf("%q: accepted as %#v", in, p)
			}
		case tools.NameTodoUpdate:
			if _, ok := p.Args.(work.TodoUpdate); !ok || p.Action != "" {
				t.Fatalf("%q: accepted as %#v", in, p)
			}
		default:
			if p.Args == nil || p.Action != "" {
				t.Fatalf("%s %q: accepted as %#v", name, in, p)
			}
		}
	})
}
