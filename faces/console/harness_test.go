package console_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/instructions"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/tools/delegate"
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

// The console's tests run `zuno serve`'s server (faces/httpapi, which mounts the console) on
// 127.0.0.1 over a real Application: a SQLite event store and read models in a temporary
// file, the command bus in process, the real file, shell, work and delegation tools, and the
// scripted provider, wired as cmd/zuno wires them. The sessions are real turns.

// fixture is one server and what a test reaches around it.
type fixture struct {
	t         testing.TB
	app       *app.Application
	dbPath    string
	base      string
	token     string
	workspace string
	scripts   string
}

// options are a fixture's: its workspace directory's name, the server's tokens, and whether
// the log and the read models are on a fresh database of the Postgres server
// ZUNO_TEST_POSTGRES_URL names (skipped without one) rather than a SQLite file.
type options struct {
	workspace string
	tokens    map[string]string
	postgres  bool
}

func newFixture(t testing.TB, o options) *fixture {
	t.Helper()
	workspaceName, tokens := o.workspace, o.tokens
	if workspaceName == "" {
		workspaceName = "work"
	}
	ctx := context.Background()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	f := &fixture{t: t, workspace: filepath.Join(t.TempDir(), workspaceName), scripts: t.TempDir()}
	if err := os.Mkdir(f.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	store, rm := f.openStores(o.postgres)
	registry := events.NewRegistry(events.AllPayloads()...)
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All())
	t.Cleanup(func() { runner.Close(); rm.Close() })
	handlers := commands.NewHandlers(store, registry, commands.SystemClock{}, nil)
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
	// A global rule denies git push, so a call the gate refuses shows its rule and layer.
	settings := app.Settings{Model: "scripted:" + filepath.Join(f.scripts, "default.json"), Home: t.TempDir(),
		Permission: []settings.Raw{{Layer: settings.Global, Source: "test", JSON: json.RawMessage(`{"rules": {"shell": {"git push*": "deny"}}}`)}}}
	artifacts := t.TempDir()
	clock := commands.SystemClock{}
	leases := &commands.Leases{Store: store, Registry: registry, Clock: clock, Holder: "test/1/" + t.Name(), TTL: 30 * time.Second}
	f.app = app.New(settings, nil, app.Ports{
		Send:         bus.Send,
		Log:          store,
		Driver:       &turn.Driver{Store: store, Registry: registry, Clock: clock, Feed: feed, Leases: leases},
		OpenProvider: func(spec string) (model.Provider, error) { return provider.Open(spec) },
		Configure: func(string) (app.SessionConfig, error) {
			return app.SessionConfig{Settings: settings, OpenTools: f.openTools(artifacts, handlers.WorkCommands())}, nil
		},
		Feed:         feed,
		Instructions: instructions.Read,
		Projections:  runner,
		Jobs:         handlers,
		Work:         handlers.Work,
		Drift:        func(context.Context) ([]projections.Drift, error) { return nil, nil },
	}, queries.New(store, registry, readModels{rm}, runner))

	tk := &httpapi.Tokens{}
	for name, tok := range tokens {
		if err := tk.Add(name, tok); err != nil {
			t.Fatal(err)
		}
		f.token = tok
	}
	srv := httpapi.New(f.app, httpapi.Config{Addr: "127.0.0.1:0", Tokens: tk, Cwd: f.workspace, Log: io.Discard})
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
	return f
}

// openStores opens the event store and the read models on one database.
func (f *fixture) openStores(postgres bool) (*sqlstore.Store, *readmodel.DB) {
	f.t.Helper()
	ctx := context.Background()
	var store *sqlstore.Store
	var rm *readmodel.DB
	var err error
	if postgres {
		url := pgtest.NewDatabase(f.t)
		if store, err = sqlstore.OpenPostgres(ctx, url); err == nil {
			rm, err = readmodel.OpenPostgres(ctx, url)
		}
	} else {
		f.dbPath = filepath.Join(f.t.TempDir(), "zuno.db")
		if store, err = sqlstore.OpenSQLite(ctx, f.dbPath); err == nil {
			rm, err = readmodel.OpenSQLite(ctx, f.dbPath)
		}
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { store.Close() })
	return store, rm
}

// openTools are the real file, shell, work and delegation tools; the shell runs natively
// (the sandbox has tests of its own).
func (f *fixture) openTools(artifacts string, work worktools.Commands) turn.OpenTools {
	return func(req turn.ToolsRequest) (turn.Surface, error) {
		set, err := toolset.New(toolset.Config{Root: req.Dir, ArtifactDir: filepath.Join(artifacts, req.SessionID), SessionID: req.SessionID})
		if err != nil {
			return nil, err
		}
		return surface(slices.Concat(set.Tools(), worktools.New(work), delegate.New(f.app.Commands.Jobs()))), nil
	}
}

type surface []turn.Tool

func (s surface) Tools() []turn.Tool { return s }

// Confinement says what the test's shell does: it runs commands natively, as
// danger-full-access would (the permission mode is left as configured, so the gate's rules
// decide and the timeline shows them).
func (s surface) Confinement() turn.Confinement {
	return turn.Confinement{Resolution: &events.SandboxResolution{RequestedMode: "danger-full-access", Network: "enabled",
		EffectiveAuthority: "danger-full-access", ResolutionKind: "full_access", Reason: "test_native"}}
}
func (s surface) Close() error { return nil }

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

// script writes a scripted provider file and returns its model spec.
func (f *fixture) script(name string, s scripted.Script) string {
	f.t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		f.t.Fatal(err)
	}
	p := filepath.Join(f.scripts, name+".json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	return "scripted:" + p
}

// run runs one turn to its end through the Application, as zuno run does.
func (f *fixture) run(in app.RunTurn) app.TurnResult {
	f.t.Helper()
	if in.Cwd == "" {
		in.Cwd = f.workspace
	}
	res, err := f.app.Commands.RunTurn(context.Background(), in)
	if err != nil {
		f.t.Fatalf("run %s: %v", in.Meta.CommandID, err)
	}
	return res
}

func meta(id string) commands.Meta { return commands.Meta{CommandID: id, Actor: "test"} }

// get fetches a page with the fixture's token, when it has one.
func (f *fixture) get(path string, headers ...string) (int, http.Header, string) {
	f.t.Helper()
	req, err := http.NewRequest("GET", f.base+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
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
	return res.StatusCode, res.Header, string(b)
}

// tamper changes recorded events behind the store's back, as an attacker with the database
// file would.
func (f *fixture) tamper(query string, args ...any) {
	f.t.Helper()
	db, err := sql.Open("sqlite", f.dbPath)
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(query, args...)
	if err != nil {
		f.t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		f.t.Fatalf("tamper changed nothing: %s", query)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
