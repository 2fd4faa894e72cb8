package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	adconfig "github.com/zuno-run/zuno/adapters/config"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zuno-run/zuno/adapters/bus"
	"github.com/zuno-run/zuno/adapters/credentials"
	"github.com/zuno-run/zuno/adapters/eventstore/esdb"
	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/adapters/instructions"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/catalog"
	"github.com/zuno-run/zuno/adapters/tools/continuity"
	"github.com/zuno-run/zuno/adapters/tools/delegate"
	"github.com/zuno-run/zuno/adapters/tools/questiontools"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// eventStore is everything the CLI uses of an event store adapter.
type eventStore interface {
	commands.EventStore
	projections.Feed
	ChainGenesis(ctx context.Context) (uint64, error)
	// ReadStreamBackward reads a stream's latest events: the work state loads from its
	// latest snapshot (commands.LoadWork).
	ReadStreamBackward(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
	Close() error
}

// app is the wired runtime of one CLI invocation: the adapters, and the Application every
// command talks to.
type app struct {
	*zapp.Application
	cfg      config
	registry *events.Registry
	store    eventStore
	rm       *readmodel.DB
	runner   *projections.Runner
	handlers *commands.Handlers
	bus      *commands.Bus
	turns    *turn.Driver
	// feed is the process's one live subscription (commands/live); stopFeed ends it.
	feed     *live.Feed
	stopFeed context.CancelFunc
	metrics  *prometheus.Registry

	// bg supervises this process's background tasks, per session: they outlive the turn
	// that started them and end with the process (docs/tools.md, "Background commands").
	bg *bg.Supervisor

	// The durable bus, when ZUNO_BUS_URL is set.
	busDB     *sql.DB
	transport *bus.Postgres
}

func openApp(ctx context.Context) (*app, error) { return open(ctx, false) }

// openWorker opens the runtime of `zuno worker`: it handles commands from the durable bus.
func openWorker(ctx context.Context) (*app, error) { return open(ctx, true) }

func open(ctx context.Context, worker bool) (*app, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, registry: events.NewRegistry(events.AllPayloads()...), metrics: prometheus.NewRegistry()}
	storeMetrics := storemetrics.New(a.metrics)
	switch {
	case isPostgres(cfg.EventStoreURL):
		a.store, err = sqlstore.OpenPostgres(ctx, cfg.EventStoreURL, sqlstore.WithMetrics(storeMetrics))
	case strings.HasPrefix(cfg.EventStoreURL, "esdb"):
		a.store, err = esdb.Open(ctx, cfg.EventStoreURL, esdb.WithMetrics(storeMetrics))
	default:
		a.store, err = sqlstore.OpenSQLite(ctx, cfg.DB, sqlstore.WithMetrics(storeMetrics))
	}
	if err != nil {
		return nil, fmt.Errorf("open event store: %w", err)
	}
	if cfg.ReadModelURL != "" {
		a.rm, err = readmodel.OpenPostgres(ctx, cfg.ReadModelURL, readmodel.WithReaderURL(cfg.ReadModelReaderURL))
	} else {
		a.rm, err = readmodel.OpenSQLite(ctx, cfg.DB)
	}
	if err != nil {
		a.store.Close()
		return nil, fmt.Errorf("open read models: %w", err)
	}
	a.runner = projections.NewRunner(a.rm.Writer, a.store, a.registry, projections.All(),
		projections.WithMetrics(projections.NewMetrics(a.metrics)))
	a.handlers = commands.NewHandlers(a.store, a.registry, commands.SystemClock{}, commands.NewMetrics(a.metrics))
	if a.bg, err = a.supervisor(); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.startBus(ctx, worker); err != nil {
		a.Close()
		return nil, err
	}
	a.startFeed()
	if a.turns, err = a.driver(); err != nil {
		a.Close()
		return nil, err
	}
	said := append(slices.Clone(cfg.Layers.Warnings), cfg.Notes...)
	settings := cfg.settings()
	if settings.QuestionDefer, err = questionDefer(); err != nil {
		a.Close()
		return nil, err
	}
	a.Application = zapp.New(settings, said, zapp.Ports{
		Send:         a.bus.Send,
		Log:          a.store,
		Driver:       a.turns,
		OpenProvider: openProvider(cfg, os.Stderr),
		Configure:    a.configure,
		Feed:         a.feed,
		Instructions: instructions.Read,
		Projections:  a.runner,
		Drift:        a.readModelDrift,
		Anchors:      anchorFiles{},
		VerifyRuns:   verify.NewMetrics(a.metrics),
		Jobs:         a.handlers,
		Work:         a.handlers.Work,
	}, a.queries())
	return a, nil
}

// configure resolves the configuration of a session working in dir: every layer as the
// process found it, but the project layer found from dir, never from the caller's working
// directory (docs/config.md, "Which files a turn read"). Storage stays the process's: the
// project layer may not set it.
func (a *app) configure(dir string) (zapp.SessionConfig, error) {
	cfg, err := loadConfigFrom(configOptionsIn(dir))
	if err != nil {
		return zapp.SessionConfig{}, err
	}
	sc := zapp.SessionConfig{Settings: cfg.settings(), Files: configFiles(cfg.Layers), Notes: append(slices.Clone(cfg.Layers.Warnings), cfg.Notes...)}
	c := toolCatalog(cfg, dataDir(a.cfg), a.handlers.WorkCommands(), a.Commands.Jobs(), a.Commands.Questions(), a.bg)
	if err := withSkillsAndMemory(&sc, c, cfg, dir, a.handlers.WorkCommands()); err != nil {
		return zapp.SessionConfig{}, err
	}
	sc.OpenTools = c.OpenTools()
	return sc, nil
}

// configFiles are the files among the layers, as a turn records them.
func configFiles(set *adconfig.Set) []events.ConfigFile {
	var out []events.ConfigFile
	for _, d := range set.Docs {
		if d.SHA256 != "" {
			out = append(out, events.ConfigFile{Layer: string(d.Layer), Path: d.Source, SHA256: d.SHA256})
		}
	}
	return out
}

// queries reads the read models once the process's one runner has brought them to the
// position a query must see (docs/storage.md, "Read-your-writes by position"): the runner
// starts following the log at the first wait, as this process's projector or, on Postgres,
// as a follower of the deployment's leader.
func (a *app) queries() *queries.Queries {
	return queries.New(a.store, a.registry, readModels{a.rm}, a.runner)
}

// driver is the turn driver of this process: it holds a lease on each turn it runs (and
// records itself as the owner, for logs an older build reads), watches the live feed for an
// interrupt, and treats a turn whose lease expired, or whose holder on this host has exited,
// as left behind.
func (a *app) driver() (*turn.Driver, error) {
	ttl, err := leaseTTL()
	if err != nil {
		return nil, err
	}
	clock := commands.SystemClock{}
	leases := &commands.Leases{Store: a.store, Registry: a.registry, Clock: clock, Holder: thisHolder(), TTL: ttl, Dead: holderGone}
	return &turn.Driver{Store: a.store, Registry: a.registry, Clock: clock, Owner: thisProcess(),
		Alive: processAlive, Leases: leases, Feed: a.feed, Metrics: turn.NewMetrics(a.metrics)}, nil
}

// supervisor is the process's background-task supervisor: task logs under the data directory,
// each task and its completion recorded in its session's bg stream, a task whose process is
// gone found lost.
func (a *app) supervisor() (*bg.Supervisor, error) {
	journal := &commands.BackgroundTasks{Store: a.store, Registry: a.registry, Clock: commands.SystemClock{}}
	return bg.NewSupervisor(bg.SupervisorConfig{Dir: filepath.Join(dataDir(a.cfg), "bg"), Journal: journal,
		Holder: thisHolder(), HolderGone: holderGone})
}

// scratchSupervisor supervises background tasks that are never recorded: for a surface that
// is opened only to read its declarations (zuno debug agent), under a scratch dir.
func scratchSupervisor(dir string) (*bg.Supervisor, error) {
	return bg.NewSupervisor(bg.SupervisorConfig{Dir: filepath.Join(dir, "bg")})
}

// readModels adapts the read-model database to the queries' port.
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

// dataDir is Zuno's data directory, zuno under $XDG_DATA_HOME (else ~/.local/share): the
// auth file, and artifacts and background output per session. It does not follow ZUNO_DB, so
// a database file put anywhere does not grow directories beside it (docs/config.md, "Provider
// keys"; docs/tools.md). Without a home it falls back to the database's directory.
func dataDir(cfg config) string {
	if base := xdgDataHome(); base != "" {
		return filepath.Join(base, "zuno")
	}
	return filepath.Dir(cfg.DB)
}

// openTools is the session's tool catalogue as this configuration sets it up (package
// adapters/tools/catalog): work runs the plan and todo tools, sup the background tasks of the
// process.
func openTools(cfg config, dir string, work worktools.Commands, jobs delegate.Jobs, questions questiontools.Port, sup *bg.Supervisor) turn.OpenTools {
	return toolCatalog(cfg, dir, work, jobs, questions, sup).OpenTools()
}

// toolCatalog is openTools' catalogue, before it is opened.
func toolCatalog(cfg config, dir string, work worktools.Commands, jobs delegate.Jobs, questions questiontools.Port, sup *bg.Supervisor) *catalog.Catalog {
	c := &catalog.Catalog{Sandbox: cfg.SandboxConfig, EnvExclude: cfg.EnvExclude, MaxBytes: cfg.ToolOutput.MaxBytes,
		MaxLines: cfg.ToolOutput.MaxLines, MaxArtifactBytes: cfg.ToolOutput.MaxArtifactBytes,
		MaxSessionArtifactBytes: cfg.ToolOutput.MaxSessionArtifactBytes, DataDir: dir, Work: work, Jobs: jobs, Questions: questions, Supervisor: sup,
		Own: func(workspace string) sandbox.Locations { return ownLocationsFor(cfg, workspace) }, MCP: mcpCatalog(cfg)}
	if b, ok := work.(continuity.Backend); ok && cfg.Continuity.Enabled {
		c.Continuity = b
	}
	c.WebSearch = cfg.webSearch
	return c
}

// thisProcess is the owner recorded on the turns this process drives.
func thisProcess() *events.TurnOwner {
	host, _ := os.Hostname()
	return &events.TurnOwner{Host: host, PID: os.Getpid()}
}

// defaultLeaseTTL is how long a turn's lease lasts unless renewed (a third of it apart): how
// long a turn whose process vanished with its host blocks its session.
const defaultLeaseTTL = 30 * time.Second

// questionDefer is ZUNO_QUESTION_DEFER (a Go duration, 1s to 1h): the deferral period of a
// waiting question, else the native 120 s (docs/questions.md); tests shorten it.
func questionDefer() (time.Duration, error) {
	v := os.Getenv("ZUNO_QUESTION_DEFER")
	if v == "" {
		return zapp.DefaultQuestionDefer, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > time.Hour {
		return 0, &configError{fmt.Sprintf("ZUNO_QUESTION_DEFER %q: want a duration from 1s to 1h, such as 120s, or unset it for %v", v, zapp.DefaultQuestionDefer)}
	}
	return d, nil
}

// leaseTTL is ZUNO_TURN_LEASE (a Go duration, 1s to 1h), else the default.
func leaseTTL() (time.Duration, error) {
	v := os.Getenv("ZUNO_TURN_LEASE")
	if v == "" {
		return defaultLeaseTTL, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > time.Hour {
		return 0, &configError{fmt.Sprintf("ZUNO_TURN_LEASE %q: want a duration from 1s to 1h, such as 30s, or unset it for %v", v, defaultLeaseTTL)}
	}
	return d, nil
}

// thisHolder names this process as a lease holder: host, pid and a random part, so a reused
// pid is another holder.
func thisHolder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), zapp.NewID("")[:8])
}

// holderGone reports whether a holder is a process of this host that has exited: its lease
// binds no one even before it expires. Another host's holder is never known gone.
func holderGone(holder string) bool {
	parts := strings.Split(holder, "/")
	if len(parts) != 3 {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	host, _ := os.Hostname()
	return parts[0] == host && pid != os.Getpid() && !processAlive(events.TurnOwner{Host: host, PID: pid})
}

// processAlive reports whether a turn's owner may still be running: a process on another
// host cannot be checked, so it counts as alive (--recover overrides).
func processAlive(o events.TurnOwner) bool {
	host, _ := os.Hostname()
	if o.Host != host {
		return true
	}
	if o.PID <= 0 || o.PID == os.Getpid() {
		return false
	}
	err := syscall.Kill(o.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// busIdleConns is how many idle connections the durable bus keeps: one per poller and a few
// for publishing, heartbeats and delivery counts.
const busIdleConns = 16

// startBus starts the command bus: in process by default; with a bus URL, on Postgres, where
// this process only sends commands unless it is a worker.
func (a *app) startBus(ctx context.Context, worker bool) error {
	if a.cfg.BusURL == "" { // every command is handled here, a worker's reactions' included
		var err error
		a.bus, err = commands.StartBus(ctx, a.handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
		return err
	}
	db, err := sql.Open("postgres", a.cfg.BusURL)
	if err != nil {
		return err
	}
	// Each subscribed topic polls in a transaction of its own (nine command topics on a worker,
	// the reply queue on every process): with database/sql's default of two idle connections
	// most polls opened a new one, and a command's round trip took 85-93 ms instead of 47-54
	// (BenchmarkCommandRoundTrip, adapters/bus).
	db.SetMaxIdleConns(busIdleConns)
	a.busDB = db
	// Reply queues are registered under this process's holder name, so one left by a process
	// of this host that exited is dropped at once (docs/storage.md, "Reply queues").
	a.transport, err = bus.NewPostgres(ctx, db, bus.Config{Holder: thisHolder(), Gone: holderGone, Metrics: bus.NewMetrics(a.metrics)})
	if err != nil {
		return fmt.Errorf("start the durable bus on %s: %w", redact(a.cfg.BusURL), err)
	}
	handlers := a.handlers
	if !worker {
		handlers = nil
	}
	a.bus, err = commands.StartBus(ctx, handlers, a.transport.Transport(), nil)
	return err
}

// startFeed starts the process's live feed: every wait of this process (a turn's answer)
// follows it, whatever command runs.
func (a *app) startFeed() {
	var ctx context.Context
	ctx, a.stopFeed = context.WithCancel(context.Background())
	a.feed = live.New(a.store)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.feed.Run(ctx)
	}()
	stop := a.stopFeed
	a.stopFeed = func() { stop(); <-done }
}

func (a *app) Close() error {
	var errs []error
	if a.Application != nil {
		// Before anything it writes to closes: a delegated job or a report's delivery (a
		// question answered wakes its session) still running is cancelled and waited for; it
		// records its turn interrupted and its input stays in the inbox for the next run.
		a.Commands.StopJobs()
	}
	if a.bg != nil {
		// First: stopping the tasks records their completions in the store closed below.
		errs = append(errs, a.bg.Close())
	}
	if a.stopFeed != nil {
		a.stopFeed() // before the store it reads is closed
	}
	if a.bus != nil {
		errs = append(errs, a.bus.Close())
	}
	if a.transport != nil {
		errs = append(errs, a.transport.Close())
	}
	if a.busDB != nil {
		errs = append(errs, a.busDB.Close())
	}
	errs = append(errs, a.runner.Close(), a.rm.Close(), a.store.Close())
	return errors.Join(errs...)
}

// openProvider opens a provider spec with the configuration's provider settings and the key
// adapters/credentials resolves, so the key may live in the ZUNO_* namespace or the auth file,
// both withheld from tool commands. A key taken from a host variable still works; the user is
// told once per application (however many turns it runs) that tools can see it. A local
// server's family takes no host key.
func openProvider(cfg config, stderr io.Writer) func(spec string) (model.Provider, error) {
	var hostKeyWarning sync.Once
	return func(spec string) (model.Provider, error) {
		if strings.HasPrefix(spec, "scripted:") {
			return provider.Open(spec)
		}
		r, err := provider.Resolve(spec, cfg.Provider, os.Getenv)
		if err != nil || r.APIKey != "" || r.KeyFrom == "" {
			return provider.OpenConfigured(spec, cfg.Provider, os.Getenv, "")
		}
		f := authFile(cfg)
		key, err := credentials.Resolve(r.KeyFrom, os.Getenv, f)
		if err != nil {
			return nil, err
		}
		// Refused here, before the session is created or a request sent (issue 12 item 3).
		if key.Value == "" && r.NeedsKey() {
			return nil, credentials.Missing(r.KeyFrom, provider.BaseURLVar(r.KeyFrom), f)
		}
		if key.Origin == credentials.OriginHost {
			hostKeyWarning.Do(func() { fmt.Fprintln(stderr, "zuno: warning: "+credentials.HostWarning(key, f)) })
		}
		return provider.OpenConfigured(spec, cfg.Provider, os.Getenv, key.Value)
	}
}

// readModelDrift replays the log, up to where the read models are, into a scratch SQLite read
// model and compares the two (docs/storage.md, "Read-model drift").
func (a *app) readModelDrift(ctx context.Context) ([]projections.Drift, error) {
	upTo, err := a.runner.CatchUp(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zuno-verify-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	scratch, err := readmodel.OpenSQLite(ctx, filepath.Join(dir, "replay.db"))
	if err != nil {
		return nil, err
	}
	defer scratch.Close()
	replay := projections.NewRunner(scratch.Writer, projections.UpTo(a.store, upTo), a.registry, projections.All())
	if _, err := replay.CatchUp(ctx); err != nil {
		return nil, fmt.Errorf("replay the log into a scratch read model: %w", err)
	}
	return projections.CompareReadModels(ctx, a.rm.Writer, scratch.Writer, projections.All(), upTo)
}

// metricsHandler serves every collector of this process, the Go runtime's and the process's
// own beside Zuno's (docs/server.md, "Metrics").
func (a *app) metricsHandler() http.Handler {
	a.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h := promhttp.HandlerFor(a.metrics, promhttp.HandlerOpts{Registry: a.metrics})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// zuno_projection_lag_events is set by a status check; without one at each scrape a
		// server never reported it, and the projection-lag alert and panel read nothing
		// (docs/operations.md). An error leaves the last values: a scrape still answers.
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		a.runner.Status(ctx)
		cancel()
		h.ServeHTTP(w, r)
	})
}
