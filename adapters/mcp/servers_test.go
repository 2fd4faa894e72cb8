package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the small MCP servers the tests need where no npm server behaves
// badly enough: run with ZUNO_MCP_TEST_SERVER=<mode> it serves stdio and never runs tests.
//
//	tools:    echo, crash (exits mid-call), hang (blocks until cancelled; writes
//	          $ZUNO_MCP_MARK when the cancellation arrives), big (a 10 MB text result), huge
//	          (20 MB: over the 16 MiB a message may be)
//	hang:     reads its input and never answers initialize
//	liar:     a hand-written JSON-RPC server whose published schemas lie (see liar)
func TestMain(m *testing.M) {
	switch os.Getenv("ZUNO_MCP_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "tools":
		serveTools()
	case "hang":
		_, _ = bufio.NewReader(os.Stdin).ReadString(0)
		time.Sleep(time.Hour)
	case "liar":
		liar()
	}
	os.Exit(0)
}

type echoArgs struct {
	Text string `json:"text"`
}

func serveTools() {
	s := mcp.NewServer(&mcp.Implementation{Name: "zuno-test", Version: "0.1"}, nil)
	if dir := os.Getenv("ZUNO_MCP_CONNECTING"); dir != "" {
		countConnecting(s, dir)
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text"}, func(ctx context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit mid-call"}, func(ctx context.Context, _ *mcp.CallToolRequest, a struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answer"}, func(ctx context.Context, _ *mcp.CallToolRequest, a struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		if mark := os.Getenv("ZUNO_MCP_MARK"); mark != "" {
			_ = os.WriteFile(mark, []byte("cancelled"), 0o600)
		}
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "A 10 MB result"}, func(ctx context.Context, _ *mcp.CallToolRequest, a struct{}) (*mcp.CallToolResult, any, error) {
		line := strings.Repeat("x", 99) + "\n"
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat(line, 100_000)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "huge", Description: "A 20 MB result, over a frame"}, func(ctx context.Context, _ *mcp.CallToolRequest, a struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("y", 20_000_000)}}}, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// countConnecting records how many other servers were between their start and their
// tools/list when this one started (ZUNO_MCP_CONNECTING=dir): concurrency.mcp_connections
// bounds exactly that. Each server is a file in dir from its start until its tools/list
// arrives, and writes the count it saw to dir/../seen-<pid>.
func countConnecting(s *mcp.Server, dir string) {
	mine := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	others, _ := os.ReadDir(dir)
	_ = os.WriteFile(filepath.Join(filepath.Dir(dir), "seen-"+strconv.Itoa(os.Getpid())), []byte(strconv.Itoa(len(others))), 0o600)
	_ = os.WriteFile(mine, nil, 0o600)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				_ = os.Remove(mine)
			}
			return next(ctx, method, req)
		}
	})
}

// liar answers initialize and tools/list with tools whose schemas lie or cannot be
// expressed, and answers their calls badly:
//
//	strict       publishes {"n": integer} and refuses every call (-32602)
//	garbage      publishes an open object and answers a result that is not a CallToolResult
//	not_object   publishes a schema of a string
//	file_ref     publishes {"$ref": "file:///etc/passwd"}
//	same-name, same.name   both become mcp_<server>_same_name
func liar() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "initialize":
			reply["result"] = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "liar", "version": "1"}}
		case "tools/list":
			obj := map[string]any{"type": "object"}
			reply["result"] = map[string]any{"tools": []any{
				map[string]any{"name": "strict", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}},
				map[string]any{"name": "garbage", "inputSchema": obj},
				map[string]any{"name": "not_object", "inputSchema": map[string]any{"type": "string"}},
				map[string]any{"name": "file_ref", "inputSchema": map[string]any{"$ref": "file:///etc/passwd"}},
				map[string]any{"name": "same-name", "inputSchema": obj},
				map[string]any{"name": "same.name", "inputSchema": obj},
			}}
		case "tools/call":
			if req.Params.Name == "strict" {
				reply["error"] = map[string]any{"code": -32602, "message": "invalid params: n must be a string"}
			} else {
				reply["result"] = 42
			}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": fmt.Sprintf("no method %s", req.Method)}
		}
		_ = out.Encode(reply)
	}
}
