package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	zmcp "github.com/zuno-run/zuno/adapters/mcp"
	dtools "github.com/zuno-run/zuno/domain/tools"
)

// tool_search finds, among the tools the turn offered, those whose compact metadata matches,
// best first; it is read-only and safe to replay, and it records what it activated.
func TestToolSearch(t *testing.T) {
	p := connect(t, runtime(t, &recorder{}, self("t", "tools", 20*time.Second)))
	s := zmcp.NewToolSearch(p)
	if d := s.Declaration(); d.Policy != (dtools.Policy{SideEffect: dtools.ReadOnly, Replay: dtools.Safe, Concurrency: dtools.ParallelSafe}) {
		t.Fatalf("tool_search declares %+v", d.Policy)
	}
	for _, tl := range p.Tools() {
		if !dtools.IsDeferred(tl) {
			t.Fatalf("%s does not defer its schema", tl.Declaration().Name)
		}
	}
	s.Offer([]string{"mcp_t_echo", "mcp_t_big", "mcp_t_hang"})
	for _, tc := range []struct {
		query string
		limit int
		want  []string
	}{
		{"echo", 0, []string{"mcp_t_echo"}},
		{"ECHO text", 0, []string{"mcp_t_echo"}},
		{"result", 0, []string{"mcp_t_big"}},              // its description: "A 10 MB result"
		{"mcp_t", 2, []string{"mcp_t_big", "mcp_t_echo"}}, // ties by name, cut to the limit
		{"crash", 0, []string{}},                          // not offered to this agent
		{"nothing like it", 0, []string{}},
	} {
		args := map[string]any{"query": tc.query}
		if tc.limit > 0 {
			args["limit"] = tc.limit
		}
		b, _ := json.Marshal(args)
		res := call(t, context.Background(), s, "call_s", string(b))
		var d dtools.SearchDetails
		if err := json.Unmarshal(res.Metadata.Details, &d); err != nil || res.Outcome != dtools.OutcomeCompleted {
			t.Fatalf("%q: %+v (%v)", tc.query, res, err)
		}
		if !slices.Equal(d.Activated, tc.want) || d.Query != tc.query {
			t.Errorf("%q activated %v, want %v", tc.query, d.Activated, tc.want)
		}
		for _, name := range tc.want {
			if !strings.Contains(res.Output, name) {
				t.Errorf("%q: the output does not name %s: %s", tc.query, name, res.Output)
			}
		}
	}
	for _, bad := range []string{`{}`, `{"query":""}`, `{"query":"x","limit":11}`, `{"query":"x","other":1}`} {
		if _, err := s.Validate([]byte(bad)); err == nil {
			t.Errorf("%s admitted", bad)
		}
	}
}
