package delegate_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/delegate"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

func byName(jobs delegate.Jobs) map[string]tools.Tool {
	m := map[string]tools.Tool{}
	for _, tl := range delegate.New(jobs) {
		m[tl.Declaration().Name] = tl
	}
	return m
}

// contractArgs is a complete task call with extra members (raw JSON) appended.
func contractArgs(extra string) string {
	s := `{"agent":"explorer","objective":"Find the gap","deliverable":"The chain","instructions":"Read only",` +
		`"success_evidence":"Exact files"`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

// TestTaskValidateRefuses: every rule of the task contract's parser, one row per seed
// sentence (seeds 002 §4, seeds 000 "task"), with the field and what the fix says.
func TestTaskValidateRefuses(t *testing.T) {
	rows := []struct {
		seed, args, code, field, inFix string
	}{
		{"objective is required", `{"agent":"explorer","deliverable":"d","instructions":"i","success_evidence":"s"}`,
			domain.CodeInvalidArgument, "objective", "objective"},
		{"deliverable is required", `{"agent":"explorer","objective":"o","instructions":"i","success_evidence":"s"}`,
			domain.CodeInvalidArgument, "deliverable", "deliverable"},
		{"instructions are required", `{"agent":"explorer","objective":"o","deliverable":"d","success_evidence":"s"}`,
			domain.CodeInvalidArgument, "instructions", "instructions"},
		{"success_evidence is required", `{"agent":"explorer","objective":"o","deliverable":"d","instructions":"i"}`,
			domain.CodeInvalidArgument, "success_evidence", "success_evidence"},
		{"agent is required", `{"objective":"o","deliverable":"d","instructions":"i","success_evidence":"s"}`,
			domain.CodeInvalidArgument, "agent", "agent"},
		{"an empty objective is refused", strings.Replace(contractArgs(""), `"Find the gap"`, `""`, 1),
			domain.CodeInvalidArgument, "objective", "non-empty"},
		{"an objective of blanks is empty", strings.Replace(contractArgs(""), `"Find the gap"`, `"  \n "`, 1),
			domain.CodeInvalidArgument, "objective", "achieve"},
		{"required also when continuing by task_id", `{"task_id":"ses_c","agent":"explorer","objective":"more"}`,
			domain.CodeInvalidArgument, "deliverable", "deliverable"},
		{"a continuation with a blank text is refused", strings.Replace(contractArgs(`"task_id":"ses_c"`), `"Read only"`, `" "`, 1),
			domain.CodeInvalidArgument, "instructions", "how the child"},
		{"description is refused, saying what to send", contractArgs(`"description":"x"`), domain.CodeInvalidArgument, "description", "objective"},
		{"prompt is refused: objective + instructions", contractArgs(`"prompt":"do it"`), domain.CodeInvalidArgument, "prompt", "instructions"},
		{"prompt alone is refused as prompt, not as a missing objective", `{"prompt":"do it"}`, domain.CodeInvalidArgument, "prompt", "objective"},
		{"subagent_type is refused: agent", contractArgs(`"subagent_type":"explorer"`), domain.CodeInvalidArgument, "subagent_type", "agent"},
		{"category is refused", contractArgs(`"category":"quick"`), domain.CodeInvalidArgument, "category", "agent"},
		{"model is refused: not chosen per call", contractArgs(`"model":"x/y"`), domain.CodeInvalidArgument, "model", "configuration"},
		{"effort is refused", contractArgs(`"effort":"high"`), domain.CodeInvalidArgument, "effort", "configuration"},
		{"load_skills is refused", contractArgs(`"load_skills":["a"]`), domain.CodeInvalidArgument, "load_skills", "Skills"},
		{"a nested contract is refused: top level", `{"contract":{"agent":"explorer"}}`, domain.CodeInvalidArgument, "contract", "top level"},
		{"unknown fields are refused", contractArgs(`"priority":1`), domain.CodeInvalidArgument, "priority", "success_evidence"},
		{"an unknown scope field is refused", contractArgs(`"scope":{"paths":["a"]}`), domain.CodeInvalidArgument, "scope.paths", "include, exclude"},
		{"an unknown constraints field is refused", contractArgs(`"constraints":{"should":["a"]}`), domain.CodeInvalidArgument, "constraints.should", "must, must_not"},
		{"scope entries are strings", contractArgs(`"scope":{"include":[1]}`), domain.CodeInvalidArgument, "scope.include[0]", "strings"},
		{"a blank scope entry is refused", contractArgs(`"scope":{"include":["a"," "]}`), domain.CodeInvalidArgument, "scope.include[1]", "blank"},
		{"a blank dependency is refused", contractArgs(`"dependencies":[""]`), domain.CodeInvalidArgument, "dependencies[0]", "blank"},
		{"background is a boolean", contractArgs(`"background":"yes"`), domain.CodeInvalidArgument, "background", "true or false"},
		{"reportDelivery is nextStep or quiet", contractArgs(`"background":true,"reportDelivery":"later"`), domain.CodeInvalidArgument, "reportDelivery", "nextStep"},
		{"a foreground task with reportDelivery is refused", contractArgs(`"reportDelivery":"nextStep"`), domain.CodeInvalidArgument, "reportDelivery", "background: true"},
		{"an explicit foreground task with reportDelivery is refused", contractArgs(`"background":false,"reportDelivery":"quiet"`), domain.CodeInvalidArgument, "reportDelivery", "foreground"},
		{"task_id is not empty", contractArgs(`"task_id":""`), domain.CodeInvalidArgument, "task_id", "non-empty"},
		{"a key given twice is refused", contractArgs(`"agent":"explorer"`), domain.CodeInvalidArgument, "agent", "once"},
		{"not an object", `["explorer"]`, domain.CodeInvalidArgument, "arguments", "JSON object"},
		{"empty arguments", ``, domain.CodeInvalidArgument, "arguments", "JSON object"},
		{"invalid UTF-8 is refused at its field", strings.Replace(contractArgs(""), "Find the gap", "Find \xff", 1), domain.CodeInvalidArgument, "objective", ""},
		{"intent is a string", contractArgs(`"intent":3`), domain.CodeInvalidArgument, "intent", "label"},
	}
	tl := byName(nil)[tools.NameTask]
	for _, r := range rows {
		t.Run(r.seed, func(t *testing.T) {
			p, err := tl.Validate(json.RawMessage(r.args))
			var de *domain.Error
			if !errors.As(err, &de) {
				t.Fatalf("accepted as %+v (err %v)", p, err)
			}
			if de.Code() != r.code || de.Field != r.field || !strings.Contains(de.Fix, r.inFix) || p.Args != nil {
				t.Fatalf("got %s field %q fix %q; want %s field %q fix containing %q", de.Code(), de.Field, de.Fix, r.code, r.field, r.inFix)
			}
		})
	}
}

// TestTaskValidateAccepts: a complete contract becomes a delegation.Request, trimmed, with
// the background delivery defaulted (seeds 002 §4); member order does not matter.
func TestTaskValidateAccepts(t *testing.T) {
	tl := byName(nil)[tools.NameTask]
	rows := []struct {
		name, args string
		want       delegation.Request
	}{
		{"foreground by default", contractArgs(""), delegation.Request{Contract: events.DelegationContract{Agent: "explorer",
			Objective: "Find the gap", Deliverable: "The chain", Instructions: "Read only", SuccessEvidence: "Exact files"}}},
		{"background defaults to nextStep", contractArgs(`"background":true`), delegation.Request{Background: true,
			ReportDelivery: "nextStep", Contract: events.DelegationContract{Agent: "explorer", Objective: "Find the gap",
				Deliverable: "The chain", Instructions: "Read only", SuccessEvidence: "Exact files"}}},
		{"everything, in another order, with space to trim",
			`{"intent":"Audit","task_id":" ses_c ","reportDelivery":"quiet","background":true,"dependencies":["index current"],` +
				`"constraints":{"must_not":["edit files"],"must":["keep changes"]},"scope":{"exclude":["creds"],"include":["crates/a"]},` +
				`"success_evidence":" files ","instructions":"i","deliverable":"d","objective":"o","agent":" explorer"}`,
			delegation.Request{TaskID: "ses_c", Background: true, ReportDelivery: "quiet", Intent: "Audit",
				Contract: events.DelegationContract{Agent: "explorer", Objective: "o", Deliverable: "d", Instructions: "i",
					SuccessEvidence: "files", Scope: &events.ContractScope{Include: []string{"crates/a"}, Exclude: []string{"creds"}},
					Constraints:  &events.ContractConstraints{Must: []string{"keep changes"}, MustNot: []string{"edit files"}},
					Dependencies: []string{"index current"}}}},
		{"null optional members are absent", contractArgs(`"scope":null,"task_id":null,"reportDelivery":null`),
			delegation.Request{Contract: events.DelegationContract{Agent: "explorer", Objective: "Find the gap",
				Deliverable: "The chain", Instructions: "Read only", SuccessEvidence: "Exact files"}}},
	}
	for _, r := range rows {
		p, err := tl.Validate(json.RawMessage(r.args))
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if !reflect.DeepEqual(p.Args, r.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", r.name, p.Args, r.want)
		}
	}
}

// TestTaskLegacyNamesAsValues: a legacy name written as a value, or inside one, is no
// legacy argument.
func TestTaskLegacyNamesAsValues(t *testing.T) {
	tl := byName(nil)[tools.NameTask]
	for _, extra := range []string{`"intent":"prompt"`, `"dependencies":["model","effort"]`,
		`"constraints":{"must":["keep the \"prompt\" field"]}`} {
		if _, err := tl.Validate(json.RawMessage(contractArgs(extra))); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
}

// TestReconcileValidate: job_reconcile's rules (seeds 002 §7.5) reach the model as typed
// refusals at their field.
func TestReconcileValidate(t *testing.T) {
	tl := byName(nil)[tools.NameJobReconcile]
	base := `"jobID":"job_1","authority":"CI run 123","evidence":"status=success"`
	rows := []struct{ seed, args, field string }{
		{"completed with finalText is accepted", `{` + base + `,"outcome":"completed","finalText":"done"}`, ""},
		{"failed with error is accepted", `{` + base + `,"outcome":"failed","error":"exit 1"}`, ""},
		{"completed needs finalText", `{` + base + `,"outcome":"completed"}`, "finalText"},
		{"completed takes no error", `{` + base + `,"outcome":"completed","finalText":"done","error":"x"}`, "error"},
		{"failed needs error", `{` + base + `,"outcome":"failed","finalText":"x"}`, "error"},
		{"cancelled needs error", `{` + base + `,"outcome":"cancelled","error":" "}`, "error"},
		{"authority is required", `{"jobID":"job_1","evidence":"e","outcome":"failed","error":"x"}`, "authority"},
		{"authority is not blank", `{"jobID":"job_1","authority":"  ","evidence":"e","outcome":"failed","error":"x"}`, "authority"},
		{"evidence is required", `{"jobID":"job_1","authority":"a","outcome":"failed","error":"x"}`, "evidence"},
		{"the outcome is one of three", `{` + base + `,"outcome":"uncertain","error":"x"}`, "outcome"},
		{"the job is named", `{"authority":"a","evidence":"e","outcome":"failed","error":"x"}`, "jobID"},
		{"no unknown field", `{` + base + `,"outcome":"failed","error":"x","rerun":true}`, "rerun"},
	}
	for _, r := range rows {
		p, err := tl.Validate(json.RawMessage(r.args))
		if r.field == "" {
			if _, ok := p.Args.(delegation.Reconciliation); err != nil || !ok {
				t.Errorf("%s: %v %+v", r.seed, err, p)
			}
			continue
		}
		var de *domain.Error
		if !errors.As(err, &de) || de.Field != r.field || de.Fix == "" {
			t.Errorf("%s: got %v, want a refusal of %s", r.seed, err, r.field)
		}
	}
	if err := func() error { _, err := tl.Validate(json.RawMessage(`{` + base + `,"outcome":"x"}`)); return err }(); err != nil {
		var de *domain.Error
		if !errors.As(err, &de) || !slices.Equal(de.Valid, delegation.ReconcileOutcomes()) {
			t.Errorf("outcome refusal lists %v", de.Valid)
		}
	}
}

// TestJobValidate: job takes nothing or one job id.
func TestJobValidate(t *testing.T) {
	tl := byName(nil)[tools.NameJob]
	for _, ok := range []string{``, `{}`, `null`, `{"jobID":"job_1"}`, `{"jobID":null}`} {
		if _, err := tl.Validate(json.RawMessage(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for args, field := range map[string]string{`{"jobID":""}`: "jobID", `{"session":"s"}`: "session", `{"jobID":1}`: "jobID"} {
		_, err := tl.Validate(json.RawMessage(args))
		var de *domain.Error
		if !errors.As(err, &de) || de.Field != field {
			t.Errorf("%s: %v", args, err)
		}
	}
}

// TestDeclarations: task is Delegating, job ReadOnly, job_reconcile and session_message
// SideEffecting and never replayed (docs/delegation.md, "The tools").
func TestDeclarations(t *testing.T) {
	want := map[string]tools.Policy{
		tools.NameTask:           {SideEffect: tools.Delegating, Replay: tools.Never, Concurrency: tools.Exclusive},
		tools.NameJob:            {SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe},
		tools.NameJobReconcile:   {SideEffect: tools.SideEffecting, Replay: tools.Never, Concurrency: tools.Exclusive},
		tools.NameSessionMessage: {SideEffect: tools.SideEffecting, Replay: tools.Never, Concurrency: tools.Exclusive},
	}
	var decls []tools.Declaration
	for name, tl := range byName(nil) {
		d := tl.Declaration()
		decls = append(decls, d)
		if d.Policy != want[name] || d.Mixed() || tl.WritesWorkspace() || tl.Spec().Name != name {
			t.Errorf("%s: %+v", name, d)
		}
	}
	if _, err := tools.NewRegistry(decls...); err != nil || len(decls) != 4 {
		t.Fatalf("registry: %v (%d tools)", err, len(decls))
	}
}

// session_message's arguments: target and message required, typed, bounded; nothing else.
func TestMessageArguments(t *testing.T) {
	tl := byName(nil)[tools.NameSessionMessage]
	for _, c := range []struct {
		args, field string
	}{
		{`{"target":"ses_b","message":"the API moved"}`, ""},
		{`{"target":"ses_b","message":"the API moved","title":"API"}`, ""},
		{`{"message":"x"}`, "target"},
		{`{"target":"ses_b"}`, "message"},
		{`{"target":"","message":"x"}`, "target"},
		{`{"target":"ses_b","message":""}`, "message"},
		{`{"target":"ses_b","message":"x","prompt":"y"}`, "prompt"},
		{`{"target":"ses_b","message":"` + strings.Repeat("x", 16<<10+1) + `"}`, "message"},
	} {
		_, err := tl.Validate(json.RawMessage(c.args))
		var de *domain.Error
		if c.field == "" && err != nil || c.field != "" && (!errors.As(err, &de) || de.Field != c.field || de.Fix == "") {
			t.Errorf("%.60s: got %v, want a refusal of %q", c.args, err, c.field)
		}
	}
}
