package prompt

import (
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
)

// A History validates only what is new: after each step its conversation check has walked
// exactly the conversation so far, never more than once (a check reset between steps would
// make every step walk the whole history again), and a fault in a new message is still found.
func TestHistoryChecksOnlyNewMessages(t *testing.T) {
	h := &History{}
	conv := []model.Message{{Role: model.RoleUser, Text: "go"}}
	in := Input{Model: "m", Agent: AgentPrompt{Name: "build", Source: "builtin:build", Trust: TrustHost, Text: "You build."}, History: h}
	for step := range 5 {
		in.Conversation = conv
		if _, err := Assemble(in); err != nil {
			t.Fatal(err)
		}
		if got := h.check.Checked(); got != len(conv) {
			t.Fatalf("step %d: the check holds %d of %d messages", step, got, len(conv))
		}
		id := fmt.Sprintf("c%d", step)
		conv = append(conv, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "read", Arguments: "{}"}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, Text: "ok"})
	}
	in.Conversation = append(conv, model.Message{Role: model.RoleTool, ToolCallID: "c0", Text: "again"})
	if _, err := Assemble(in); err == nil {
		t.Fatal("a result for an answered call was accepted")
	}
}
