package goaltools_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/goaltools"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/tools"
)

// FuzzValidate: Validate parses untrusted model output for the three goal tools. It never
// panics; every refusal is a *domain.Error naming a field and a fix; every acceptance is
// the tool's own argument type.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"objective":"o","criteria":[{"text":"t","needs_evidence":true}]}`,
		`{"expected_revision":2,"status":"complete","evidence":[{"criterion_id":"c1","receipt_id":"rcp_x"}]}`,
		`{"status":"done"}`, `{"evidence":[{"criterion_id":1}]}`, `{"expected_revision":-1}`, `{"criteria":[null]}`,
		`{"expected_revision":3,"question":"Which?"}`, `{"question":""}`, "{\"objective\":\"\xff\"}", `{"":1}`,
	} {
		for i := range 3 {
			f.Add(s, uint8(i))
		}
	}
	all := goaltools.New(nil)
	f.Fuzz(func(t *testing.T, in string, which uint8) {
		tl := all[int(which)%len(all)]
		p, err := tl.Validate(json.RawMessage(in))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Field == "" || de.Fix == "" || de.Message == "" || p.Args != nil {
				t.Fatalf("%s %q: refusal %v (%T), parsed %+v", tl.Declaration().Name, in, err, err, p)
			}
			return
		}
		var ok bool
		switch tl.Declaration().Name {
		case tools.NameGoalUpdate:
			var u goal.Update
			u, ok = p.Args.(goal.Update)
			ok = ok && u.Status == p.Action
		case tools.NameGoalRequestInput:
			_, ok = p.Args.(goal.RequestInput)
		default:
			ok = p.Args != nil
		}
		if !ok {
			t.Fatalf("%s %q: accepted as %#v", tl.Declaration().Name, in, p)
		}
	})
}
