package delegation_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/events"
)

func contract() events.DelegationContract {
	return events.DelegationContract{Agent: "explorer", Objective: "Find the receipt gap",
		Deliverable: "Call chain and gap", Instructions: "Read only", SuccessEvidence: "Exact files and symbols"}
}

var roster = []string{"explorer"}

// TestCheck: each rule of seeds 002 §4 is a row; a refusal names its field and code.
func TestCheck(t *testing.T) {
	type row struct {
		seed  string
		edit  func(*delegation.Request)
		code  string
		field string
	}
	rows := []row{
		{"a complete contract for a delegate is accepted", func(*delegation.Request) {}, "", ""},
		{"objective is required and not empty", func(r *delegation.Request) { r.Contract.Objective = "" }, domain.CodeInvalidArgument, "objective"},
		{"objective of spaces is empty", func(r *delegation.Request) { r.Contract.Objective = " \n\t" }, domain.CodeInvalidArgument, "objective"},
		{"deliverable is required", func(r *delegation.Request) { r.Contract.Deliverable = "  " }, domain.CodeInvalidArgument, "deliverable"},
		{"instructions are required", func(r *delegation.Request) { r.Contract.Instructions = "" }, domain.CodeInvalidArgument, "instructions"},
		{"success_evidence is required", func(r *delegation.Request) { r.Contract.SuccessEvidence = "" }, domain.CodeInvalidArgument, "success_evidence"},
		{"required also when continuing by task_id", func(r *delegation.Request) {
			r.TaskID, r.Contract.Instructions = "ses_child", " "
		}, domain.CodeInvalidArgument, "instructions"},
		{"a complete continuation is accepted", func(r *delegation.Request) { r.TaskID = "ses_child" }, "", ""},
		{"a blank task_id is refused", func(r *delegation.Request) { r.TaskID = "  " }, domain.CodeInvalidArgument, "task_id"},
		{"agent is required", func(r *delegation.Request) { r.Contract.Agent = "" }, domain.CodeInvalidArgument, "agent"},
		{"agent must be in the parent agent's delegate roster", func(r *delegation.Request) { r.Contract.Agent = "build" }, delegation.CodeNotDelegate, "agent"},
		{"scope, constraints and dependencies are optional", func(r *delegation.Request) {
			r.Contract.Scope = &events.ContractScope{Include: []string{"a"}, Exclude: []string{"b"}}
			r.Contract.Constraints = &events.ContractConstraints{Must: []string{"c"}, MustNot: []string{"d"}}
			r.Contract.Dependencies = []string{"e"}
		}, "", ""},
		{"a blank scope entry is refused", func(r *delegation.Request) {
			r.Contract.Scope = &events.ContractScope{Include: []string{"a", " "}}
		}, domain.CodeInvalidArgument, "scope.include[1]"},
		{"a blank must_not entry is refused", func(r *delegation.Request) {
			r.Contract.Constraints = &events.ContractConstraints{MustNot: []string{""}}
		}, domain.CodeInvalidArgument, "constraints.must_not[0]"},
		{"a blank dependency is refused", func(r *delegation.Request) { r.Contract.Dependencies = []string{"x", ""} }, domain.CodeInvalidArgument, "dependencies[1]"},
		{"background reportDelivery may be nextStep", func(r *delegation.Request) { r.Background, r.ReportDelivery = true, "nextStep" }, "", ""},
		{"background reportDelivery may be quiet", func(r *delegation.Request) { r.Background, r.ReportDelivery = true, "quiet" }, "", ""},
		{"background reportDelivery is only nextStep or quiet", func(r *delegation.Request) { r.Background, r.ReportDelivery = true, "later" }, domain.CodeInvalidArgument, "reportDelivery"},
		{"a foreground task with reportDelivery is refused", func(r *delegation.Request) { r.ReportDelivery = "nextStep" }, domain.CodeInvalidArgument, "reportDelivery"},
		{"invalid UTF-8 is refused", func(r *delegation.Request) { r.Contract.Objective = "a\xff" }, domain.CodeInvalidArgument, "objective"},
	}
	for _, r := range rows {
		t.Run(r.seed, func(t *testing.T) {
			req := delegation.Request{Contract: contract()}
			r.edit(&req)
			err := delegation.Check(req, roster)
			if r.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Code() != r.code || de.Field != r.field || de.Fix == "" || de.Message == "" {
				t.Fatalf("got %v (%#v), want %s on %s", err, err, r.code, r.field)
			}
		})
	}
}

// TestCheckRosterListed: the roster refusal lists the roster, so the model can choose again.
func TestCheckRosterListed(t *testing.T) {
	c := contract()
	c.Agent = "deep"
	err := delegation.Check(delegation.Request{Contract: c}, []string{"explorer", "reviewer"})
	var de *domain.Error
	if !errors.As(err, &de) || !slices.Equal(de.Valid, []string{"explorer", "reviewer"}) ||
		!strings.Contains(de.Fix, "explorer, reviewer") || de.ID != "deep" {
		t.Fatalf("got %#v", err)
	}
	err = delegation.Check(delegation.Request{Contract: contract()}, nil)
	if !errors.As(err, &de) || !strings.Contains(de.Fix, "no delegates") {
		t.Fatalf("empty roster: %v", err)
	}
}

// TestNormalize: texts trimmed, empty lists dropped, and the delivery decided: background
// defaults to nextStep (seeds 002 §4), foreground is an attached quiet job (§6).
func TestNormalize(t *testing.T) {
	c := contract()
	c.Objective = "  Find it \n"
	c.Scope = &events.ContractScope{Include: []string{" a "}}
	c.Constraints = &events.ContractConstraints{}
	got := delegation.Normalize(delegation.Request{Contract: c, Background: true, TaskID: " ses_1 "})
	if got.Contract.Objective != "Find it" || got.Contract.Scope.Include[0] != "a" || got.Contract.Constraints != nil ||
		got.ReportDelivery != events.DeliveryNextStep || got.TaskID != "ses_1" {
		t.Fatalf("got %+v", got)
	}
	if got := delegation.Normalize(delegation.Request{Contract: c, Background: true, ReportDelivery: "quiet"}); got.ReportDelivery != "quiet" {
		t.Fatalf("quiet kept: %q", got.ReportDelivery)
	}
	fg := delegation.Normalize(delegation.Request{Contract: c})
	if fg.ReportDelivery != "" || fg.Delivery() != events.DeliveryQuiet || delegation.Check(fg, roster) != nil {
		t.Fatalf("foreground: %+v", fg)
	}
	if got.Delivery() != events.DeliveryNextStep || delegation.Check(got, roster) != nil {
		t.Fatalf("background: %+v", got)
	}
}

// TestLegacy: every argument seeds 002 §4 names as refused says what to send instead.
func TestLegacy(t *testing.T) {
	for name, want := range map[string]string{"description": "objective", "prompt": "instructions",
		"subagent_type": "agent", "category": "agent", "model": "remove model", "effort": "remove effort",
		"load_skills": "remove load_skills", "contract": "top level"} {
		e, ok := delegation.Legacy(name)
		if !ok || e.Field != name || e.Code() != domain.CodeInvalidArgument || !strings.Contains(e.Fix, want) {
			t.Errorf("%s: %v %v", name, e, ok)
		}
	}
	if _, ok := delegation.Legacy("objective"); ok {
		t.Error("objective is not legacy")
	}
}
