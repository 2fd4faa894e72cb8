package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	dtools "github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// MaxDescription bounds a tool's description as the model is shown it (bytes).
const MaxDescription = 2048

// Tool is one server tool offered as mcp_<server>_<tool>.
type Tool struct {
	name, remote, server string
	description          string
	schema               *schema.Schema
	// Hints are the server's annotations, reported (debug agent) and never trusted: the
	// declaration stays the strictest whatever they say.
	Hints *mcp.ToolAnnotations
	conn  *conn
}

// admit turns listed tools into catalogue tools: each name normalised and checked, each
// schema compiled; every refusal a diagnostic. Two tools whose names normalise to one are
// both refused: which one a call meant could not be told.
func (c *conn) admit(listed []*mcp.Tool) ([]dtools.Tool, []Diagnostic) {
	var diags []Diagnostic
	byName := map[string][]*mcp.Tool{}
	var order []string
	for _, t := range listed {
		if t == nil {
			continue
		}
		name, err := ToolName(c.server.Name, t.Name)
		if err != nil {
			diags = append(diags, Diagnostic{Server: c.server.Configured, Tool: clip(t.Name, 200), Phase: events.MCPToolsListed,
				Code: CodeToolName, Message: err.Error(), Fix: "shorten the server's name in the configuration"})
			continue
		}
		if byName[name] == nil {
			order = append(order, name)
		}
		byName[name] = append(byName[name], t)
	}
	var out []dtools.Tool
	for _, name := range order {
		ts := byName[name]
		if len(ts) > 1 {
			for _, t := range ts {
				diags = append(diags, Diagnostic{Server: c.server.Configured, Tool: clip(t.Name, 200), Phase: events.MCPToolsListed,
					Code: CodeToolNameCollision, Message: fmt.Sprintf("%d tools of the server become %s", len(ts), name)})
			}
			continue
		}
		t := ts[0]
		sch, err := compileSchema(name, t.InputSchema)
		if err != nil {
			diags = append(diags, Diagnostic{Server: c.server.Configured, Tool: clip(t.Name, 200), Phase: events.MCPToolsListed,
				Code: CodeSchema, Message: "input schema: " + err.Error(), Fix: "the server's tool is left out; report it to the server's authors"})
			continue
		}
		out = append(out, &Tool{name: name, remote: t.Name, server: c.server.Configured, description: clip(t.Description, MaxDescription),
			schema: sch, Hints: t.Annotations, conn: c})
	}
	return out, diags
}

// Declaration is the strictest policy: SideEffecting, replayed Never, Exclusive (docs/mcp.md,
// "Declarations"). The server's annotations are hints from an untrusted party.
func (t *Tool) Declaration() dtools.Declaration { return dtools.Declaration{Name: t.name} }

// Spec is the tool as the model is shown it: the schema bytes the validator compiled.
func (t *Tool) Spec() dtools.Spec {
	return dtools.Spec{Name: t.name, Description: t.description, Schema: t.schema.Raw()}
}

// Server and Remote are the tool's server (as configured) and its name there.
func (t *Tool) Server() string { return t.server }
func (t *Tool) Remote() string { return t.remote }

// WritesWorkspace is false: an MCP server's effects are its own, not a workspace edit Zuno
// makes (the prompt's editing section is not shown for it).
func (t *Tool) WritesWorkspace() bool { return false }

// Validate checks the arguments against the server's schema; the call carries them as
// validated.
func (t *Tool) Validate(args json.RawMessage) (dtools.Parsed, error) {
	v, err := t.schema.Validate(args)
	if err != nil {
		return dtools.Parsed{}, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dtools.Parsed{}, err
	}
	return dtools.Parsed{Args: json.RawMessage(b)}, nil
}

// Execute calls the tool on its server. The outcomes (docs/mcp.md, "Calls"): the server's
// answer is completed, or error when it says isError; a refusal of arguments the schema
// admitted is error (the schema lied); a lost connection, a timeout, an unreadable answer or
// a cancellation is uncertain, since the server may have acted.
func (t *Tool) Execute(ctx context.Context, inv dtools.Invocation) dtools.Result {
	args, ok := inv.Args.(json.RawMessage)
	if !ok {
		return dtools.NotValidated(inv)
	}
	cs, err := t.conn.live(ctx)
	if err != nil {
		return dtools.Result{Outcome: dtools.OutcomeError, ErrorCode: CodeConnect, Output: "the server is not connected: " + err.Error()}
	}
	cctx, cancel := context.WithTimeout(ctx, t.conn.server.Timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
	if err != nil {
		return t.failed(ctx, cctx, cs, inv, err)
	}
	out := dtools.Result{Outcome: dtools.OutcomeCompleted}
	details, _ := json.Marshal(map[string]any{"server": t.server, "tool": t.remote, "isError": res.IsError})
	out.Metadata.Details = details
	if res.IsError {
		out.Outcome, out.ErrorCode = dtools.OutcomeError, CodeToolError
	}
	t.conn.pool.rt.Caps.capOutput(inv.CallID, t.name, render(res), &out)
	return out
}

// failed maps a call that got no result.
func (t *Tool) failed(ctx, cctx context.Context, cs *mcp.ClientSession, inv dtools.Invocation, err error) dtools.Result {
	var wire *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		t.conn.record(ctx, events.MCPLifecycle{Phase: events.MCPCancelled, CallID: inv.CallID, Tool: t.name})
		return dtools.Result{Outcome: dtools.OutcomeUncertain, ErrorCode: "interrupted",
			Output: "the call was cancelled; the server was told so, and may have acted already: inspect its state before calling again"}
	case cctx.Err() != nil:
		t.conn.record(ctx, events.MCPLifecycle{Phase: events.MCPCancelled, CallID: inv.CallID, Tool: t.name, Code: CodeTimeout})
		return dtools.Result{Outcome: dtools.OutcomeUncertain, ErrorCode: CodeTimeout,
			Output: fmt.Sprintf("no answer within %v; the call was cancelled and the server may have acted: inspect its state before calling again", t.conn.server.Timeout)}
	case errors.As(err, &wire):
		return dtools.Result{Outcome: dtools.OutcomeError, ErrorCode: CodeCallRefused,
			Output: fmt.Sprintf("the server refused the call (JSON-RPC %d): %s", wire.Code, clip(wire.Message, 2048))}
	case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || t.conn.isLost():
		t.conn.lose(cs, err.Error())
		return dtools.Result{Outcome: dtools.OutcomeUncertain, ErrorCode: CodeServerLost,
			Output: "the server's connection ended during the call; it may have acted: inspect its state before calling again (the next call restarts it)"}
	}
	// A connection that answered what cannot be read (garbage, a message over MaxMessageBytes)
	// is not trusted further: the next call connects the server again.
	t.conn.lose(cs, err.Error())
	return dtools.Result{Outcome: dtools.OutcomeUncertain, ErrorCode: CodeBadResponse,
		Output: "the server's answer could not be read (" + clip(err.Error(), 2048) + "); it may have acted (the next call restarts it)"}
}

func (c *conn) isLost() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}
