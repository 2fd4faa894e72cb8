package events

// The life of a session's MCP server connections (stream mcp-<sessionId>, docs/mcp.md): each
// server started, initialised, its tools listed, a call cancelled, the server lost (crashed or
// hung up) and restarted, and its clean-up. The stream is its own, like the background tasks',
// because a server ends whenever it ends, and an append to the session stream, whose revision
// the running turn owns, would make that turn fail session_busy. The calls themselves are the
// turn's tool calls (session.tool.started.1, session.tool.settled.1).
const TypeMCPLifecycle = "session.mcp.lifecycle.1"

// MCP lifecycle phases, in the order a server's life records them.
const (
	// MCPStarting: the transport is being opened (a stdio server's process started under the
	// sandbox, or an HTTP endpoint contacted).
	MCPStarting = "starting"
	// MCPInitialized: the initialize handshake completed; ServerName and ServerVersion are
	// what the server says it is (untrusted).
	MCPInitialized = "initialized"
	// MCPToolsListed: tools/list answered; Tools counts the tools admitted, Refused those left
	// out, each with a diagnostic.
	MCPToolsListed = "tools_listed"
	// MCPFailed: starting, initialising or listing failed; the server offers no tools.
	MCPFailed = "failed"
	// MCPCancelled: a call was cancelled (the turn was interrupted or timed out); the server
	// was sent notifications/cancelled.
	MCPCancelled = "call_cancelled"
	// MCPLost: the connection ended while the server was in use (the process exited, the
	// endpoint went away).
	MCPLost = "lost"
	// MCPRestarted: a lost server was connected again, before the next call.
	MCPRestarted = "restarted"
	// MCPClosed: the connection was shut down and its process reaped; Error says what the
	// clean-up could not do.
	MCPClosed = "closed"
)

// MCPLifecycle is one step of one MCP server's connection.
type MCPLifecycle struct {
	SessionID string `json:"sessionId"`
	// Server is the server's configured name (mcp.<name>), Transport "stdio" or "http".
	Server    string `json:"server"`
	Transport string `json:"transport"`
	Phase     string `json:"phase"`
	// Connection counts the connections of this server in this process, from 1: a restart
	// is the next one.
	Connection int `json:"connection"`
	// ServerName and ServerVersion are the server's own description (initialized).
	ServerName    string `json:"serverName,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// Tools and Refused count the tools admitted and refused (tools_listed).
	Tools   int `json:"tools,omitempty"`
	Refused int `json:"refused,omitempty"`
	// CallID and Tool name the call of a call_cancelled or lost step.
	CallID string `json:"callId,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Code and Error are the typed failure (failed, lost, closed): a stable code of
	// docs/mcp.md and what happened.
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	// ElapsedMs is how long the phase took (informational).
	ElapsedMs int64 `json:"elapsedMs,omitempty"`
}

func (MCPLifecycle) EventType() string { return TypeMCPLifecycle }
