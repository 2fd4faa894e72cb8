package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/zuno-run/zuno/adapters/mcp"
	"github.com/zuno-run/zuno/adapters/tools/catalog"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/events"
)

// mcpWatch connects the MCP servers for zuno debug agent through the catalogue's own runtime
// (the surface the report opens), keeps their lifecycle in memory (the diagnostic creates no
// session, so nothing is recorded), and after the surface's Close, which waits for the
// clean-up, reports each server.
type mcpWatch struct {
	mu        sync.Mutex
	lifecycle []events.MCPLifecycle
	surfaces  []turn.Surface
}

func (w *mcpWatch) record(_ context.Context, e events.MCPLifecycle) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lifecycle = append(w.lifecycle, e)
	return nil
}

// open wraps the catalogue's OpenTools to keep the surfaces it opens.
func (w *mcpWatch) open(open turn.OpenTools) turn.OpenTools {
	return func(req turn.ToolsRequest) (turn.Surface, error) {
		s, err := open(req)
		if err == nil {
			w.mu.Lock()
			w.surfaces = append(w.surfaces, s)
			w.mu.Unlock()
		}
		return s, err
	}
}

// report is each configured, enabled server: what the runtime listed and what failed, with
// whether rep's agent is offered each tool (rep.Tools) or why not (rep.Unavailable).
func (w *mcpWatch) report(servers []mcp.Server, rep queries.AgentReport) []queries.MCPServerReport {
	out := []queries.MCPServerReport{}
	var pool *mcp.Pool
	for _, s := range w.surfaces {
		if p, ok := s.(catalog.MCPPool); ok && p.MCP() != nil {
			pool = p.MCP()
		}
	}
	offered, reasons := map[string]bool{}, map[string]string{}
	for _, t := range rep.Tools {
		offered[t.Name] = true
	}
	for _, u := range rep.Unavailable {
		reasons[u.Tool] = u.Reason
	}
	for _, s := range servers {
		if !s.Enabled {
			continue
		}
		r := queries.MCPServerReport{Name: s.Configured, Transport: s.Transport, Lifecycle: []events.MCPLifecycle{},
			Tools: []queries.MCPToolReport{}, Diagnostics: []queries.MCPDiagnostic{}}
		for _, e := range w.lifecycle {
			if e.Server == s.Configured {
				r.Lifecycle = append(r.Lifecycle, e)
			}
		}
		if pool != nil {
			for _, t := range pool.Tools() {
				if mt, ok := t.(*mcp.Tool); ok && mt.Server() == s.Configured {
					r.Tools = append(r.Tools, toolReport(mt, offered, reasons))
				}
			}
			for _, d := range append(append([]mcp.Diagnostic{}, pool.Diagnostics...), pool.CleanUp...) {
				if d.Server == s.Configured {
					r.Diagnostics = append(r.Diagnostics, queries.MCPDiagnostic{Tool: d.Tool, Phase: d.Phase, Code: d.Code, Message: d.Message, Fix: d.Fix})
				}
			}
		}
		out = append(out, r)
	}
	return out
}

func toolReport(t *mcp.Tool, offered map[string]bool, reasons map[string]string) queries.MCPToolReport {
	spec := t.Spec()
	tr := queries.MCPToolReport{ID: spec.Name, Remote: t.Remote(), Description: spec.Description, Schema: spec.Schema,
		Offered: offered[spec.Name], Reason: reasons[spec.Name]}
	if t.Hints != nil {
		tr.Hints, _ = json.Marshal(t.Hints)
	}
	if !tr.Offered && tr.Reason == "" {
		tr.Reason = "not offered to this agent"
	}
	return tr
}

// printMCP is the table form of the MCP servers.
func printMCP(w io.Writer, servers []queries.MCPServerReport) {
	for _, s := range servers {
		phases := ""
		for _, e := range s.Lifecycle {
			phases += " " + e.Phase
		}
		fmt.Fprintf(w, "mcp:         %s (%s):%s\n", s.Name, s.Transport, phases)
		for _, t := range s.Tools {
			state := "offered"
			if !t.Offered {
				state = "not offered: " + t.Reason
			}
			fmt.Fprintf(w, "  %-30s %s\n", t.ID, state)
		}
		for _, d := range s.Diagnostics {
			tool := ""
			if d.Tool != "" {
				tool = " tool " + d.Tool
			}
			// The server's tool names and stderr are its own words: escaped (printable).
			fmt.Fprintf(w, "  failed%s (%s, %s): %s\n", printable(tool, 0), d.Phase, d.Code, printable(d.Message, 0))
		}
	}
}
