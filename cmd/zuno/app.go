package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

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
}

func openApp(ctx context.Context) (*app, error) {
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
		a.store, err = esdb.Open(ctx, cfg.EventStoreURL)
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
	a.bus, err = commands.StartBus(ctx, a.handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *app) Close() error {
	var errs []error
	if a.bus != nil {
		errs = append(errs, a.bus.Close())
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
