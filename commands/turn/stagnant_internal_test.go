package turn

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// An input delivered into the turn (a steering message, a report) is news: the next read
// starts the count again, even with the same fingerprint. A failed read carries no
// observation.
func TestStagnationResetsOnInput(t *testing.T) {
	var s stagnation
	read := func(id, outcome string) *events.ErrorInfo {
		s.staged(events.ToolSettled{CallID: id, Tool: "plan_get", Outcome: outcome, Metadata: events.ToolMetadata{Details: json.RawMessage(`{"fingerprint":"sha256:x"}`)}})
		return s.observe([]model.ToolCall{{ID: id, Name: "plan_get"}})
	}
	read("g1", "completed")
	read("g2", "completed")
	s.staged(events.UserMessageAppended{MessageID: "msg_steer"})
	if info := read("g3", "completed"); info != nil || s.count != 0 {
		t.Fatalf("the step with an input counted: %d %+v", s.count, info)
	}
	read("g4", "completed")
	read("g5", "error")
	if s.count != 0 {
		t.Fatalf("a failed read counted: %d", s.count)
	}
	read("g6", "completed")
	read("g7", "completed")
	if info := read("g8", "completed"); info == nil || info.Code != CodeStagnantToolLoop {
		t.Fatalf("three identical reads did not stop: %+v", info)
	}
}
