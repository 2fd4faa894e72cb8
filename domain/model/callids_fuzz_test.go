package model_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
)

// Provider ids come from the server: whatever it sends, every call gets an id unique in the
// session, made only of [A-Za-z0-9_-], and the provider's id is kept as sent.
func FuzzAssignCallIDs(f *testing.F) {
	f.Add("call_0", "call_0", "", "used")
	f.Add("a/b", "..", "x\ny", "")
	f.Add(model.RuntimeCallID("r", 1), "", "call_0", model.RuntimeCallID("r", 0))
	f.Fuzz(func(t *testing.T, a, b, c, used string) {
		calls := []model.ToolCall{{ProviderID: a}, {ProviderID: b}, {ProviderID: c}}
		model.AssignCallIDs("r", calls, func(id string) bool { return id == used })
		seen := map[string]bool{}
		for i, call := range calls {
			if call.ID == "" || call.ID == used || seen[call.ID] || strings.Trim(call.ID, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" || len(call.ID) > 64 {
				t.Fatalf("call %d got id %q (used %q, seen %v)", i, call.ID, used, seen)
			}
			if call.ProviderID != []string{a, b, c}[i] {
				t.Fatalf("provider id changed")
			}
			seen[call.ID] = true
		}
	})
}
