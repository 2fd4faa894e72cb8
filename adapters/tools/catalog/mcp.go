package catalog

import (
	"context"

	"github.com/zuno-run/zuno/adapters/mcp"
	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/bounds"
	"github.com/zuno-run/zuno/events"
)

// MCP is the catalogue's MCP servers (docs/mcp.md): the configured servers, how many connect
// at once (concurrency.mcp_connections), and where their lifecycle is recorded.
type MCP struct {
	Servers     []mcp.Server
	Connections int
	// Record, when set, records the lifecycle instead of the work commands (zuno debug agent
	// keeps it for its report).
	Record func(context.Context, events.MCPLifecycle) error
}

// mcpRecorder is the work commands' recorder of the lifecycle (commands.WorkCommands);
// without it (a report that only reads the declarations) nothing is recorded.
type mcpRecorder interface {
	RecordMCP(context.Context, events.MCPLifecycle) error
}

// openMCP connects the session's servers through the same sandbox its shell runs under: a
// refused sandbox refuses every stdio server (fail closed). nil when none is configured.
func (c *Catalog) openMCP(req turn.ToolsRequest, artifacts string, sb adsandbox.Session, refused error) *mcp.Pool {
	if len(c.MCP.Servers) == 0 {
		return nil
	}
	rt := &mcp.Runtime{Servers: c.MCP.Servers, Connections: c.MCP.Connections, Launcher: sb.Launcher, Refused: refused,
		Dir: req.Dir, EnvExclude: c.EnvExclude, SessionID: req.SessionID,
		Caps: mcp.Caps{MaxBytes: c.MaxBytes, MaxLines: c.MaxLines, ArtifactDir: artifacts,
			MaxArtifactBytes: bounds.ArtifactBytes.Effective(c.MaxArtifactBytes)}}
	if r, ok := c.Work.(mcpRecorder); ok {
		rt.Record = r.RecordMCP
	}
	if c.MCP.Record != nil {
		rt.Record = c.MCP.Record
	}
	if req.Replay {
		rt.Record = nil // a replay writes nothing (docs/replay.md)
	}
	return rt.Connect(context.Background())
}

// MCPPool is a surface's connected servers (nil when none is configured): zuno debug agent
// reads their diagnostics.
type MCPPool interface {
	MCP() *mcp.Pool
}

func (s *surface) MCP() *mcp.Pool { return s.mcp }

// closeMCP shuts the surface's servers down and waits for their clean-up (the pool keeps
// what did not end cleanly).
func (s *surface) closeMCP() { s.mcp.Close() }
