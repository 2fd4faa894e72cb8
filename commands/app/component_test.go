package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	zanchor "github.com/zuno-run/zuno/adapters/anchor"
	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/adapters/instructions"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/tools/delegate"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Component tests of the Application, in the shape of wild-workouts' component tests: the
// Application is built through its ports over real adapters (the in-memory event store, a
// SQLite read model in a temporary directory, the command bus in process, the real file and
// work tools, the scripted provider), commands are run through Application.Commands, and
// every assertion reads back through Application.Queries (or the workspace's files).

// component is one Application and what the test needs to reach around it.
type component struct {
	t         testing.TB
	app       *app.Application
	store     *memstore.Store
	rm        *readmodel.DB
	workspace string
	scripts   string
	// metrics holds the collectors the Application is given (verification runs).
	metrics *prometheus.Registry
	// afterRead, when a test sets it before the Application runs anything, is called after
	// each stream read of the Application's log, before the read returns: a test pauses
	// there to force an interleaving of a read with the process's own work.
	afterRead func(ctx context.Context, stream string)
	// wrapProvider, when set, wraps every provider the Application opens (a test records the
	// requests sent).
	wrapProvider func(model.Provider) model.Provider
}

// pausableLog is the event store as the Application reads it (Ports.Log), with the
// component's afterRead after each stream read.
type pausableLog struct {
	*memstore.Store
	c *component
}

func (l pausableLog) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	recs, err := l.Store.ReadStream(ctx, stream, from, limit)
	if l.c.afterRead != nil {
		l.c.afterRead(ctx, stream)
	}
	return recs, err
}

// newComponent builds the Application; each option may change its settings first.
func newComponent(t testing.TB, options ...func(*app.Settings)) *component {
	t.Helper()
	ctx := context.Background()
	// The global AGENTS.md is read from the user's configuration directory: make it the test's.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	c := &component{t: t, store: memstore.New(), workspace: t.TempDir(), scripts: t.TempDir(), metrics: prometheus.NewRegistry()}
	t.Cleanup(func() { c.store.Close() })
	registry := events.NewRegistry(events.AllPayloads()...)
	rm, err := readmodel.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rm.db"))
	if err != nil {
		t.Fatal(err)
	}
	c.rm = rm
	runner := projections.NewRunner(rm.Writer, c.store, registry, projections.All())
	t.Cleanup(func() { runner.Close(); rm.Close() })
	handlers := commands.NewHandlers(c.store, registry, commands.SystemClock{}, nil)
	bus, err := commands.StartBus(ctx, handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close() })
	feed := live.New(c.store)
	feedCtx, stopFeed := context.WithCancel(ctx)
	go feed.Run(feedCtx)
	t.Cleanup(stopFeed)
	artifacts := t.TempDir()
	settings := app.Settings{Model: "scripted:" + filepath.Join(c.scripts, "default.json"), Home: t.TempDir()}
	for _, o := range options {
		o(&settings)
	}
	q := queries.New(c.store, registry, readModels{rm}, runner)
	c.app = app.New(settings, nil, app.Ports{
		Send:   bus.Send,
		Log:    pausableLog{c.store, c},
		Driver: &turn.Driver{Store: c.store, Registry: registry, Clock: commands.SystemClock{}, Feed: feed},
		OpenProvider: func(spec string) (model.Provider, error) {
			p, err := provider.Open(spec)
			if err == nil && c.wrapProvider != nil {
				p = c.wrapProvider(p)
			}
			return p, err
		},
		Configure: func(dir string) (app.SessionConfig, error) {
			return app.SessionConfig{Settings: settings, OpenTools: openTools(artifacts, handlers.WorkCommands(), c.app.Commands.Jobs())}, nil
		},
		Feed:         feed,
		Instructions: instructions.Read,
		Projections:  runner,
		Drift:        drift(t.TempDir(), c.store, registry, runner, rm),
		Anchors:      anchorFiles{},
		VerifyRuns:   verify.NewMetrics(c.metrics),
		Jobs:         handlers,
		Work:         handlers.Work,
	}, q)
	return c
}

// openTools are the real file, shell, work and delegation tools over the session's workspace;
// the shell runs natively (the sandbox has tests of its own).
func openTools(artifacts string, work worktools.Commands, jobs delegate.Jobs) turn.OpenTools {
	return func(req turn.ToolsRequest) (turn.Surface, error) {
		set, err := toolset.New(toolset.Config{Root: req.Dir, ArtifactDir: filepath.Join(artifacts, req.SessionID), SessionID: req.SessionID})
		if err != nil {
			return nil, err
		}
		return surface(slices.Concat(set.Tools(), worktools.New(work), delegate.New(jobs))), nil
	}
}

type surface []turn.Tool

func (s surface) Tools() []turn.Tool            { return s }
func (s surface) Confinement() turn.Confinement { return turn.Confinement{} }
func (s surface) Close() error                  { return nil }

// readModels is the read-model database as the queries' port.
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

// drift replays the log into a scratch SQLite read model under scratchDirs and compares, as the
// CLI's wiring does.
func drift(scratchDirs string, store *memstore.Store, registry *events.Registry, runner *projections.Runner, rm *readmodel.DB) func(context.Context) ([]projections.Drift, error) {
	return func(ctx context.Context) ([]projections.Drift, error) {
		upTo, err := runner.CatchUp(ctx)
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(scratchDirs, "drift-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		scratch, err := readmodel.OpenSQLite(ctx, filepath.Join(dir, "replay.db"))
		if err != nil {
			return nil, err
		}
		defer scratch.Close()
		replay := projections.NewRunner(scratch.Writer, projections.UpTo(store, upTo), registry, projections.All())
		if _, err := replay.CatchUp(ctx); err != nil {
			return nil, err
		}
		return projections.CompareReadModels(ctx, rm.Writer, scratch.Writer, projections.All(), upTo)
	}
}

// anchorFiles are unsigned anchor files.
type anchorFiles struct{}

func (anchorFiles) Read(path string) (app.AnchorFile, bool, error) {
	f, ok, err := zanchor.Read(path, zanchor.Keys{})
	return appAnchor(f), ok, err
}

func (anchorFiles) Seal(heads []events.StreamHead, chain string, counter uint64, previous string, now time.Time) app.AnchorFile {
	return appAnchor(zanchor.New(heads, chain, counter, previous, now))
}

func (anchorFiles) Write(path string, a app.AnchorFile) error {
	return zanchor.Write(path, zanchor.New(a.Heads, a.Chain, a.Counter, a.Previous, a.CreatedAt), zanchor.Keys{})
}

func appAnchor(f zanchor.File) app.AnchorFile {
	return app.AnchorFile{Chain: f.Chain, Counter: f.Counter, Previous: f.Previous, Digest: zanchor.Digest(f), CreatedAt: f.CreatedAt, Heads: f.Heads}
}

func (anchorFiles) Signs() bool { return false }
func (anchorFiles) Keyed() bool { return false }

// script writes a scripted provider file and returns its model spec.
func (c *component) script(name, body string) string {
	c.t.Helper()
	p := filepath.Join(c.scripts, name+".json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return "scripted:" + p
}

// run runs one turn and fails the test when it does not complete.
func (c *component) run(t *testing.T, in app.RunTurn) app.TurnResult {
	t.Helper()
	if in.Cwd == "" {
		in.Cwd = c.workspace
	}
	res, err := c.app.Commands.RunTurn(context.Background(), in)
	if err != nil {
		t.Fatalf("run turn: %v", err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("turn %s: %v", res.Reason, err)
	}
	return res
}

// file writes a file of the workspace.
func (c *component) file(name, body string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.workspace, name), []byte(body), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func meta(id string) commands.Meta { return commands.Meta{CommandID: id, Actor: "user"} }

// contains fails unless v, as JSON, holds needle.
func contains(t *testing.T, v any, needle string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), needle) {
		t.Fatalf("%q not in %s", needle, b)
	}
}

// code fails unless err carries the stable code want.
func code(t *testing.T, err error, want string) {
	t.Helper()
	if got := app.CodeOf(err); got != want {
		t.Fatalf("code %q, want %q (%v)", got, want, err)
	}
}
