// Package mcp is Zuno's MCP client (docs/mcp.md), on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): it connects the configured servers (stdio, a host
// command run under the session's sandbox like a shell command, or streamable HTTP), lists
// their tools and offers each as a catalogue tool named mcp_<server>_<tool>, whose schema is
// the catalogue's one schema language and whose result goes through the output caps. Every
// step of a connection's life is an events.MCPLifecycle.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	dtools "github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// DefaultConnections is concurrency.mcp_connections' default: how many servers connect at once.
const DefaultConnections = 8

// MaxTools bounds the tools one server may list; the rest are refused.
const MaxTools = 256

// maxRestarts is how many times a lost server is connected again in one surface's life.
const maxRestarts = 3

// Runtime connects one session's servers (the same runtime serves a turn's catalogue and
// zuno debug agent).
type Runtime struct {
	Servers []Server
	// Connections is concurrency.mcp_connections (1..=64); 0 is DefaultConnections.
	Connections int
	// Launcher confines a stdio server's process, as it confines a shell command; Refused,
	// when the sandbox could not be assembled, refuses every stdio server (fail closed).
	Launcher adsandbox.Launcher
	Refused  error
	// Dir is the workspace a stdio server runs in; EnvExclude the host variables withheld
	// from it beyond the ZUNO_* namespace (shell.env.exclude).
	Dir        string
	EnvExclude []string
	SessionID  string
	Caps       Caps
	// Record, when set, records each lifecycle step (commands.MCPLog.Record).
	Record func(context.Context, events.MCPLifecycle) error
	// HTTPClient, when set, carries the HTTP servers' requests (tests); a default client
	// otherwise.
	HTTPClient *http.Client
}

// Pool is one surface's connected servers.
type Pool struct {
	rt    *Runtime
	conns []*conn
	tools []dtools.Tool
	// Diagnostics are the failures of connecting, initialising and listing; CleanUp what the
	// shut-down (Close) could not do cleanly.
	Diagnostics []Diagnostic
	CleanUp     []Diagnostic
	mu          sync.Mutex
	restarts    int
	closed      bool
}

// Connect starts every enabled server, at most Connections at once, initialises it and lists
// its tools. A server that fails is a Diagnostic and offers nothing; the others go on.
func (rt *Runtime) Connect(ctx context.Context) *Pool {
	p := &Pool{rt: rt}
	limit := rt.Connections
	if limit <= 0 {
		limit = DefaultConnections
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, s := range rt.Servers {
		if !s.Enabled {
			continue
		}
		c := &conn{pool: p, server: s}
		p.conns = append(p.conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ts, diags := c.start(ctx)
			mu.Lock()
			c.tools = ts
			p.Diagnostics = append(p.Diagnostics, diags...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	p.tools, p.Diagnostics = unique(p.conns, p.Diagnostics)
	sort.SliceStable(p.Diagnostics, func(i, j int) bool { return p.Diagnostics[i].Server < p.Diagnostics[j].Server })
	return p
}

// unique drops the tools whose names two servers share (server a_b's tool c and server a's
// tool b_c are both mcp_a_b_c): a call could not be told which one it meant, so neither is
// offered, each with a diagnostic.
func unique(conns []*conn, diags []Diagnostic) ([]dtools.Tool, []Diagnostic) {
	count := map[string]int{}
	for _, c := range conns {
		for _, t := range c.tools {
			count[t.Declaration().Name]++
		}
	}
	var out []dtools.Tool
	for _, c := range conns {
		for _, t := range c.tools {
			name := t.Declaration().Name
			if count[name] == 1 {
				out = append(out, t)
				continue
			}
			diags = append(diags, Diagnostic{Server: c.server.Configured, Tool: t.(*Tool).remote, Phase: events.MCPToolsListed,
				Code: CodeToolNameCollision, Message: fmt.Sprintf("%d servers offer a tool named %s", count[name], name),
				Fix: "rename a server so that its tools' names differ"})
		}
	}
	return out, diags
}

// Tools are the admitted tools of every connected server, server by server in name order
// (none for a nil Pool: no server is configured).
func (p *Pool) Tools() []dtools.Tool {
	if p == nil {
		return nil
	}
	return p.tools
}

// Close shuts every connection down and waits for its clean-up (a stdio server's process
// reaped): what did not end cleanly is a Diagnostic, kept in CleanUp too. A second Close
// does nothing.
func (p *Pool) Close() []Diagnostic {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return p.CleanUp
	}
	p.closed = true
	p.mu.Unlock()
	for _, c := range p.conns {
		if d := c.close(); d != nil {
			p.CleanUp = append(p.CleanUp, *d)
		}
	}
	return p.CleanUp
}

// conn is one server's connection, reconnected when it is lost.
type conn struct {
	pool   *Pool
	server Server
	tools  []dtools.Tool

	mu      sync.Mutex
	session *mcp.ClientSession
	number  int  // connections made so far
	lost    bool // the session ended without Close
	closing bool
	stderr  *tail
}

func (c *conn) record(ctx context.Context, e events.MCPLifecycle) {
	if c.pool.rt.Record == nil {
		return
	}
	e.SessionID, e.Server, e.Transport, e.Connection = c.pool.rt.SessionID, c.server.Configured, c.server.Transport, c.number
	// The record must land even when the call that caused it was cancelled.
	_ = c.pool.rt.Record(context.WithoutCancel(ctx), e)
}

// start makes the first connection and lists the tools.
func (c *conn) start(ctx context.Context) ([]dtools.Tool, []Diagnostic) {
	if err := c.connect(ctx); err != nil {
		return nil, []Diagnostic{*err}
	}
	c.mu.Lock()
	cs := c.session
	c.mu.Unlock()
	began := time.Now()
	lctx, cancel := context.WithTimeout(ctx, c.server.Timeout)
	defer cancel()
	var listed []*mcp.Tool
	for t, err := range cs.Tools(lctx, nil) {
		if err != nil {
			d := c.fail(ctx, events.MCPFailed, CodeListTools, fmt.Sprintf("tools/list: %v", err), "check the server; zuno debug agent shows its lifecycle")
			return nil, []Diagnostic{d}
		}
		if len(listed) == MaxTools {
			break
		}
		listed = append(listed, t)
	}
	ts, diags := c.admit(listed)
	c.record(ctx, events.MCPLifecycle{Phase: events.MCPToolsListed, Tools: len(ts), Refused: len(diags), ElapsedMs: time.Since(began).Milliseconds()})
	return ts, diags
}

// fail records a failed phase and returns its diagnostic.
func (c *conn) fail(ctx context.Context, phase, code, msg, fix string) Diagnostic {
	d := Diagnostic{Server: c.server.Configured, Phase: phase, Code: code, Message: msg, Fix: fix}
	c.record(ctx, events.MCPLifecycle{Phase: phase, Code: code, Error: msg})
	return d
}

// connect opens the transport and initialises the session (the SDK's Connect sends
// initialize and waits for its answer), within the server's timeout.
func (c *conn) connect(ctx context.Context) *Diagnostic {
	c.mu.Lock()
	c.number++
	c.mu.Unlock()
	c.record(ctx, events.MCPLifecycle{Phase: events.MCPStarting})
	began := time.Now()
	t, files, err := c.transport()
	if err != nil {
		d := c.fail(ctx, events.MCPFailed, CodeSandbox, err.Error(), "fix the sandbox (zuno debug sandbox) or disable the server")
		return &d
	}
	cctx, cancel := context.WithTimeout(ctx, c.server.Timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "zuno", Version: "1"}, nil)
	cs, err := client.Connect(cctx, t, nil)
	for _, f := range files {
		f.Close() // the process holds its copies now
	}
	if err != nil {
		msg := err.Error()
		if cctx.Err() != nil && ctx.Err() == nil {
			msg = fmt.Sprintf("no answer to initialize within %v", c.server.Timeout)
		}
		if c.stderr != nil && c.stderr.String() != "" {
			msg += "; stderr: " + c.stderr.String()
		}
		d := c.fail(ctx, events.MCPFailed, CodeConnect, msg, "check the command or url; the server's stderr is in the message")
		return &d
	}
	c.mu.Lock()
	c.session, c.lost = cs, false
	c.mu.Unlock()
	go c.watch(cs)
	e := events.MCPLifecycle{Phase: events.MCPInitialized, ElapsedMs: time.Since(began).Milliseconds()}
	if ir := cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		e.ServerName, e.ServerVersion = clip(ir.ServerInfo.Name, 200), clip(ir.ServerInfo.Version, 100)
	}
	c.record(ctx, e)
	return nil
}

// watch notices a session that ends without Close: the server crashed or hung up.
func (c *conn) watch(cs *mcp.ClientSession) {
	msg := "the connection ended"
	if err := cs.Wait(); err != nil {
		msg = err.Error()
	}
	c.lose(cs, msg)
}

// lose marks cs lost, once, and records it (a call that saw the connection end may get here
// before watch does): the next call connects the server again.
func (c *conn) lose(cs *mcp.ClientSession, msg string) {
	c.mu.Lock()
	if c.closing || c.session != cs || c.lost {
		c.mu.Unlock()
		return
	}
	c.lost = true
	c.mu.Unlock()
	if c.stderr != nil && strings.TrimSpace(c.stderr.String()) != "" {
		msg += "; stderr: " + strings.TrimSpace(c.stderr.String())
	}
	c.record(context.Background(), events.MCPLifecycle{Phase: events.MCPLost, Code: CodeServerLost, Error: clip(msg, 4096)})
}

// live returns the session to call, connecting a lost server again first (at most
// maxRestarts times per surface).
func (c *conn) live(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	cs, lost := c.session, c.lost
	c.mu.Unlock()
	if cs != nil && !lost {
		return cs, nil
	}
	c.pool.mu.Lock()
	if c.pool.restarts >= maxRestarts {
		c.pool.mu.Unlock()
		return nil, fmt.Errorf("mcp.%s was lost and has been restarted %d times already", c.server.Configured, maxRestarts)
	}
	c.pool.restarts++
	c.pool.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	if d := c.connect(ctx); d != nil {
		return nil, d
	}
	c.record(ctx, events.MCPLifecycle{Phase: events.MCPRestarted})
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session, nil
}

// close shuts the session down: stdin closed, then SIGTERM, then SIGKILL (the SDK's
// CommandTransport), and waits for the process.
func (c *conn) close() *Diagnostic {
	c.mu.Lock()
	cs := c.session
	c.closing = true
	c.mu.Unlock()
	if cs == nil {
		return nil
	}
	err := cs.Close()
	e := events.MCPLifecycle{Phase: events.MCPClosed}
	var d *Diagnostic
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) && !isExitBySignal(err) {
		e.Code, e.Error = CodeCleanup, err.Error()
		d = &Diagnostic{Server: c.server.Configured, Phase: events.MCPClosed, Code: CodeCleanup, Message: err.Error()}
	}
	c.record(context.Background(), e)
	return d
}

// isExitBySignal is the SIGTERM the shut-down sent: an ordinary end.
func isExitBySignal(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return true
		}
	}
	return false
}

// transport builds the server's transport: a stdio server's process under the session's
// sandbox (the launcher's argv, with the network-deny filter as an open file when there is
// one), or a streamable HTTP endpoint. files are closed once the process started.
func (c *conn) transport() (mcp.Transport, []*os.File, error) {
	rt := c.pool.rt
	if c.server.Transport == TransportHTTP {
		hc := rt.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		hc = &http.Client{Transport: headers{base: hc.Transport, set: c.server.Headers, origin: origin(c.server.URL)}, Timeout: 0}
		return &mcp.StreamableClientTransport{Endpoint: c.server.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil, nil
	}
	if rt.Refused != nil {
		return nil, nil, fmt.Errorf("the sandbox refuses commands: %v", rt.Refused)
	}
	if rt.Launcher == nil {
		return nil, nil, fmt.Errorf("no sandbox launcher")
	}
	var argv []string
	var files []*os.File
	var err error
	if fl, ok := rt.Launcher.(adsandbox.FileLauncher); ok {
		argv, files, err = fl.WrapFiles(c.server.Command, rt.Dir)
	} else {
		argv, err = rt.Launcher.Wrap(c.server.Command, rt.Dir)
	}
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = rt.Dir
	env, _ := shell.Environ(os.Environ(), rt.EnvExclude)
	for k, v := range c.server.Environment {
		env = append(env, k+"="+v)
	}
	cmd.Env, cmd.ExtraFiles = env, files
	if ns, ok := rt.Launcher.(interface{ NewSession() bool }); ok && ns.NewSession() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	c.stderr = &tail{max: 2048}
	cmd.Stderr = c.stderr
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, files, nil
}

// headers sets a server's configured headers on each request to the configured origin (they
// are never recorded). A redirect elsewhere goes without them: this transport runs on every
// hop, and the headers are the user's credential for that endpoint only.
type headers struct {
	base   http.RoundTripper
	set    map[string]string
	origin string
}

// origin is scheme://host[:port] of a URL, "" when it does not parse (checkURL admitted it).
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.set) > 0 && h.origin != "" && origin(r.URL.String()) == h.origin {
		r = r.Clone(r.Context())
		for k, v := range h.set {
			r.Header.Set(k, v)
		}
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// The SDK reads a JSON answer whole (an event stream it bounds per event itself): a
		// server may not make Zuno hold more than a stdio frame may (MaxMessageBytes).
		resp.Body = &bounded{ReadCloser: resp.Body, left: MaxMessageBytes}
	}
	return resp, err
}

// MaxMessageBytes bounds one message from a server: the SDK's bound of a stdio frame and of a
// server-sent event (16 MiB), and Zuno's of an HTTP JSON answer. A larger one fails the
// connection (the call is uncertain) rather than being held.
const MaxMessageBytes = mcp.DefaultMaxLineLength

// bounded fails a body that goes past its bound.
type bounded struct {
	io.ReadCloser
	left int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the server's answer is over %d bytes", MaxMessageBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// tail keeps the last bytes a server wrote to stderr, for its diagnostics.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// clip cuts s to at most n bytes, never inside a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
