// Package httpapi is `zuno serve`: the Application (commands/app) over HTTP, one more face
// beside the CLI, with no logic of its own (docs/architecture.md, docs/server.md). Every
// handler decodes a request, calls one command or query, and writes its answer or its typed
// error as JSON. What belongs to the face is here: authentication, limits, the CSRF check, the
// JSON error contract, the turns this process runs in the background, and the event stream.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zuno-run/zuno/commands/app"
)

// Config is how a server listens and what it accepts.
type Config struct {
	// Addr is the listen address; DefaultAddr when empty.
	Addr string
	// Tokens are the accepted bearer tokens; none means no authentication, allowed only on a
	// loopback address (CheckBind).
	Tokens *Tokens
	// Cwd is the workspace of a new session whose request names none.
	Cwd string
	// Log receives one line per request and per background turn's end; never a token.
	Log io.Writer
	// Limits; the defaults when zero.
	MaxBody                                                   int64
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Heartbeat is how often an idle event stream sends a comment, so proxies keep it open.
	Heartbeat time.Duration
	// Metrics serves GET /metrics (the process's Prometheus collectors); nil answers
	// not_found.
	Metrics http.Handler
}

// Defaults of Config.
const (
	DefaultAddr              = "127.0.0.1:7421"
	DefaultMaxBody           = 1 << 20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultHeartbeat         = 15 * time.Second
)

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.Tokens == nil {
		c.Tokens = &Tokens{}
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	set(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&c.ReadTimeout, DefaultReadTimeout)
	set(&c.WriteTimeout, DefaultWriteTimeout)
	set(&c.IdleTimeout, DefaultIdleTimeout)
	set(&c.Heartbeat, DefaultHeartbeat)
}

// Server is the HTTP face of one Application.
type Server struct {
	app    *app.Application
	cfg    Config
	tokens *Tokens
	routes []route
	mux    *http.ServeMux

	// turns are the turns this process runs for its clients; they end with the server.
	turnsCtx  context.Context
	stopTurns context.CancelFunc
	turns     sync.WaitGroup
	logMu     sync.Mutex
}

// New returns the server of a; nothing listens until Serve.
func New(a *app.Application, cfg Config) *Server {
	cfg.defaults()
	s := &Server{app: a, cfg: cfg, tokens: cfg.Tokens, mux: http.NewServeMux()}
	s.turnsCtx, s.stopTurns = context.WithCancel(context.Background())
	s.routes = s.table()
	for _, r := range s.routes {
		s.mux.Handle(r.method+" "+r.pattern, s.guard(r))
	}
	s.mountConsole()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.authenticate(r); err != nil {
			writeError(w, err)
			return
		}
		writeError(w, &Error{code: CodeRouteNotFound, Message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path),
			Fix: "see /openapi.json for the routes"})
	})
	return s
}

// CodeRouteNotFound: no route has this method and path.
const CodeRouteNotFound = "route_not_found"

// Handler is the server's routes with their guards, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.mux }

// Listen checks the address (CheckBind) and opens it.
func (s *Server) Listen() (net.Listener, error) {
	if err := CheckBind(s.cfg.Addr, s.tokens); err != nil {
		return nil, err
	}
	return net.Listen("tcp", s.cfg.Addr)
}

// Serve answers on l until ctx ends, then stops taking requests, interrupts the turns it runs
// (each records its interruption) and waits for them.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s.mux, ReadHeaderTimeout: s.cfg.ReadHeaderTimeout, ReadTimeout: s.cfg.ReadTimeout,
		WriteTimeout: s.cfg.WriteTimeout, IdleTimeout: s.cfg.IdleTimeout, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	serr := hs.Shutdown(shut)
	s.stopTurns()
	s.turns.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, serr)
}

// logf writes one line of the server's log.
func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, format+"\n", args...)
}
