// Package esdb is the EventStoreDB / KurrentDB event store adapter.
//
// Streams map one to one onto EventStoreDB streams, an event's id is its EventStoreDB event id
// and its metadata travels as the event's JSON user metadata. The global position of an event
// is its commit position in $all; readers and subscriptions resume after a position
// (exclusive).
//
// The server must be EventStoreDB 22.6 or later (or any KurrentDB): older servers do not report
// the $all position of events read from a stream, and every event zuno reads carries one. The
// user needs read access to $all (an admin or ops user on a secure cluster).
//
// The client library gives up for good when it cannot rediscover the server after a connection
// loss (maxDiscoverAttempts, default 10, each 100 ms apart): every later call fails with
// ErrorCodeConnectionClosed and the store must be reopened. Long-running processes should raise
// maxDiscoverAttempts in the connection string.
package esdb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
)

// ErrClosed is returned by calls made after Close, and by Subscribe when Close ends it.
var ErrClosed = errors.New("esdb: store is closed")

// idempotencyWindow is how many events before an append's worth of events are searched
// for its ids. A command is normally re-delivered soon after its first delivery, so its events
// are near the stream's end; the window only needs to cover what other commands appended to
// the same stream in between.
const idempotencyWindow = 64

// Option configures Open.
type Option func(*config)

type config struct {
	metrics *storemetrics.Metrics
}

// WithMetrics reports appends to m, labelled adapter="esdb".
func WithMetrics(m *storemetrics.Metrics) Option { return func(c *config) { c.metrics = m } }

// Store is an event store backed by EventStoreDB. It is safe for concurrent use.
type Store struct {
	client  *esdb.Client
	metrics *storemetrics.Metrics

	// The client library panics when a call races its Close (it sends on a closed channel), so
	// Close first ends every call in flight through closing, then waits for them.
	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
	closing  context.Context
	shutdown context.CancelFunc
}

// Open connects to the server named by an esdb:// (or esdb+discover://) connection string and
// checks that it answers. Node discovery does not watch ctx; it ends after the connection
// string's maxDiscoverAttempts.
func Open(ctx context.Context, connectionString string, opts ...Option) (*Store, error) {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	conf, err := esdb.ParseConnectionString(connectionString)
	if err != nil {
		// A url.Error repeats the whole string, password included.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("esdb: invalid connection string: %w", err)
	}
	// The client library logs every error it also returns; zuno's output must stay parseable.
	conf.Logger = esdb.NoopLogging()
	client, err := esdb.NewClient(conf)
	if err != nil {
		return nil, fmt.Errorf("esdb: %w", err)
	}
	closing, shutdown := context.WithCancel(context.Background())
	s := &Store{
		client:   client,
		metrics:  c.metrics,
		closing:  closing,
		shutdown: shutdown,
	}
	// Fail here rather than at the first append when the server is unreachable or the user
	// may not read $all, which ReadAll and Subscribe need.
	if _, err := s.LastPosition(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("esdb: server does not answer: %w", err)
	}
	return s, nil
}

// Close ends running subscriptions, waits for calls in flight and closes the connection.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.shutdown()
	s.inflight.Wait()
	return s.client.Close()
}

// begin registers a call and returns a context that also ends when the store closes.
func (s *Store) begin(ctx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil, ErrClosed
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	return ctx, func() {
		stop()
		cancel()
		s.inflight.Done()
	}, nil
}

// interrupted reports why a call ended early when its context did: the caller's reason, or
// ErrClosed when Close ended it.
func (s *Store) interrupted(caller, call context.Context) error {
	if err := caller.Err(); err != nil {
		return err
	}
	if s.closing.Err() != nil {
		return ErrClosed
	}
	return call.Err()
}

// ChainGenesis is 0: EventStoreDB has no migrations to record where the hash chain began, so
// `zuno verify` reports events appended before it as unchained (docs/storage.md).
func (s *Store) ChainGenesis(context.Context) (uint64, error) { return 0, nil }
