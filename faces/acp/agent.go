// Package acp is `zuno acp`: the Application (commands/app) as an Agent Client Protocol agent
// over standard input and output, one more face beside the CLI and the HTTP server, with no
// logic of its own (docs/acp.md, docs/architecture.md). The protocol's messages and their
// JSON-RPC 2.0 connection are github.com/coder/acp-go-sdk's; this package maps each method to
// one command or query of the Application and each recorded event of a turn to the session
// updates an editor shows. Everything an editor does through it is a command like any other,
// recorded in the log with the actor "acp".
package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/agent"
)

// Config is what the agent needs of its process.
type Config struct {
	// Cwd is where a session without a recorded workspace works.
	Cwd string
	// Version is reported to the client in initialize.
	Version string
	// Log receives diagnostics (a refused frame, a reply that came second); never the
	// protocol, which owns standard output.
	Log io.Writer
	// ClientTimeout bounds each request to the client's file system (fs.go); 0 is
	// DefaultClientTimeout.
	ClientTimeout time.Duration
}

// Actor is who the commands of an ACP client are recorded as.
const Actor = "acp"

// Serve answers the client on in and out until in ends or ctx is done; then it stops the
// turns it runs (each records its interruption) and waits for them.
func Serve(ctx context.Context, a *app.Application, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	ag := &Agent{app: a, cfg: cfg, sessions: map[string]*session{}, connected: make(chan struct{})}
	ag.ctx, ag.stop = context.WithCancel(ctx)
	defer ag.stop()
	go guard(in, pw, w, func(fe *frameError) {
		fmt.Fprintf(cfg.Log, "zuno acp: refused a message (%d %s): %s\n", fe.Code, fe.Message, fe.Reason)
	})
	ag.conn = sdk.NewConnection(ag.handle, w, pr)
	ag.conn.SetLogger(slog.New(slog.NewTextHandler(cfg.Log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	close(ag.connected)
	select {
	case <-ag.conn.Done():
	case <-ctx.Done():
	}
	ag.stop()
	pr.Close()
	ag.turns.Wait()
	// The children still running are cancelled, each recording its turn interrupted and its
	// job cancelled; their reports wait in the inbox for the session's next run.
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = a.Commands.SettleJobs(stopped)
	return nil
}

// Agent is the ACP agent of one connection.
type Agent struct {
	app  *app.Application
	cfg  Config
	conn *sdk.Connection
	// connected is closed once conn is set: the connection reads (and dispatches) from its
	// creation on, and a handler may send to the client.
	connected chan struct{}
	// ctx ends the connection's turns when the connection ends.
	ctx  context.Context
	stop context.CancelFunc

	mu          sync.Mutex
	initialized bool
	offers      clientOffers // what initialize offered (fs.go)
	sessions    map[string]*session
	turns       sync.WaitGroup
}

// session is a Zuno session this connection created or loaded, with the mode its next turn
// runs in and its running prompt, if any.
type session struct {
	id   string
	mode string
	// cancel stops the running prompt's turn; nil while none runs.
	cancel context.CancelFunc
}

// Initialize negotiates the protocol version (ACP's 1, the only one) and says what the agent
// takes: session/load, text, resource links and embedded text resources in prompts.
func (g *Agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	c := p.ClientCapabilities
	g.mu.Lock()
	g.initialized = true
	g.offers = clientOffers{readText: c.Fs.ReadTextFile, writeText: c.Fs.WriteTextFile}
	g.mu.Unlock()
	if c.Terminal {
		// A command runs under Zuno's guard and sandbox, never in the editor's terminal
		// (docs/acp.md, "The editor's file system and terminal").
		g.logf("initialize: the client's terminal is not used: commands run in Zuno's sandbox")
	}
	title := "Zuno"
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{LoadSession: true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true}},
		AgentInfo:   &sdk.Implementation{Name: "zuno", Title: &title, Version: g.cfg.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate succeeds: a local agent on the user's own standard input needs no login (the
// providers' keys are the process's configuration).
func (g *Agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if err := g.ready(); err != nil {
		return sdk.AuthenticateResponse{}, err
	}
	return sdk.AuthenticateResponse{}, nil
}

// NewSession creates a Zuno session working in cwd (Commands.OpenSession: session.created.1,
// actor acp), in the build agent.
func (g *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := g.ready(); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	if !filepath.IsAbs(p.Cwd) {
		return sdk.NewSessionResponse{}, invalidParams("bad_request", fmt.Sprintf("cwd %q is not absolute", p.Cwd),
			"send the workspace's absolute path")
	}
	if len(p.McpServers) > 0 {
		g.logf("session/new: %d MCP servers not connected: Zuno's are its configuration's (docs/acp.md)", len(p.McpServers))
	}
	sid, _, err := g.app.Commands.OpenSession(ctx, g.meta(""), "", defaultMode, p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, toRPC(err)
	}
	g.mu.Lock()
	g.sessions[sid] = &session{id: sid, mode: defaultMode}
	g.mu.Unlock()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(sid), Modes: modes(defaultMode)}, nil
}

// LoadSession replays a session's history from the log as session updates (replay.go), then
// answers; the session's next prompt continues it. A session this connection runs a prompt in
// is refused: its history is still being written.
func (g *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := g.ready(); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	sid := string(p.SessionId)
	g.mu.Lock()
	if s := g.sessions[sid]; s != nil && s.cancel != nil {
		g.mu.Unlock()
		return sdk.LoadSessionResponse{}, busy(sid)
	}
	g.mu.Unlock()
	mode, err := g.replay(ctx, sid)
	if err != nil {
		return sdk.LoadSessionResponse{}, toRPC(err)
	}
	if !slices.Contains(modeNames(), mode) {
		mode = defaultMode
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch s := g.sessions[sid]; {
	case s == nil:
		g.sessions[sid] = &session{id: sid, mode: mode}
	case s.cancel != nil: // a prompt started while the history was read: it keeps its mode
		mode = s.mode
	default:
		s.mode = mode
	}
	return sdk.LoadSessionResponse{Modes: modes(mode)}, nil
}

// SetSessionMode chooses the built-in agent the session's next turns run as. It records
// nothing itself: each turn records its agent on session.turn.started.1 (docs/acp.md, "Modes").
func (g *Agent) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := g.session(string(p.SessionId))
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if !slices.Contains(modeNames(), string(p.ModeId)) {
		return sdk.SetSessionModeResponse{}, invalidParams(agent.CodeUnknownAgent,
			fmt.Sprintf("mode %q is not one of the built-in agents", p.ModeId), "use one of "+strings.Join(modeNames(), ", "))
	}
	g.mu.Lock()
	s.mode = string(p.ModeId)
	g.mu.Unlock()
	return sdk.SetSessionModeResponse{}, nil
}

// Cancel stops the session's running prompt: its turn records interrupted, and the prompt
// answers cancelled. A session with no prompt running is left alone (a notification has no
// answer).
func (g *Agent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[string(p.SessionId)]; s != nil && s.cancel != nil {
		s.cancel()
	}
	return nil
}

// ready refuses a method before initialize: ACP's order is initialize first.
func (g *Agent) ready() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.initialized {
		return &sdk.RequestError{Code: codeInvalidRequest, Message: "Invalid request",
			Data: errData(CodeNotInitialized, "the connection is not initialized", "send initialize first")}
	}
	return nil
}

// session is a session this connection created or loaded.
func (g *Agent) session(id string) (*session, error) {
	if err := g.ready(); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.sessions[id]
	if s == nil {
		return nil, &sdk.RequestError{Code: codeResourceNotFound, Message: "Resource not found",
			Data: errData(CodeSessionNotOpen, fmt.Sprintf("session %s is not open on this connection", id),
				"create it with session/new, or load it with session/load")}
	}
	return s, nil
}

// meta is a new command of the client's; correlated with its session when it has one.
func (g *Agent) meta(sessionID string) commands.Meta {
	return commands.Meta{CommandID: app.NewID("cmd_"), Actor: Actor, CorrelationID: sessionID}
}

// defaultMode is a new session's agent, as for zuno run.
const defaultMode = "build"

// modeNames are the built-in primary agents, the session modes (a subagent runs only as a
// child).
func modeNames() []string {
	var n []string
	for _, a := range agent.Builtins() {
		if a.Mode == agent.Primary {
			n = append(n, a.Name)
		}
	}
	return n
}

func modes(current string) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(current), AvailableModes: []sdk.SessionMode{}}
	for _, a := range agent.Builtins() {
		if a.Mode == agent.Primary {
			d := a.Description
			st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(a.Name), Name: a.Name, Description: &d})
		}
	}
	return st
}
