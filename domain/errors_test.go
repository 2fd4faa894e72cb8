package domain_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
)

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  *domain.Error
		want string
	}{
		{domain.Invalid("steps[1].title", "is empty", "give a short non-empty title"),
			"invalid_argument: steps[1].title: is empty; give a short non-empty title"},
		{domain.StaleRevision("plan", 3, 5, "plan_get"),
			"stale_revision: expected_revision is 3 but the plan is at revision 5; call plan_get, check the current state, and retry with expected_revision 5 if the change still applies"},
		{domain.NewError(domain.CodeNoSubPlan, "there is no sub-plan", ""), "no_sub_plan: there is no sub-plan"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	stale := domain.StaleRevision("plan", 3, 5, "plan_get")
	if stale.Expected != 3 || stale.Current != 5 || stale.Code() != domain.CodeStaleRevision {
		t.Errorf("%+v", stale)
	}
}

func TestHasCode(t *testing.T) {
	err := fmt.Errorf("handler: %w", domain.NewError(domain.CodeTerminalState, "done", "stop"))
	if !domain.HasCode(err, domain.CodeTerminalState) || domain.HasCode(err, domain.CodeNoPlan) || domain.HasCode(nil, domain.CodeNoPlan) {
		t.Error("HasCode")
	}
	// The same method as the events package's typed errors, for code-agnostic reporting.
	var _ interface{ Code() string } = (*domain.Error)(nil)
}

func TestCheckTitle(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"  Fix it  ", "Fix it", true},
		{strings.Repeat("界", domain.MaxTitleRunes), strings.Repeat("界", domain.MaxTitleRunes), true},
		{strings.Repeat("界", domain.MaxTitleRunes+1), "", false},
		{"", "", false},
		{" \t ", "", false},
		{"two\nlines", "", false},
		{"bell\a", "", false},
		{"bad \xff utf8", "", false},
	}
	for _, tt := range tests {
		got, err := domain.CheckTitle("title", tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("CheckTitle(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && (err.Field != "title" || err.Code() != domain.CodeInvalidArgument) {
			t.Errorf("CheckTitle(%q): %+v", tt.in, err)
		}
	}
}

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{
		"step-1": true, "todo_9": true, "ses_01J": true, "界": true,
		"": false, " a": false, "a b": false, "a\tb": false, "\xff": false, strings.Repeat("a", domain.MaxIDRunes+1): false,
	} {
		if err := domain.CheckID("id", id); (err == nil) != ok {
			t.Errorf("CheckID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}
