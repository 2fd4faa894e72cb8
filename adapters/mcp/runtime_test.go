package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	zmcp "github.com/zuno-run/zuno/adapters/mcp"
	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/domain/sandbox"
	dtools "github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// server-everything over stdio: listed, called, its lifecycle recorded, cleaned up.
func TestEverythingStdio(t *testing.T) {
	nm := nodeModules(t)
	rec := &recorder{}
	rt := runtime(t, rec, zmcp.Server{Name: "everything", Configured: "everything", Transport: zmcp.TransportStdio,
		Command: []string{"node", everything(nm), "stdio"}, Enabled: true, Timeout: 30 * time.Second})
	p := rt.Connect(context.Background())
	echo := find(t, p, "mcp_everything_echo")
	d := echo.Declaration()
	if d.Policy != (dtools.Policy{}) || d.Mixed() {
		t.Fatalf("an MCP tool declares %+v; want the strictest (SideEffecting, Never, Exclusive)", d.Policy)
	}
	res := call(t, context.Background(), echo, "call_1", `{"message":"hello from zuno"}`)
	if res.Outcome != dtools.OutcomeCompleted || !strings.Contains(res.Output, "hello from zuno") {
		t.Fatalf("echo: %+v", res)
	}
	if diags := p.Close(); len(diags) > 0 {
		t.Fatalf("clean-up: %+v", diags)
	}
	want := []string{events.MCPStarting, events.MCPInitialized, events.MCPToolsListed, events.MCPClosed}
	if got := rec.phases("everything"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("lifecycle %v, want %v", got, want)
	}
	if e := rec.has("everything", events.MCPToolsListed); e.Tools == 0 {
		t.Fatalf("tools_listed counts no tool: %+v", e)
	}
}

// server-everything over streamable HTTP: listed, called, and a long call cancelled.
func TestEverythingHTTPCancel(t *testing.T) {
	nm := nodeModules(t)
	port := freePort(t)
	srv := exec.Command("node", everything(nm), "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	waitListening(t, port)
	rec := &recorder{}
	rt := runtime(t, rec, zmcp.Server{Name: "web", Configured: "web", Transport: zmcp.TransportHTTP,
		URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp", Headers: map[string]string{"X-Test": "1"}, Enabled: true, Timeout: 30 * time.Second})
	p := connect(t, rt)
	res := call(t, context.Background(), find(t, p, "mcp_web_echo"), "call_1", `{"message":"over http"}`)
	if res.Outcome != dtools.OutcomeCompleted || !strings.Contains(res.Output, "over http") {
		t.Fatalf("echo: %+v", res)
	}
	long := find(t, p, "mcp_web_trigger_long_running_operation")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	res = call(t, ctx, long, "call_2", `{"duration":20,"steps":4}`)
	if res.Outcome != dtools.OutcomeUncertain || res.ErrorCode != "interrupted" {
		t.Fatalf("cancelled call: %+v", res)
	}
	if e := rec.has("web", events.MCPCancelled); e == nil || e.CallID != "call_2" || e.Tool != "mcp_web_trigger_long_running_operation" {
		t.Fatalf("no call_cancelled step for call_2: %+v", rec.evs)
	}
	// The connection outlives the cancelled call.
	if res := call(t, context.Background(), find(t, p, "mcp_web_echo"), "call_3", `{"message":"again"}`); res.Outcome != dtools.OutcomeCompleted {
		t.Fatalf("echo after the cancellation: %+v", res)
	}
}

// server-filesystem under bubblewrap: it reads the workspace, and a write outside the
// workspace that the server itself allows is refused by the sandbox (the host filesystem is
// read-only inside it).
func TestFilesystemUnderSandbox(t *testing.T) {
	nm := nodeModules(t)
	st := adsandbox.Probe{}.Check(context.Background())
	if !st.Ready {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but bubblewrap is unusable: %s", st.Reason.Text)
		}
		t.Skipf("SKIP: no usable bubblewrap: %s", st.Reason.Text)
	}
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("inside the workspace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := sandbox.Merge(nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := adsandbox.Assemble(context.Background(), cfg, adsandbox.Request{Workspace: ws}, adsandbox.Probe{})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Resolution.Backend != "bubblewrap" {
		t.Fatalf("the default sandbox is not bubblewrap here: %+v", sess.Resolution)
	}
	rec := &recorder{}
	fs := filepath.Join(nm, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	rt := &zmcp.Runtime{Servers: []zmcp.Server{{Name: "fs", Configured: "fs", Transport: zmcp.TransportStdio,
		Command: []string{"node", fs, ws, outside}, Enabled: true, Timeout: 30 * time.Second}},
		Launcher: sess.Launcher, Dir: ws, SessionID: "ses_test", Record: rec.Record,
		Caps: zmcp.Caps{MaxBytes: 51200, MaxLines: 2000, ArtifactDir: t.TempDir()}}
	p := connect(t, rt)
	res := call(t, context.Background(), find(t, p, "mcp_fs_read_text_file"), "call_1", `{"path":"`+filepath.Join(ws, "notes.txt")+`"}`)
	if res.Outcome != dtools.OutcomeCompleted || !strings.Contains(res.Output, "inside the workspace") {
		t.Fatalf("read in the workspace: %+v", res)
	}
	write := find(t, p, "mcp_fs_write_file")
	res = call(t, context.Background(), write, "call_2", `{"path":"`+filepath.Join(outside, "escape.txt")+`","content":"x"}`)
	if _, err := os.Stat(filepath.Join(outside, "escape.txt")); err == nil {
		t.Fatalf("the server wrote outside the workspace: %+v", res)
	}
	if res.Outcome != dtools.OutcomeError || res.ErrorCode != zmcp.CodeToolError {
		t.Fatalf("write outside the workspace: %+v", res)
	}
	res = call(t, context.Background(), write, "call_3", `{"path":"`+filepath.Join(ws, "made.txt")+`","content":"made"}`)
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "made" {
		t.Fatalf("write in the workspace: %+v (%v)", res, err)
	}
}

// A server that exits mid-call: the call is uncertain, the loss recorded, and the next call
// restarts it.
func TestCrashRestarts(t *testing.T) {
	rec := &recorder{}
	p := connect(t, runtime(t, rec, self("t", "tools", 20*time.Second)))
	res := call(t, context.Background(), find(t, p, "mcp_t_crash"), "call_1", `{}`)
	if res.Outcome != dtools.OutcomeUncertain || res.ErrorCode != zmcp.CodeServerLost {
		t.Fatalf("crash: %+v", res)
	}
	res = call(t, context.Background(), find(t, p, "mcp_t_echo"), "call_2", `{"text":"back"}`)
	if res.Outcome != dtools.OutcomeCompleted || res.Output != "echo: back" {
		t.Fatalf("after the crash: %+v", res)
	}
	if rec.has("t", events.MCPLost) == nil || rec.has("t", events.MCPRestarted) == nil {
		t.Fatalf("lifecycle %v lacks lost and restarted", rec.phases("t"))
	}
	if e := rec.has("t", events.MCPRestarted); e.Connection != 2 {
		t.Fatalf("restart is connection %d, want 2", e.Connection)
	}
}

// A server that never answers initialize fails with a diagnostic within its timeout and
// offers nothing; its process is cleaned up.
func TestHangingInitialize(t *testing.T) {
	rec := &recorder{}
	p := connect(t, runtime(t, rec, self("h", "hang", time.Second), self("t", "tools", 20*time.Second)))
	if len(p.Diagnostics) != 1 || p.Diagnostics[0].Code != zmcp.CodeConnect || p.Diagnostics[0].Server != "h" {
		t.Fatalf("diagnostics %+v", p.Diagnostics)
	}
	for _, tl := range p.Tools() {
		if strings.HasPrefix(tl.Declaration().Name, "mcp_h_") {
			t.Fatalf("the hanging server offers %s", tl.Declaration().Name)
		}
	}
	find(t, p, "mcp_t_echo") // the other server is unaffected
	if e := rec.has("h", events.MCPFailed); e == nil || e.Code != zmcp.CodeConnect {
		t.Fatalf("lifecycle %+v", rec.evs)
	}
}

// A call that never answers times out: uncertain, and the server is told to cancel it.
func TestHangingCallCancelled(t *testing.T) {
	rec := &recorder{}
	mark := filepath.Join(t.TempDir(), "mark")
	s := self("t", "tools", time.Second)
	s.Environment["ZUNO_MCP_MARK"] = mark
	p := connect(t, runtime(t, rec, s))
	res := call(t, context.Background(), find(t, p, "mcp_t_hang"), "call_1", `{}`)
	if res.Outcome != dtools.OutcomeUncertain || res.ErrorCode != zmcp.CodeTimeout {
		t.Fatalf("hang: %+v", res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(mark); err == nil && string(b) == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never received the cancellation")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if e := rec.has("t", events.MCPCancelled); e == nil || e.Code != zmcp.CodeTimeout {
		t.Fatalf("lifecycle %+v", rec.evs)
	}
}

// A 10 MB result goes through the caps: withheld, stored as an artifact, the model gets the
// notice; over max_artifact_bytes only the first bytes are kept.
func TestBigResultCapped(t *testing.T) {
	for _, tc := range []struct {
		name     string
		artifact int64
		want     int64
	}{{"whole", 0, 10_000_000}, {"artifact cap", 1 << 20, 1 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime(t, &recorder{}, self("t", "tools", 30*time.Second))
			rt.Caps.MaxArtifactBytes = tc.artifact
			p := connect(t, rt)
			res := call(t, context.Background(), find(t, p, "mcp_t_big"), "call_1", `{}`)
			w := res.Metadata.WithheldOutput
			if res.Outcome != dtools.OutcomeCompleted || w == nil || w.Limit != "max_bytes" || w.Bytes != 10_000_000 {
				t.Fatalf("big: outcome %s, withheld %+v", res.Outcome, w)
			}
			if len(res.Output) > 2048 || !strings.Contains(res.Output, "Output withheld") {
				t.Fatalf("the model got %d bytes: %.200s", len(res.Output), res.Output)
			}
			fi, err := os.Stat(w.Path)
			if err != nil || fi.Size() != tc.want {
				t.Fatalf("artifact %s: %v, size %v, want %d", w.Path, err, fi, tc.want)
			}
		})
	}
}

// A server whose schemas lie or cannot be expressed: each is a typed diagnostic or a typed
// result, never a crash.
func TestLyingServer(t *testing.T) {
	rec := &recorder{}
	p := connect(t, runtime(t, rec, self("l", "liar", 10*time.Second)))
	codes := map[string]string{}
	for _, d := range p.Diagnostics {
		codes[d.Tool] = d.Code
	}
	want := map[string]string{"not_object": zmcp.CodeSchema, "file_ref": zmcp.CodeSchema,
		"same-name": zmcp.CodeToolNameCollision, "same.name": zmcp.CodeToolNameCollision}
	for tool, code := range want {
		if codes[tool] != code {
			t.Errorf("%s: diagnostic %q, want %q (all: %+v)", tool, codes[tool], code, p.Diagnostics)
		}
	}
	if len(p.Tools()) != 2 {
		t.Fatalf("admitted %d tools, want strict and garbage", len(p.Tools()))
	}
	strict := find(t, p, "mcp_l_strict")
	if _, err := strict.Validate([]byte(`{"n":"x"}`)); err == nil {
		t.Fatal("the published schema admits a string for n")
	}
	res := call(t, context.Background(), strict, "call_1", `{"n":1}`)
	if res.Outcome != dtools.OutcomeError || res.ErrorCode != zmcp.CodeCallRefused || !strings.Contains(res.Output, "-32602") {
		t.Fatalf("strict: %+v", res)
	}
	res = call(t, context.Background(), find(t, p, "mcp_l_garbage"), "call_2", `{}`)
	if res.Outcome != dtools.OutcomeUncertain || res.ErrorCode != zmcp.CodeBadResponse {
		t.Fatalf("garbage: %+v", res)
	}
	if e := rec.has("l", events.MCPToolsListed); e.Tools != 2 || e.Refused != 4 {
		t.Fatalf("tools_listed %+v", e)
	}
}

// The sandbox refused: a stdio server does not run (fail closed), an HTTP one is unaffected.
func TestSandboxRefusedStdio(t *testing.T) {
	rec := &recorder{}
	rt := runtime(t, rec, self("t", "tools", 5*time.Second))
	rt.Refused = os.ErrPermission
	p := connect(t, rt)
	if len(p.Tools()) != 0 || len(p.Diagnostics) != 1 || p.Diagnostics[0].Code != zmcp.CodeSandbox {
		t.Fatalf("tools %d, diagnostics %+v", len(p.Tools()), p.Diagnostics)
	}
}

// concurrency.mcp_connections bounds how many servers are connecting at once: at 1, each
// server starts only after the one before has listed its tools.
func TestConnectionsBound(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "connecting")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var servers []zmcp.Server
	for _, n := range []string{"a", "b", "c", "d"} {
		s := self(n, "tools", 20*time.Second)
		s.Environment["ZUNO_MCP_CONNECTING"] = dir
		servers = append(servers, s)
	}
	rt := runtime(t, &recorder{}, servers...)
	rt.Connections = 1
	p := connect(t, rt)
	if len(p.Diagnostics) > 0 || len(p.Tools()) != 20 {
		t.Fatalf("tools %d, diagnostics %+v", len(p.Tools()), p.Diagnostics)
	}
	seen, err := filepath.Glob(filepath.Join(root, "seen-*"))
	if err != nil || len(seen) != 4 {
		t.Fatalf("seen %v (%v)", seen, err)
	}
	for _, f := range seen {
		if b, _ := os.ReadFile(f); string(b) != "0" {
			t.Errorf("%s: a server started while %s others were connecting, over mcp_connections 1", f, b)
		}
	}
}

// A result over MaxMessageBytes is not held: the connection fails, the call is uncertain, and
// the next call restarts the server.
func TestOversizedMessage(t *testing.T) {
	rec := &recorder{}
	p := connect(t, runtime(t, rec, self("t", "tools", 30*time.Second)))
	res := call(t, context.Background(), find(t, p, "mcp_t_huge"), "call_1", `{}`)
	if res.Outcome != dtools.OutcomeUncertain || len(res.Output) > 4096 {
		t.Fatalf("huge: %s %s %.300s", res.Outcome, res.ErrorCode, res.Output)
	}
	if res := call(t, context.Background(), find(t, p, "mcp_t_echo"), "call_2", `{"text":"after"}`); res.Outcome != dtools.OutcomeCompleted {
		t.Fatalf("after the oversized message: %+v", res)
	}
	if rec.has("t", events.MCPLost) == nil || rec.has("t", events.MCPRestarted) == nil {
		t.Fatalf("lifecycle %v", rec.phases("t"))
	}
}
