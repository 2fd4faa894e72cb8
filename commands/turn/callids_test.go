package turn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// The runtime owns tool call ids (docs/turns.md, "Tool call ids"): each row is a way servers
// send ids, played by the scripted provider, and every one completes with every call run once.
func TestToolCallIDsAreTheRuntimes(t *testing.T) {
	tests := []struct {
		name string
		// turns are the script's turns before the final text answer.
		turns string
		// want is the recorded runtime id per call, in order: "derived" for the id the runtime
		// derives from the request id and the call's index, else the provider's id kept.
		want []string
		// providerIDs are the provider ids recorded beside derived ones ("" for none).
		providerIDs []string
	}{
		{"unique provider ids are kept",
			`{"toolCalls":[{"id":"call_a","name":"look","arguments":{"n":1}}]},{"toolCalls":[{"id":"call_b","name":"look","arguments":{"n":2}}]}`,
			[]string{"call_a", "call_b"}, []string{"", ""}},
		{"call_0 in every response: the second is derived, step 2 no longer fails",
			`{"toolCalls":[{"id":"call_0","name":"look","arguments":{"n":1}}]},{"toolCalls":[{"id":"call_0","name":"look","arguments":{"n":2}}]}`,
			[]string{"call_0", "derived"}, []string{"", "call_0"}},
		{"no ids at all",
			`{"toolCalls":[{"id":"","name":"look","arguments":{"n":1}},{"name":"look","arguments":{"n":2}}]},{"toolCalls":[{"name":"look","arguments":{"n":3}}]}`,
			[]string{"derived", "derived", "derived"}, []string{"", "", ""}},
		{"an id repeated within one response: both derived, both run",
			`{"toolCalls":[{"id":"x","name":"look","arguments":{"n":1}},{"id":"x","name":"look","arguments":{"n":2}}]}`,
			[]string{"derived", "derived"}, []string{"x", "x"}},
		{"an id with a separator is never a runtime id",
			`{"toolCalls":[{"id":"../a","name":"look","arguments":{"n":1}}]}`,
			[]string{"derived"}, []string{"../a"}},
		{"an id longer than 64 characters is derived",
			`{"toolCalls":[{"id":"` + strings.Repeat("a", 65) + `","name":"look","arguments":{"n":1}}]}`,
			[]string{"derived"}, []string{strings.Repeat("a", 65)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
			p := script(t, `{"turns":[`+tt.turns+`,{"text":"done"}]}`)
			out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: buildAgent("look"),
				Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{look}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != events.FinishCompleted || int(look.calls.Load()) != len(tt.want) {
				t.Fatalf("outcome %+v, %d calls run, want completed and %d", out, look.calls.Load(), len(tt.want))
			}
			var got []events.ToolCall
			var requestOf []string
			settled := map[string]int{}
			for _, e := range h.events(t) {
				switch e := e.(type) {
				case events.ProviderRequest:
					if e.Response != nil {
						for i, c := range e.Response.ToolCalls {
							got = append(got, c)
							requestOf = append(requestOf, model.RuntimeCallID(e.RequestID, i))
						}
					}
				case events.ToolSettled:
					settled[e.CallID]++
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("recorded calls %+v", got)
			}
			for i, c := range got {
				want := tt.want[i]
				if want == "derived" {
					want = requestOf[i]
				}
				if c.ID != want || c.ProviderID != tt.providerIDs[i] || settled[c.ID] != 1 {
					t.Errorf("call %d = id %q provider id %q (settled %d), want %q %q settled once", i, c.ID, c.ProviderID, settled[c.ID], want, tt.providerIDs[i])
				}
			}
		})
	}
}
