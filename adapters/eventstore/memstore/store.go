// Package memstore is an event store held in memory. Nothing survives the process.
//
// It exists so that the command handlers and the turn driver can be unit-tested quickly,
// without a SQLite file per test. It is nonetheless a whole store, not a stub: it passes the
// same conformance suite as the SQL stores (expected revisions, idempotent re-appends, event
// ids unique across streams, catch-up-then-live subscriptions), so code tested against it
// behaves the same on a durable store.
//
// The events live in a Log; a Store is one handle on it. Stores opened over the same Log see
// the same events, as processes sharing one database do.
package memstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// adapterName labels this store's metrics.
const adapterName = "memory"

// subscribeBatch bounds how many events a subscriber copies under one read lock, so that a
// long catch-up does not hold appenders off for its whole length.
const subscribeBatch = 512

// ErrClosed is returned by calls made after Close, and by Subscribe when Close ends it.
var ErrClosed = errors.New("memstore: store is closed")

// Store is a handle on a Log. It is safe for concurrent use.
type Store struct {
	log     *Log
	metrics *storemetrics.Metrics
	closed  chan struct{}
	once    sync.Once
}

// Option configures a Store.
type Option func(*Store)

// WithMetrics reports appends to m, labelled adapter="memory", instead of to unregistered
// collectors.
func WithMetrics(m *storemetrics.Metrics) Option { return func(s *Store) { s.metrics = m } }

// New opens a Store over a new, empty Log.
func New(opts ...Option) *Store { return Open(NewLog(), opts...) }

// Open opens a Store over log.
func Open(log *Log, opts ...Option) *Store {
	s := &Store{log: log, closed: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = storemetrics.New(nil)
	}
	return s
}

// Close ends this handle and its subscriptions. The Log and other Stores over it are not
// affected.
func (s *Store) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// usable reports why a call cannot proceed: its context ended or the store is closed.
func (s *Store) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.closed:
		return ErrClosed
	default:
		return nil
	}
}

// Append implements the store contract; see storetest.Store.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.Event) (events.AppendResult, error) {
	started := time.Now()
	if err := events.ValidateAppend(stream, evs); err != nil {
		s.metrics.ObserveAppend(adapterName, started, len(evs), storemetrics.OutcomeRejected, err)
		return events.AppendResult{}, err
	}
	if err := s.usable(ctx); err != nil {
		s.metrics.ObserveAppend(adapterName, started, len(evs), storemetrics.OutcomeError, err)
		return events.AppendResult{}, err
	}
	res, outcome, err := s.log.append(stream, expected, evs)
	s.metrics.ObserveAppend(adapterName, started, len(evs), outcome, err)
	return res, err
}

// ReadStream implements the store contract. A limit of zero or less reads nothing.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return s.log.readStream(stream, from, limit), nil
}

// ReadStreamBackward implements the store contract; from = math.MaxUint64 starts at the end.
// A limit of zero or less reads nothing.
func (s *Store) ReadStreamBackward(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return s.log.readStreamBackward(stream, from, limit), nil
}

// ReadAll implements the store contract. A limit of zero or less reads nothing.
func (s *Store) ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	out, _ := s.log.readAll(after, limit)
	return out, nil
}

// LastPosition implements the store contract.
func (s *Store) LastPosition(ctx context.Context) (uint64, error) {
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	return s.log.lastPosition(), nil
}

// Subscribe implements the store contract. Each read also returns the channel the next append
// closes, taken under the read's lock, so an append between the read and the wait is never
// missed; positions are assigned in commit order, so reading after the last delivered
// position has no gap and no duplicate. handle runs without any lock held, so it may append.
func (s *Store) Subscribe(ctx context.Context, after uint64, handle func(events.Recorded) error) error {
	pos := after
	for {
		if err := s.usable(ctx); err != nil {
			return err
		}
		batch, appended := s.log.readAll(pos, subscribeBatch)
		for _, r := range batch {
			if err := handle(r); err != nil {
				return err
			}
			pos = r.Position
		}
		if len(batch) == subscribeBatch {
			continue // more may be stored already
		}
		select {
		case <-appended:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return ErrClosed
		}
	}
}

// ChainGenesis is 0: a memory log never held events older than the hash chain.
func (s *Store) ChainGenesis(context.Context) (uint64, error) { return 0, nil }
