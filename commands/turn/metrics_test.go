package turn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
)

// The metrics count what a turn recorded: requests by result, tool calls by outcome, tokens,
// and the finished turn's reason.
func TestMetricsCountRecordedEvents(t *testing.T) {
	h := newHarness(t)
	reg := prometheus.NewRegistry()
	d := &turn.Driver{Store: h.store, Registry: h.registry, Clock: commands.SystemClock{}, Metrics: turn.NewMetrics(reg)}
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}, hold: time.Millisecond}
	p := script(t, `{"turns":[
		{"toolCalls":[{"id":"a","name":"look","arguments":{"n":1}},{"id":"b","name":"look","arguments":{}},{"id":"c","name":"gone","arguments":{}}],
		 "usage":{"inputTokens":100,"outputTokens":7}},
		{"text":"done","usage":{"inputTokens":150,"outputTokens":3}}]}`)
	if _, err := d.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: buildAgent("look"), Provider: p,
		ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{look}}); err != nil {
		t.Fatal(err)
	}
	p2 := script(t, `{"turns":[{"error":{"code":"transport","message":"reset"}}]}`)
	if _, err := d.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "again", Agent: buildAgent("look"), Provider: p2,
		ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{look}}); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP zuno_provider_requests_total Provider requests by provider and result: completed, or the failure's code.
# TYPE zuno_provider_requests_total counter
zuno_provider_requests_total{provider="scripted",result="completed"} 2
zuno_provider_requests_total{provider="scripted",result="transport"} 1
# HELP zuno_tool_calls_total Tool calls by tool and outcome (completed, error, blocked, uncertain, cancelled).
# TYPE zuno_tool_calls_total counter
zuno_tool_calls_total{outcome="blocked",tool="gone"} 1
zuno_tool_calls_total{outcome="blocked",tool="look"} 1
zuno_tool_calls_total{outcome="completed",tool="look"} 1
# HELP zuno_turns_total Finished turns by reason (completed, step_limit, failed, interrupted).
# TYPE zuno_turns_total counter
zuno_turns_total{reason="completed"} 1
zuno_turns_total{reason="failed"} 1
# HELP zuno_model_tokens_total Tokens the providers reported, by provider and kind (input, output).
# TYPE zuno_model_tokens_total counter
zuno_model_tokens_total{kind="input",provider="scripted"} 250
zuno_model_tokens_total{kind="output",provider="scripted"} 10
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"zuno_provider_requests_total", "zuno_tool_calls_total", "zuno_turns_total", "zuno_model_tokens_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(reg, "zuno_tool_call_seconds"); n != 1 {
		t.Fatalf("tool call time series: %d", n)
	}
}
