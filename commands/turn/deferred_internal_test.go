package turn

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// fakeTool is a tool that only declares itself; deferred marks it as an MCP tool would.
type fakeTool struct {
	name     string
	deferred bool
	offered  *[]string
}

func (f fakeTool) Declaration() tools.Declaration { return tools.Declaration{Name: f.name} }
func (f fakeTool) Spec() tools.Spec               { return tools.Spec{Name: f.name} }
func (f fakeTool) WritesWorkspace() bool          { return false }
func (f fakeTool) Validate(json.RawMessage) (tools.Parsed, error) {
	return tools.Parsed{}, nil
}
func (f fakeTool) Execute(context.Context, tools.Invocation) tools.Result { return tools.Result{} }
func (f fakeTool) Deferred() bool                                         { return f.deferred }
func (f fakeTool) Offer(names []string)                                   { *f.offered = names }

func settledSearch(outcome string, activated ...string) events.ToolSettled {
	d, _ := json.Marshal(tools.SearchDetails{Query: "q", Activated: activated})
	return events.ToolSettled{Tool: tools.NameToolSearch, Outcome: outcome, Metadata: events.ToolMetadata{Details: d}}
}

// The seeds' sentence as a table: offered MCP tools keep their implementation but their full
// schemas are not sent; tool_search appears conditionally; its matches join the visible tools
// from the next request.
func TestDeferral(t *testing.T) {
	var searchOffered []string
	search := fakeTool{name: tools.NameToolSearch, offered: &searchOffered}
	read := fakeTool{name: "read"}
	echo := fakeTool{name: "mcp_s_echo", deferred: true}
	sum := fakeTool{name: "mcp_s_sum", deferred: true}
	runtime := []Tool{read, echo, sum, search}
	for _, tc := range []struct {
		name     string
		offered  []Tool
		config   map[string]bool
		history  []events.Payload
		wantSent []string
		wantFind []string
	}{
		{"no deferred tool: no tool_search, everything sent", []Tool{read}, nil, nil, []string{"read"}, nil},
		{"deferred tools held back, tool_search offered", []Tool{read, echo, sum}, nil, nil,
			[]string{"read", "tool_search"}, []string{"mcp_s_echo", "mcp_s_sum"}},
		{"only the offered deferred tools can be found", []Tool{read, echo}, nil, nil,
			[]string{"read", "tool_search"}, []string{"mcp_s_echo"}},
		{"a completed search activates its matches", []Tool{read, echo, sum}, nil,
			[]events.Payload{settledSearch("completed", "mcp_s_echo")}, []string{"read", "mcp_s_echo", "tool_search"}, []string{"mcp_s_echo", "mcp_s_sum"}},
		{"a failed search activates nothing", []Tool{read, echo, sum}, nil,
			[]events.Payload{settledSearch("error", "mcp_s_echo")}, []string{"read", "tool_search"}, []string{"mcp_s_echo", "mcp_s_sum"}},
		{"another tool's details activate nothing", []Tool{read, echo}, nil,
			[]events.Payload{events.ToolSettled{Tool: "read", Outcome: "completed", Metadata: events.ToolMetadata{Details: json.RawMessage(`{"activated":["mcp_s_echo"]}`)}}},
			[]string{"read", "tool_search"}, []string{"mcp_s_echo"}},
		{"an activated tool the agent is not offered stays out", []Tool{read, echo}, nil,
			[]events.Payload{settledSearch("completed", "mcp_s_sum")}, []string{"read", "tool_search"}, []string{"mcp_s_echo"}},
		{"tool_search disabled: nothing deferred", []Tool{read, echo}, map[string]bool{"tool_search": false}, nil,
			[]string{"read", "mcp_s_echo"}, nil},
		{"tool_search already allowlisted is offered once", []Tool{read, echo, search}, nil, nil,
			[]string{"read", "tool_search"}, []string{"mcp_s_echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			searchOffered = nil
			var d deferral
			for _, p := range tc.history {
				d.observe(p)
			}
			var decls []prompt.ToolDecl
			for _, tl := range d.offer(slices.Clone(tc.offered), runtime, tc.config) {
				decls = append(decls, prompt.ToolDecl{Tool: tl.Spec()})
			}
			var sent []string
			for _, x := range d.visible(decls) {
				sent = append(sent, x.Tool.Name)
			}
			if !slices.Equal(sent, tc.wantSent) {
				t.Errorf("sent %v, want %v", sent, tc.wantSent)
			}
			if !slices.Equal(searchOffered, tc.wantFind) {
				t.Errorf("tool_search may find %v, want %v", searchOffered, tc.wantFind)
			}
		})
	}
}

// An activation recorded during the turn counts from the next request on.
func TestDeferralActivatesNextStep(t *testing.T) {
	var found []string
	var d deferral
	offered := d.offer([]Tool{fakeTool{name: "mcp_s_echo", deferred: true}}, []Tool{fakeTool{name: tools.NameToolSearch, offered: &found}}, nil)
	var decls []prompt.ToolDecl
	for _, tl := range offered {
		decls = append(decls, prompt.ToolDecl{Tool: tl.Spec()})
	}
	if n := len(d.visible(decls)); n != 1 {
		t.Fatalf("step 1 sends %d tools, want tool_search alone", n)
	}
	d.observe(settledSearch("completed", "mcp_s_echo"))
	if n := len(d.visible(decls)); n != 2 {
		t.Fatalf("step 2 sends %d tools, want tool_search and the echo", n)
	}
}

// BenchmarkVisibleTools is what deferral adds to each request: filtering the declarations.
// The baseline is the same surface with nothing deferred (the path before tool_search).
func BenchmarkVisibleTools(b *testing.B) {
	var found []string
	core := []Tool{fakeTool{name: "read"}, fakeTool{name: "glob"}, fakeTool{name: "grep"}, fakeTool{name: "write"},
		fakeTool{name: "shell"}, fakeTool{name: "bg"}}
	var mcpTools []Tool
	for i := range 200 {
		mcpTools = append(mcpTools, fakeTool{name: "mcp_s_tool" + string(rune('a'+i%26)) + string(rune('a'+i/26)), deferred: true})
	}
	runtime := append(slices.Clone(core), fakeTool{name: tools.NameToolSearch, offered: &found})
	for _, bc := range []struct {
		name    string
		offered []Tool
	}{{"baseline 206 tools nothing deferred", append(slices.Clone(core), plain(mcpTools)...)},
		{"206 tools 200 deferred 5 activated", append(slices.Clone(core), mcpTools...)}} {
		b.Run(bc.name, func(b *testing.B) {
			var d deferral
			for _, t := range mcpTools[:5] {
				d.observe(settledSearch("completed", t.Declaration().Name))
			}
			var decls []prompt.ToolDecl
			for _, t := range d.offer(slices.Clone(bc.offered), runtime, nil) {
				decls = append(decls, prompt.ToolDecl{Tool: t.Spec()})
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = d.visible(decls)
			}
		})
	}
}

// plain is ts without their deferral.
func plain(ts []Tool) []Tool {
	out := make([]Tool, len(ts))
	for i, t := range ts {
		f := t.(fakeTool)
		f.deferred = false
		out[i] = f
	}
	return out
}
