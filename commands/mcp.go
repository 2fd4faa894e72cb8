package commands

import (
	"context"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/events"
)

// MCPStream holds the lifecycle of a session's MCP server connections (docs/mcp.md): a
// stream of its own, because a server starts, fails and is cleaned up whenever it does, and
// an append to the session stream, whose revision the running turn owns, would make that turn
// fail session_busy.
func MCPStream(sessionID string) string { return "mcp-" + sessionID }

// mcpLog is the stream's state: nothing is decided from it, every step is recorded as seen.
type mcpLog struct{}

func (*mcpLog) Evolve(events.Payload) error { return nil }

// RecordMCP appends one lifecycle step to its session's MCP stream. Each step is a command of
// its own with a fresh id: a step is an observation of this process, not a request another
// could repeat.
func (h *Handlers) RecordMCP(ctx context.Context, e events.MCPLifecycle) error {
	x := execution[*mcpLog]{meta: Meta{CommandID: "mcp/" + uuid.NewString(), Actor: "host", CorrelationID: e.SessionID},
		stream: MCPStream(e.SessionID), newState: func() *mcpLog { return &mcpLog{} },
		decide: func(*mcpLog) ([]events.Payload, error) { return []events.Payload{e}, nil },
		store:  h.store, registry: h.registry, clock: h.clock}
	var err error
	if x.digest, err = Digest(e.EventType(), e); err != nil {
		return err
	}
	_, _, err = x.run(ctx)
	return err
}

// RecordMCP records an MCP lifecycle step (the catalogue's recorder).
func (w WorkCommands) RecordMCP(ctx context.Context, e events.MCPLifecycle) error {
	return w.h.RecordMCP(ctx, e)
}
