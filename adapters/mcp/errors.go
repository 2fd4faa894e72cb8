package mcp

// Stable error codes of the MCP client (docs/mcp.md). A configuration fault refuses the
// configuration; a fault of one server or one of its tools is a Diagnostic and leaves that
// server or tool out, never the run; a call's failure is its result's errorCode.
const (
	// CodeBadServer: an mcp.<name> entry is malformed (no command and no url, both, an
	// unknown key, a url that is not http(s) or carries credentials).
	CodeBadServer = "mcp_bad_server"
	// CodeServerNameCollision: two configured server names normalise to one (GitHub and
	// github, my-docs and my_docs), so their tools could not be told apart.
	CodeServerNameCollision = "mcp_server_name_collision"
	// CodeConnect: a server could not be started, reached or initialised.
	CodeConnect = "mcp_connect_failed"
	// CodeListTools: a server's tools/list failed or answered garbage.
	CodeListTools = "mcp_list_tools_failed"
	// CodeToolName: a server's tool name cannot become mcp_<server>_<tool> (empty, longer
	// than 64 characters once prefixed).
	CodeToolName = "mcp_tool_name"
	// CodeToolNameCollision: two tools of one server normalise to one name; both are left out.
	CodeToolNameCollision = "mcp_tool_name_collision"
	// CodeSchema: a tool's input schema is not one the catalogue's schema language can
	// express (not an object, a reference outside the schema, over the size bound, invalid).
	CodeSchema = "mcp_schema_unsupported"
	// CodeSandbox: a stdio server cannot run because the session's sandbox could not be
	// assembled (its commands are refused, as the shell's are).
	CodeSandbox = "mcp_sandbox_refused"
	// CodeCallRefused: the server refused a call whose arguments passed the tool's schema (the
	// schema it published does not say what it accepts).
	CodeCallRefused = "mcp_call_refused"
	// CodeToolError: the server ran the call and reported an error (isError).
	CodeToolError = "mcp_tool_error"
	// CodeServerLost: the connection ended during the call; whether the server acted is
	// unknown.
	CodeServerLost = "mcp_server_lost"
	// CodeBadResponse: the server's answer could not be read; whether it acted is unknown.
	CodeBadResponse = "mcp_bad_response"
	// CodeTimeout: the server did not answer in time (the server's timeout); it was sent a
	// cancellation and whether it acted is unknown.
	CodeTimeout = "mcp_timeout"
	// CodeCleanup: a connection's shut-down did not end cleanly (the process had to be
	// killed, or its exit was an error).
	CodeCleanup = "mcp_cleanup"
)

// Diagnostic is one failure of a server or of one of its tools, reported by debug agent and
// recorded on the lifecycle: structured, never disguised as an available tool.
type Diagnostic struct {
	Server string `json:"server"`
	// Tool is the server's own tool name, when the failure is one tool's.
	Tool string `json:"tool,omitempty"`
	// Phase is the lifecycle phase that failed (events.MCP*).
	Phase   string `json:"phase"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

func (d Diagnostic) Error() string {
	s := d.Code + ": mcp." + d.Server
	if d.Tool != "" {
		s += " tool " + d.Tool
	}
	return s + ": " + d.Message
}
