package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zuno-run/zuno/adapters/bus"
	"github.com/zuno-run/zuno/adapters/eventstore/esdb"
	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// eventStore is everything the CLI uses of an event store adapter.
type eventStore interface {
	commands.EventStore
	projections.Feed
	Close() error
}

// app is the wired runtime of one CLI invocation.
type app struct {
	cfg      config
	registry *events.Registry
	store    eventStore
	rm       *readmodel.DB
	runner   *projections.Runner
	handlers *commands.Handlers
	bus      *commands.Bus
	metrics  *prometheus.Registry

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
		a.rm, err = readmodel.OpenPostgres(ctx, cfg.ReadModelURL)
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
	if err := a.startBus(ctx, worker); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// startBus starts the command bus: in process by default; with a bus URL, on Postgres, where
// this process only sends commands unless it is a worker.
func (a *app) startBus(ctx context.Context, worker bool) error {
	if a.cfg.BusURL == "" {
		if worker {
			return &configError{"zuno worker needs ZUNO_BUS_URL (postgres://…): without it every zuno command handles its own commands"}
		}
		var err error
		a.bus, err = commands.StartBus(ctx, a.handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
		return err
	}
	db, err := sql.Open("postgres", a.cfg.BusURL)
	if err != nil {
		return err
	}
	a.busDB = db
	a.transport, err = bus.NewPostgres(ctx, db, nil)
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

func (a *app) Close() error {
	var errs []error
	if a.bus != nil {
		errs = append(errs, a.bus.Close())
	}
	if a.transport != nil {
		errs = append(errs, a.transport.Close())
	}
	if a.busDB != nil {
		errs = append(errs, a.busDB.Close())
	}
	errs = append(errs, a.rm.Close(), a.store.Close())
	return errors.Join(errs...)
}

// send delivers a command, then brings the read models up to its events, so that the next
// `zuno db` sees them (read-your-writes).
func (a *app) send(ctx context.Context, cmd any) (commands.Result, error) {
	res, err := a.bus.Send(ctx, cmd)
	if err != nil {
		return res, err
	}
	if _, err := a.runner.CatchUp(ctx); err != nil {
		return res, fmt.Errorf("command done, but the read models did not catch up: %w", err)
	}
	return res, res.Err()
}
