package delegate_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
)

// FuzzTaskValidate: task's Validate parses untrusted model output (the contract parser). It
// never panics; every refusal is a *domain.Error naming a field, the problem and a fix, with
// nothing parsed; every acceptance is a delegation.Request that passes the contract's own
// check, is already normalized, and has no blank required text.
func FuzzTaskValidate(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, contractArgs(""), contractArgs(`"background":true,"reportDelivery":"quiet"`),
		contractArgs(`"scope":{"include":["a"],"exclude":["b"]},"constraints":{"must":["c"],"must_not":["d"]},"dependencies":["e"]`),
		contractArgs(`"task_id":"ses_1","intent":"Audit"`), contractArgs(`"prompt":"x"`), `{"contract":{}}`,
		contractArgs(`"reportDelivery":"nextStep"`), contractArgs(`"scope":{"include":[" "]}`), contractArgs(`"agent":"x"`),
		`{"agent":" ","objective":" ","deliverable":" ","instructions":" ","success_evidence":" "}`,
		"{\"agent\":\"\xff\"}", `{"agent":"\ud800"}`, contractArgs(`"scope":null,"constraints":{"must":null}`),
		contractArgs(`"background":null,"task_id":"\u0000"`), `{"":1}`, contractArgs(`"dependencies":[1]`),
	} {
		f.Add(s)
	}
	tl := byName(nil)[tools.NameTask]
	f.Fuzz(func(t *testing.T, in string) {
		p, err := tl.Validate(json.RawMessage(in))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Field == "" || de.Fix == "" || de.Message == "" || p.Args != nil || p.Action != "" {
				t.Fatalf("%q: refusal %v (%T), parsed %+v", in, err, err, p)
			}
			return
		}
		req, ok := p.Args.(delegation.Request)
		if !ok || p.Action != "" {
			t.Fatalf("%q: accepted as %#v", in, p)
		}
		if err := delegation.CheckShape(req); err != nil {
			t.Fatalf("%q: accepted a request its check refuses: %v", in, err)
		}
		if !reflect.DeepEqual(delegation.Normalize(req), req) {
			t.Fatalf("%q: accepted a request that is not normalized: %+v", in, req)
		}
		c := req.Contract
		for _, s := range []string{c.Agent, c.Objective, c.Deliverable, c.Instructions, c.SuccessEvidence} {
			if s == "" || s != strings.TrimSpace(s) {
				t.Fatalf("%q: required text %q", in, s)
			}
		}
		if !req.Background && req.ReportDelivery != "" {
			t.Fatalf("%q: foreground with delivery %q", in, req.ReportDelivery)
		}
	})
}

// FuzzReconcileValidate: job_reconcile's Validate parses untrusted model output too. It never
// panics; a refusal is a typed error with field and fix; an acceptance is a Reconciliation
// that passes the rules of seeds 002 §7.5.
func FuzzReconcileValidate(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `{"jobID":"j","outcome":"completed","finalText":"done","authority":"CI","evidence":"ok"}`,
		`{"jobID":"j","outcome":"failed","error":"e","authority":"CI","evidence":"ok"}`,
		`{"jobID":"j","outcome":"completed","finalText":"done","error":"e","authority":"CI","evidence":"ok"}`,
		`{"jobID":"j","outcome":"cancelled","error":" ","authority":"CI","evidence":"ok"}`,
		`{"jobID":"","outcome":"x","authority":null,"evidence":1}`, "{\"jobID\":\"\xff\"}",
	} {
		f.Add(s)
	}
	tl := byName(nil)[tools.NameJobReconcile]
	f.Fuzz(func(t *testing.T, in string) {
		p, err := tl.Validate(json.RawMessage(in))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Field == "" || de.Fix == "" || p.Args != nil {
				t.Fatalf("%q: refusal %v (%T)", in, err, err)
			}
			return
		}
		r, ok := p.Args.(delegation.Reconciliation)
		if !ok || delegation.CheckReconciliation(r) != nil {
			t.Fatalf("%q: accepted as %#v", in, p)
		}
	})
}
