package queries

import (
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// MCPServerReport is one enabled MCP server as zuno debug agent connected it (seeds 002
// §10.2): its lifecycle as recorded, the real tool ids and schemas it listed with whether this
// agent is offered each, and every failure (connect, initialise, list, a refused tool, the
// clean-up) as a diagnostic.
type MCPServerReport struct {
	Name        string                `json:"name"`
	Transport   string                `json:"transport"`
	Lifecycle   []events.MCPLifecycle `json:"lifecycle"`
	Tools       []MCPToolReport       `json:"tools"`
	Diagnostics []MCPDiagnostic       `json:"diagnostics"`
}

// MCPToolReport is one listed tool: its id (mcp_<server>_<tool>), its name on the server, the
// schema exactly as the model would be shown it, the server's annotations (hints, never
// trusted), and whether the agent is offered it, with the reason when not.
type MCPToolReport struct {
	ID          string          `json:"id"`
	Remote      string          `json:"remote"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Hints       json.RawMessage `json:"hints,omitempty"`
	Offered     bool            `json:"offered"`
	Reason      string          `json:"reason,omitempty"`
}

// MCPDiagnostic is one failure, structured (adapters/mcp's codes, docs/errors.md).
type MCPDiagnostic struct {
	Tool    string `json:"tool,omitempty"`
	Phase   string `json:"phase"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}
