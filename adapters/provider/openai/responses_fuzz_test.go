package openai

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/zuno-run/zuno/adapters/provider/internal/wire"
	"github.com/zuno-run/zuno/domain/model"
)

// A Responses API stream event comes from the server: any event the SDK decodes must map to
// model events or an error without a panic, and a call's end always carries arguments.
func FuzzResponsesEvents(f *testing.F) {
	f.Add([]byte(`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","call_id":"c","name":"n","arguments":""}}`))
	f.Add([]byte(`{"type":"response.output_item.done","item":{"type":"reasoning","id":"rs","summary":[{"text":"s"}],"encrypted_content":"e"}}`))
	f.Add([]byte(`{"type":"response.completed","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`))
	f.Add([]byte(`{"type":"response.failed","response":{"error":{"code":"server_error","message":"m"}}}`))
	f.Add([]byte(`{"type":"error","code":"rate_limit_exceeded","message":"slow"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev responses.ResponseStreamEventUnion
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		var st responseState
		evs, err := st.events(ev, wire.Endpoint{Provider: "openai"})
		if err != nil && len(evs) != 0 && ev.Type != "response.created" {
			t.Fatalf("events %v with error %v", evs, err)
		}
		for _, e := range evs {
			if end, ok := e.(model.ToolCallEnd); ok && end.Arguments == "" {
				t.Fatalf("a call ended without arguments: %+v", end)
			}
		}
	})
}
