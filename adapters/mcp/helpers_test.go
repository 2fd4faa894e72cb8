package mcp_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	zmcp "github.com/zuno-run/zuno/adapters/mcp"
	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	dtools "github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// nodeModules is ops/testdeps/mcp/node_modules (npm ci --prefix ops/testdeps/mcp), or
// $ZUNO_MCP_TESTDEPS. Without node or the packages the test skips, visibly; under CI it fails.
func nodeModules(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ZUNO_MCP_TESTDEPS")
	if dir == "" {
		abs, err := filepath.Abs("../../ops/testdeps/mcp/node_modules")
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "server-everything", "package.json"))
	if errNode != nil || errPkg != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but node or the MCP test servers are missing (node: %v, packages: %v): run npm ci --prefix ops/testdeps/mcp", errNode, errPkg)
		}
		t.Skipf("SKIP: node or the MCP test servers are missing (node: %v, packages: %v): npm ci --prefix ops/testdeps/mcp", errNode, errPkg)
	}
	return dir
}

func everything(dir string) string {
	return filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// recorder keeps the lifecycle steps recorded.
type recorder struct {
	mu  sync.Mutex
	evs []events.MCPLifecycle
}

func (r *recorder) Record(_ context.Context, e events.MCPLifecycle) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
	return nil
}

func (r *recorder) phases(server string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.evs {
		if e.Server == server {
			out = append(out, e.Phase)
		}
	}
	return out
}

func (r *recorder) has(server, phase string) *events.MCPLifecycle {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.evs {
		if e.Server == server && e.Phase == phase {
			return &e
		}
	}
	return nil
}

// runtime is a Runtime over servers with the host launcher (no confinement) and caps that
// store into a temporary directory.
func runtime(t *testing.T, rec *recorder, servers ...zmcp.Server) *zmcp.Runtime {
	t.Helper()
	return &zmcp.Runtime{Servers: servers, Launcher: adsandbox.Native{}, Dir: t.TempDir(), SessionID: "ses_test",
		Caps: zmcp.Caps{MaxBytes: 51200, MaxLines: 2000, ArtifactDir: t.TempDir()}, Record: rec.Record}
}

// self is a server run by this test binary in mode (TestMain).
func self(name, mode string, timeout time.Duration) zmcp.Server {
	return zmcp.Server{Name: name, Configured: name, Transport: zmcp.TransportStdio, Command: []string{os.Args[0]},
		Environment: map[string]string{"ZUNO_MCP_TEST_SERVER": mode}, Enabled: true, Timeout: timeout}
}

func connect(t *testing.T, rt *zmcp.Runtime) *zmcp.Pool {
	t.Helper()
	p := rt.Connect(context.Background())
	t.Cleanup(func() { p.Close() })
	return p
}

func find(t *testing.T, p *zmcp.Pool, name string) dtools.Tool {
	t.Helper()
	var names []string
	for _, tl := range p.Tools() {
		if tl.Declaration().Name == name {
			return tl
		}
		names = append(names, tl.Declaration().Name)
	}
	t.Fatalf("no tool %s among %v (diagnostics %+v)", name, names, p.Diagnostics)
	return nil
}

// call validates args and executes the call, as the turn does.
func call(t *testing.T, ctx context.Context, tl dtools.Tool, callID, args string) dtools.Result {
	t.Helper()
	parsed, err := tl.Validate([]byte(args))
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Declaration().Name, args, err)
	}
	return tl.Execute(ctx, dtools.Invocation{SessionID: "ses_test", CallID: callID, Parsed: parsed})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits until something accepts on port.
func waitListening(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %d", port)
}
