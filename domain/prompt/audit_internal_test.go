package prompt

import (
	"testing"

	"github.com/zuno-run/zuno/events"
)

// The Auditor's assembly digest, the receipt encoded without its header and the header's
// members spliced in, is AssemblyDigest of the receipt with its header, whatever the
// receipt's other members hold: a model that spells the members it stands in for, HTML
// characters, no sections or tools, null and empty lists, the optional members set. (A
// header with fewer section parts than sections fails Verify, so no state holds one.)
func TestAuditorAssemblyDigestIsAssemblyDigest(t *testing.T) {
	sec := events.PromptSection{ID: "s <1>", Lane: "agent_role", Role: "system", Bytes: 3, SHA256: "ab"}
	part := events.PromptPart{Kind: PartSection, Section: "s <1>", Role: "system", Bytes: 3, SHA256: "ab"}
	tool := events.PromptPart{Kind: PartTool, Name: "t&", Bytes: 9, SHA256: "cd"}
	conv := events.PromptPart{Kind: PartMessage, Role: "user", Bytes: 2, SHA256: "ef"}
	headers := []struct {
		sections []events.PromptSection
		parts    []events.PromptPart
		tools    []events.PromptPart
	}{
		{[]events.PromptSection{sec}, []events.PromptPart{part}, []events.PromptPart{tool}},
		{nil, nil, nil},
		{[]events.PromptSection{}, []events.PromptPart{}, []events.PromptPart{}},
		{[]events.PromptSection{sec, sec}, []events.PromptPart{part, part}, nil},
		{nil, []events.PromptPart{part}, []events.PromptPart{tool}},
	}
	receipts := []Receipt{
		{SchemaVersion: 1, Estimator: Estimator, Model: "m"},
		{SchemaVersion: 1, Estimator: Estimator, Model: `x","sections":null,"messages":null,"tools":null,"y`, ContextWindow: 5, MaxTokens: 7},
		{Model: "<&> \u2028", EstimatedInputTokens: 9, ToolChoiceMode: "tool", ToolChoiceName: "t&", ConversationDigest: "01",
			WorkState: &events.PromptWorkState{Bytes: 3}, Hooks: events.PromptHooks{Ran: []string{"h"}},
			AssemblyDigest: "a", ActualDigest: "b", LoggedParts: 2, Blobs: map[string]string{"ab": "x"}},
	}
	for hi, h := range headers {
		members, err := headerMembers(h.sections, h.parts, h.tools)
		if err != nil {
			t.Fatal(err)
		}
		st := &audited{header: members}
		for ri, stored := range receipts {
			stored.Messages = []events.PromptPart{conv}
			stored.HeaderBase = &events.PromptHeaderBase{ReceiptID: "r", Digest: "d"}
			expanded := stored
			expanded.Sections, expanded.Tools, expanded.HeaderBase = h.sections, h.tools, nil
			expanded.Messages = append(append([]events.PromptPart(nil), h.parts...), conv)
			if h.parts == nil && len(h.sections) == 0 {
				expanded.Messages = nil // what RestoreHeader leaves of a header with no section parts, before the conversation
			}
			want, err := AssemblyDigest(expanded)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.assemblyDigest(stored); got != want {
				t.Errorf("header %d, receipt %d: %s, AssemblyDigest %s", hi, ri, got, want)
			}
		}
	}
}
