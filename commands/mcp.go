package commands

import (
	"context"
	"fmt"
	"sync"

	"github.com/zuno-run/zuno/events"
)

// MCPStream holds the lifecycle of a session's MCP server connections (docs/mcp.md): a
// stream of its own, because a server starts, fails and is cleaned up whenever it does, and
// an append to the session stream, whose revision the running turn owns, would make that turn
// fail session_busy.
func MCPStream(sessionID string) string { return "mcp-" + sessionID }

// MCPLog records the MCP lifecycle of the sessions of one process. Each record is its own
// command, its id drawn from the process's run of the server (Run) and a count, so a retried
// append records once.
type MCPLog struct {
	Store    EventStore
	Registry *events.Registry
	Clock    Clock
	// Run names this process's opening of the tools (a fresh id per surface): the command ids
	// of its records derive from it.
	Run string

	mu sync.Mutex
	n  int
}

// mcpLog is the stream's state: nothing is decided from it, every step is recorded as seen.
type mcpLog struct{}

func (*mcpLog) Evolve(events.Payload) error { return nil }

// Record appends one lifecycle step to its session's MCP stream.
func (l *MCPLog) Record(ctx context.Context, e events.MCPLifecycle) error {
	l.mu.Lock()
	l.n++
	id := fmt.Sprintf("mcp/%s/%d", l.Run, l.n)
	l.mu.Unlock()
	x := execution[*mcpLog]{meta: Meta{CommandID: id, Actor: "host", CorrelationID: e.SessionID},
		stream: MCPStream(e.SessionID), newState: func() *mcpLog { return &mcpLog{} },
		decide: func(*mcpLog) ([]events.Payload, error) { return []events.Payload{e}, nil },
		store:  l.Store, registry: l.Registry, clock: l.Clock}
	var err error
	if x.digest, err = Digest(e.EventType(), e); err != nil {
		return err
	}
	_, _, err = x.run(ctx)
	return err
}
