package model_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
)

func TestRuntimeCallID(t *testing.T) {
	a, b := model.RuntimeCallID("req", 0), model.RuntimeCallID("req", 1)
	if a != model.RuntimeCallID("req", 0) {
		t.Fatal("a replay derives another id")
	}
	if a == b || a == model.RuntimeCallID("req2", 0) {
		t.Fatal("ids of other calls collide")
	}
	// OpenAI refuses tool call ids over 40 characters; every provider accepts [A-Za-z0-9_-].
	if len(a) > 40 || strings.Trim(a, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		t.Fatalf("id %q is not wire-safe", a)
	}
}

func TestAssignCallIDs(t *testing.T) {
	d := func(i int) string { return model.RuntimeCallID("r", i) }
	tests := []struct {
		name     string
		provider []string // provider ids of one response's calls
		used     []string // ids the session used before
		want     []string
	}{
		{"unique ids kept", []string{"call_a", "toolu_1"}, nil, []string{"call_a", "toolu_1"}},
		{"missing ids derived", []string{"", ""}, nil, []string{d(0), d(1)}},
		{"used in the session before: derived", []string{"call_0"}, []string{"call_0"}, []string{d(0)}},
		{"repeated within the response: all copies derived", []string{"x", "y", "x"}, nil, []string{d(0), "y", d(2)}},
		{"slash", []string{"a/b"}, nil, []string{d(0)}},
		{"dot dot", []string{".."}, nil, []string{d(0)}},
		{"space", []string{"a b"}, nil, []string{d(0)}},
		{"newline", []string{"a\nb"}, nil, []string{d(0)}},
		{"non-ASCII", []string{"cäll"}, nil, []string{d(0)}},
		{"65 characters", []string{strings.Repeat("a", 65)}, nil, []string{d(0)}},
		{"64 characters kept", []string{strings.Repeat("a", 64)}, nil, []string{strings.Repeat("a", 64)}},
		{"provider id equal to another call's derived id gives way", []string{"", d(0)}, nil, nil},
		{"derived id already used in the session is derived again", []string{""}, []string{d(0)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := make([]model.ToolCall, len(tt.provider))
			for i, p := range tt.provider {
				calls[i] = model.ToolCall{ID: "key", ProviderID: p, Name: "ls"}
			}
			model.AssignCallIDs("r", calls, func(id string) bool { return slices.Contains(tt.used, id) })
			seen := map[string]bool{}
			for i, c := range calls {
				if c.ProviderID != tt.provider[i] {
					t.Errorf("call %d provider id %q changed", i, c.ProviderID)
				}
				if seen[c.ID] || slices.Contains(tt.used, c.ID) || c.ID == "" {
					t.Errorf("call %d id %q is not unique in the session", i, c.ID)
				}
				seen[c.ID] = true
				if tt.want != nil && c.ID != tt.want[i] {
					t.Errorf("call %d id %q, want %q", i, c.ID, tt.want[i])
				}
			}
		})
	}
}

func TestWireIDs(t *testing.T) {
	var w model.WireIDs
	got := w.Calls([]model.ToolCall{
		{ID: "call_0", Name: "ls"},                    // kept provider id (recorded once)
		{ID: "rt1", ProviderID: "call_0", Name: "ls"}, // per-response id, unique in this message
		{ID: "rt2", Name: "ls"},                       // none given
		{ID: "rt3", ProviderID: "dup", Name: "ls"},    // repeated within the message
		{ID: "rt4", ProviderID: "dup", Name: "ls"},    //
		{ID: "rt5", ProviderID: "a/b", Name: "ls"},    // unusable
	})
	want := []string{"call_0", "call_0", "rt2", "rt3", "rt4", "rt5"}
	if !slices.Equal(got, want) {
		t.Fatalf("wire ids %v, want %v", got, want)
	}
	// Ids repeated across messages are answered per message, the way those servers expect;
	// within one message every call's result names its call unambiguously.
	got2 := w.Calls([]model.ToolCall{{ID: "rt6", ProviderID: "call_0", Name: "ls"}})
	if got2[0] != "call_0" || w.Result("rt6") != "call_0" || w.Result("rt3") != "rt3" || w.Result("rt1") != "call_0" {
		t.Fatalf("results %v %q %q", got2, w.Result("rt6"), w.Result("rt3"))
	}
	if w.Result("unknown") != "unknown" {
		t.Fatal("an unknown id must pass through")
	}
}
