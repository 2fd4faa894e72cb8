package contexttools_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/contexttools"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/taskcontext"
)

// FuzzValidate: Validate and then the aggregate's Decide parse untrusted model output. Neither
// panics; every refusal is a *domain.Error with a code and a fix; an accepted call carries an
// action the tool knows, and a decision raises the revision by exactly one.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `{"action":"get"}`, `{"action":"get","objective":"x"}`, `{"action":"delete"}`,
		`{"action":"update","objective":"Fix","task_kind":"delivery","source_message_ids":["msg_1"],"checks":[{"kind":"delivery","title":"t"}]}`,
		`{"action":"replace","expected_revision":1,"objective":"o","task_kind":"inspection","source_message_ids":["msg_1","msg_1"]}`,
		`{"action":"update","expected_revision":1,"revise_checks":true,"checks":[{"id":"check-1","title":"new"}]}`,
		`{"action":"update","expected_revision":1,"status":"completed","checks":[{"id":"check-1","status":"passed","evidence":"e"}]}`,
		`{"action":"update","constraints":["\u0000"],"objective":"\ud800"}`, `{"action":"update","checks":[null]}`,
		`{"action":"update","source_message_ids":["msg_report"],"objective":"o","task_kind":"delivery"}`,
	} {
		f.Add(s)
	}
	tl := contexttools.New(nil)[0]
	msgs := map[string]taskcontext.Message{
		"msg_1":      {ID: "msg_1", Kind: taskcontext.MessageUser, Summary: "s"},
		"msg_report": {ID: "msg_report", Kind: taskcontext.MessageTaskReport, Summary: "r"},
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := tl.Validate(json.RawMessage(in))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Code() == "" || de.Fix == "" {
				t.Fatalf("Validate(%q) = %v, want a typed refusal with a fix", in, err)
			}
			return
		}
		u, ok := p.Args.(taskcontext.Update)
		if !ok || !slices.Contains(taskcontext.Actions(), u.Action) || p.Action != u.Action {
			t.Fatalf("Validate(%q) accepted %+v", in, p)
		}
		if u.Action == taskcontext.ActionGet {
			return
		}
		u.SessionID, u.Messages = "ses_1", msgs
		s := &taskcontext.State{}
		ps, err := taskcontext.Decide(s, u)
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Fix == "" {
				t.Fatalf("Decide(%q) = %v, want a typed refusal with a fix", in, err)
			}
			return
		}
		for _, ev := range ps {
			if err := s.Evolve(ev); err != nil {
				t.Fatal(err)
			}
		}
		if s.Revision() != 1 || s.Current() == nil || len(s.Current().Sources) == 0 {
			t.Fatalf("Decide(%q) gave revision %d, task %+v", in, s.Revision(), s.Current())
		}
	})
}
