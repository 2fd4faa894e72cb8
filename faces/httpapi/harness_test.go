package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/instructions"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/tools/goaltools"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/faces/httpapi"
	"github.com/zuno-run/zuno/projections"
)

// The API's tests run a real server on 127.0.0.1 over a real Application: an embedded SQLite
// event store and read models in a temporary directory, the command bus in process, the real
// file tools and the scripted provider, wired as cmd/zuno wires them.

// fixture is one server and what a test reaches around it.
type fixture struct {
	t         *testing.T
	app       *app.Application
	store     *sqlstore.Store
	handlers  *commands.Handlers
	base      string // http://127.0.0.1:PORT
	token     string
	workspace string
	scripts   string
}

// permissionAsk makes every edit ask, so a scripted write waits for a reply through the API.
const permissionAsk = `{"rules": {"edit": "ask"}}`

type options struct {
	tokens map[string]string
	cfg    func(*httpapi.Config)
	// postgres puts the event store and the read models on a fresh database of the Postgres
	// server ZUNO_TEST_POSTGRES_URL names (skipped without one); SQLite otherwise.
	postgres bool
}

// dialects runs test on the embedded SQLite store and on Postgres.
func dialects(t *testing.T, test func(t *testing.T, postgres bool)) {
	t.Run("sqlite", func(t *testing.T) { test(t, false) })
	t.Run("postgres", func(t *testing.T) { test(t, true) })
}

// openStores opens the event store and the read models of a fixture.
func openStores(t *testing.T, postgres bool) (*sqlstore.Store, *readmodel.DB) {
	t.Helper()
	ctx := context.Background()
	var store *sqlstore.Store
	var rm *readmodel.DB
	var err error
	if postgres {
		url := pgtest.NewDatabase(t)
		if store, err = sqlstore.OpenPostgres(ctx, url); err == nil {
			rm, err = readmodel.OpenPostgres(ctx, url)
		}
	} else {
		path := filepath.Join(t.TempDir(), "zuno.db")
		if store, err = sqlstore.OpenSQLite(ctx, path); err == nil {
			rm, err = readmodel.OpenSQLite(ctx, path)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, rm
}

func newFixture(t *testing.T, o options) *fixture {
	t.Helper()
	ctx := context.Background()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	f := &fixture{t: t, workspace: t.TempDir(), scripts: t.TempDir()}
	store, rm := openStores(t, o.postgres)
	f.store = store
	registry := events.NewRegistry(events.AllPayloads()...)
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All())
	t.Cleanup(func() { runner.Close(); rm.Close() })
	handlers := commands.NewHandlers(store, registry, commands.SystemClock{}, nil)
	f.handlers = handlers
	bus, err := commands.StartBus(ctx, handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close() })
	feed := live.New(store)
	feedCtx, stopFeed := context.WithCancel(ctx)
	feedDone := make(chan struct{})
	go func() { defer close(feedDone); feed.Run(feedCtx) }()
	t.Cleanup(func() { stopFeed(); <-feedDone })
	settings := app.Settings{Model: "scripted:" + filepath.Join(f.scripts, "default.json"), Home: t.TempDir(),
		Permission: []settings.Raw{{Layer: settings.Global, Source: "test", JSON: json.RawMessage(permissionAsk)}}}
	artifacts := t.TempDir()
	clock := commands.SystemClock{}
	leases := &commands.Leases{Store: store, Registry: registry, Clock: clock, Holder: "test/1/" + t.Name(), TTL: 30 * time.Second}
	f.app = app.New(settings, nil, app.Ports{
		Send:         bus.Send,
		Log:          store,
		Driver:       &turn.Driver{Store: store, Registry: registry, Clock: clock, Feed: feed, Leases: leases},
		OpenProvider: func(spec string) (model.Provider, error) { return provider.Open(spec) },
		Configure: func(string) (app.SessionConfig, error) {
			return app.SessionConfig{Settings: settings, OpenTools: openTools(artifacts, handlers.WorkCommands())}, nil
		},
		Feed:         feed,
		Instructions: instructions.Read,
		Projections:  runner,
		Jobs:         handlers,
		Drift:        func(context.Context) ([]projections.Drift, error) { return nil, nil },
	}, queries.New(store, registry, readModels{rm}, runner))

	tokens := &httpapi.Tokens{}
	for name, tok := range o.tokens {
		if err := tokens.Add(name, tok); err != nil {
			t.Fatal(err)
		}
		f.token = tok
	}
	cfg := httpapi.Config{Addr: "127.0.0.1:0", Tokens: tokens, Cwd: f.workspace, Log: testLog{t}}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	srv := httpapi.New(f.app, cfg)
	l, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	f.base = "http://" + l.Addr().String()
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, l) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	f.writeScript("default", `{"turns":[{"text":"hello"}]}`)
	return f
}

// testLog is the server's log in the test's output. Tests check that no token is in it.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func openTools(artifacts string, work worktools.Commands) turn.OpenTools {
	return func(req turn.ToolsRequest) (turn.Surface, error) {
		set, err := toolset.New(toolset.Config{Root: req.Dir, ArtifactDir: filepath.Join(artifacts, req.SessionID), SessionID: req.SessionID})
		if err != nil {
			return nil, err
		}
		all := append(set.Tools(), worktools.New(work)...)
		if g, ok := work.(goaltools.Commands); ok {
			all = append(all, goaltools.New(g)...)
		}
		return surface(all), nil
	}
}

type surface []turn.Tool

func (s surface) Tools() []turn.Tool            { return s }
func (s surface) Confinement() turn.Confinement { return turn.Confinement{} }
func (s surface) Close() error                  { return nil }

type readModels struct{ db *readmodel.DB }

func (r readModels) Query(ctx context.Context, sql string, limit int, args ...any) (queries.Table, error) {
	rows, err := r.db.Query(ctx, sql, limit, args...)
	if err != nil {
		return queries.Table{}, err
	}
	return queries.Table{Columns: rows.Columns, Rows: rows.Rows}, nil
}

func (r readModels) UserQuery(ctx context.Context, sql string, b queries.UserBounds, sink queries.RowSink) (queries.UserSummary, error) {
	s, err := r.db.UserQuery(ctx, sql, readmodel.UserOptions{Limit: b.Limit, MaxBytes: b.MaxBytes, Timeout: b.Timeout}, sink)
	return queries.UserSummary(s), err
}

// writeScript writes the scripted provider's file name.json; "default" is the server's model.
func (f *fixture) writeScript(name, body string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.scripts, name+".json"), []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// code is the error code of an error answer ("" for another).
func (r response) code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// do sends a request with the fixture's token (when it has one) and extra headers.
func (f *fixture) do(method, path, body string, headers ...string) response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, b}
}

// accepted is a turn's 202.
type accepted struct {
	CommandID, SessionID, TurnID, Events string
	Outcome                              *struct {
		Reason    string
		Duplicate bool
	}
}

// start posts a new session's first turn and returns its 202.
func (f *fixture) start(commandID, prompt string) accepted {
	f.t.Helper()
	r := f.do("POST", "/api/sessions", fmt.Sprintf(`{"commandId":%q,"prompt":%q}`, commandID, prompt))
	if r.status != http.StatusAccepted {
		f.t.Fatalf("start: %d %s", r.status, r.body)
	}
	var a accepted
	r.decode(f.t, &a)
	return a
}

// waitTurn waits until the session's turn has finished and returns its status.
func (f *fixture) waitTurn(sessionID, turnID string) string {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		info, err := f.app.Queries.Session(context.Background(), sessionID)
		if err == nil {
			for _, tr := range info.Turns {
				if tr.TurnID == turnID && tr.Status != queries.TurnOpen {
					return tr.Status
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Fatalf("turn %s of %s did not finish", turnID, sessionID)
	return ""
}

// sseEvent is one event of a stream as a client reads it.
type sseEvent struct {
	id   string
	data string
}

// openStream opens an event stream; events arrive on the channel until the context ends.
func (f *fixture) openStream(ctx context.Context, path, lastID string) (<-chan sseEvent, *http.Response) {
	f.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.base+path, nil)
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	out := make(chan sseEvent, 64)
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		close(out)
		return out, res
	}
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.id != "":
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
				ev = sseEvent{}
			}
		}
	}()
	return out, res
}

// rawConn opens a TCP connection to the server, for the slow and malformed clients.
func (f *fixture) rawConn() net.Conn {
	f.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

func sleep() { time.Sleep(20 * time.Millisecond) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
