// Package sqlstore is the event store on SQL databases: embedded SQLite (the default) and
// PostgreSQL. Both share one design:
//
//   - One writer goroutine per process groups concurrent appends into batches, one transaction
//     each (group commit: many appends, one fsync); on Postgres several batches commit at
//     once. Each append is decided on its own inside the batch, so one append's failed
//     condition never fails another.
//   - A reader that resumes after position N can never skip an event that commits later with a
//     smaller position, also with several processes writing to one database. On SQLite,
//     positions are assigned as max+1 under BEGIN IMMEDIATE, so position order is commit
//     order; on Postgres, positions are reserved in transaction-id order and readers stop below
//     the appends in progress (docs/storage.md, "Concurrent appends").
//   - A unique index on event ids makes idempotency durable: a re-append of stored events
//     returns the original result without a cache.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/events"
)

// maxBatchEvents bounds one group commit: how long one transaction holds the write lock, and
// the size of the JSON one zuno_append call carries on Postgres.
const maxBatchEvents = 1024

// groupCommitWait bounds how long the writer waits for appends in flight to join a commit.
const groupCommitWait = 200 * time.Microsecond

// pollInterval is how often a live subscriber re-reads when no commit notification reaches it
// (another process appending to the same SQLite file).
const pollInterval = 250 * time.Millisecond

// Store is an event store on SQLite or PostgreSQL.
type Store struct {
	name    string // metrics label: "sqlite" or "postgres"
	writer  *sqlx.DB
	reader  *sqlx.DB
	metrics *storemetrics.Metrics

	// lanes are the writers; a stream's appends always go to the same one (laneOf).
	lanes []*lane
	// commitBatch writes a batch in one transaction and answers each append in it; it fails
	// only when the transaction does. The batch outlives any one caller's context.
	commitBatch func(ctx context.Context, batch []*appendRequest) ([]appendReply, error)
	// concurrentCommits says appends commit concurrently, not in position order (Postgres), so
	// a read of the whole log stops below the appends in progress (committedBelow).
	concurrentCommits bool
	// committers is how many lanes, so batches, may commit at once: 1 where the database
	// takes one writer at a time (SQLite), more where commits proceed together (Postgres).
	committers int
	// rejoinWait bounds how long a batch that begins right after a commit waits for the
	// appenders that commit answered (lane.fill); 0: it does not wait for them.
	rejoinWait time.Duration
	// writeEarly, when set, is given each part of a batch as lane.fill takes it, before fill
	// waits for more; commitBatch then writes the rest and commits (SQLite: the single
	// writer's statements run while appenders are still coming).
	writeEarly func(part []*appendRequest)
	// appendStmt is zuno_append prepared (Postgres).
	appendStmt *sql.Stmt
	// linkedStmt and headsStmt write a batch whose streams' heads are known, and read heads
	// (Postgres: linked_postgres.go); heads are the heads known.
	linkedStmt, headsStmt *sql.Stmt
	heads                 pgKnownHeads
	// notifyToken is the payload of this process's notifications, so that its listener can
	// tell them from other processes' (Postgres).
	notifyToken string
	// notify, when set, is signalled after each commit for notifyLoop (Postgres).
	notify  chan struct{}
	changed *broadcaster
	// queueing is held (read) by appends entering a lane's queue, and by Close before it
	// stops the lanes, so that no append is queued after its lane has drained its queue.
	queueing sync.RWMutex
	closed   bool // under queueing
	stop     chan struct{}
	wg       sync.WaitGroup
	closers  []func() error
	once     sync.Once
}

// lane is one writer: a queue of appends and the goroutine that commits them in batches, one
// batch at a time. Lanes commit concurrently; since a stream always goes to the same lane, two
// batches of one process never append to one stream at once (on Postgres they would wait on
// the stream's lock, and the later-reserved one first would send the other back to retry).
type lane struct {
	requests chan *appendRequest
	inflight atomic.Int64 // Append calls to this lane between entry and reply
	// writing is held while a batch of this lane is taken and written, by the lane's
	// goroutine or by a lone appender writing its own (commitAlone): one batch at a time.
	writing sync.Mutex
	// returning is how many appends the last commit answered plus how many were queued
	// behind it, answered when; only the lane's goroutine uses them (fill).
	returning int
	answered  time.Time
}

type appendRequest struct {
	ctx      context.Context
	stream   string
	expected events.ExpectedRevision
	evs      []events.Event
	prepared []events.Prepared // evs prepared for sealing (events.PrepareSeal)
	reply    chan appendReply
}

type appendReply struct {
	result  events.AppendResult
	outcome string
	err     error
}

// Option configures a Store.
type Option func(*Store)

// WithMetrics reports to m instead of to unregistered collectors.
func WithMetrics(m *storemetrics.Metrics) Option { return func(s *Store) { s.metrics = m } }

func newStore(dialect sqldb.Dialect, writer, reader *sqlx.DB, opts []Option) *Store {
	s := &Store{
		name:       string(dialect),
		writer:     writer,
		reader:     reader,
		changed:    newBroadcaster(),
		stop:       make(chan struct{}),
		committers: 1,
	}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = storemetrics.New(nil)
	}
	return s
}

// start runs the writers; commitBatch and committers must be set.
func (s *Store) start() {
	for range s.committers {
		l := &lane{requests: make(chan *appendRequest, maxBatchEvents)}
		s.lanes = append(s.lanes, l)
		s.wg.Add(1)
		go s.writeLoop(l)
	}
}

// laneOf is the lane of a stream.
func (s *Store) laneOf(stream string) *lane {
	h := fnv.New32a()
	h.Write([]byte(stream))
	return s.lanes[h.Sum32()%uint32(len(s.lanes))]
}

// Close stops the writer after the appends already queued and closes the databases.
func (s *Store) Close() error {
	var errs []error
	s.once.Do(func() {
		s.queueing.Lock()
		s.closed = true
		s.queueing.Unlock()
		close(s.stop)
		s.wg.Wait()
		for _, c := range s.closers {
			errs = append(errs, c())
		}
	})
	return errors.Join(errs...)
}

// ErrClosed is returned by an append made after Close.
var ErrClosed = errors.New("event store is closed")

// Append implements the store contract; see storetest.Store.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.Event) (events.AppendResult, error) {
	started := time.Now()
	if err := events.ValidateAppend(stream, evs); err != nil {
		s.metrics.ObserveAppend(s.name, started, len(evs), storemetrics.OutcomeRejected, err)
		return events.AppendResult{}, err
	}
	l := s.laneOf(stream)
	l.inflight.Add(1)
	defer l.inflight.Add(-1)
	req := &appendRequest{ctx: ctx, stream: stream, expected: expected, evs: evs, reply: make(chan appendReply, 1)}
	// Each append's events are prepared for the hash chain (metadata encoded, body digest) by
	// their appender, not by the lane's writer, which every append of the lane waits for.
	prepared, err := events.PrepareSeal(stream, evs)
	if err != nil {
		err = fmt.Errorf("hash events of %s: %w", stream, err)
		s.metrics.ObserveAppend(s.name, started, len(evs), storemetrics.OutcomeError, err)
		return events.AppendResult{}, err
	}
	req.prepared = prepared
	if !s.commitAlone(l, req) {
		if err := s.enqueue(ctx, l, req); err != nil {
			return events.AppendResult{}, err
		}
	}
	// Once queued, wait for the writer even if ctx ends: it decides whether the append
	// committed, and the caller must not be told "failed" about a committed event.
	r := <-req.reply
	s.metrics.ObserveAppend(s.name, started, len(evs), r.outcome, r.err)
	return r.result, r.err
}

// enqueue puts req in its lane's queue, unless the store is closed.
func (s *Store) enqueue(ctx context.Context, l *lane, req *appendRequest) error {
	s.queueing.RLock()
	defer s.queueing.RUnlock()
	if s.closed {
		return ErrClosed
	}
	select {
	case l.requests <- req:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) writeLoop(l *lane) {
	defer s.wg.Done()
	for {
		select {
		case first := <-l.requests:
			l.writing.Lock()
			batch := l.fill(first, s.rejoinWait, s.writeEarly)
			s.commit(batch, l.answering)
			l.writing.Unlock()
		case <-s.stop:
			// Taking the lock waits for a lone appender's commit (commitAlone) to end, so
			// that Close closes the databases after it.
			l.writing.Lock()
			l.drainAfterStop(s)
			l.writing.Unlock()
			return
		}
	}
}

// commitAlone writes req on its appender's goroutine when it is the only append in flight on
// its lane and the lane is not writing: handing it to the lane's goroutine and its answer back
// would add two goroutine switches to the append's latency and group it with nothing. It
// reports whether it did; the reply is then in req.reply. Concurrent appends still go through
// the lane and commit together (fill).
func (s *Store) commitAlone(l *lane, req *appendRequest) bool {
	if l.inflight.Load() != 1 || len(l.requests) > 0 || !l.writing.TryLock() {
		return false
	}
	defer l.writing.Unlock()
	select {
	case <-s.stop:
		return false // closing: the queue path answers ErrClosed
	default:
	}
	s.commit([]*appendRequest{req}, nil)
	return true
}

// fill takes what is queued behind first, up to maxBatchEvents (group commit), and waits a
// moment for appends about to queue, so that one commit carries them too:
//   - appends in flight on this lane that have not queued yet, for up to groupCommitWait;
//   - with rejoin > 0, when the batch begins within rejoin of the last commit: as many appends
//     as that commit answered and left queued, for up to rejoin. Appenders it answered usually
//     append again at once (a turn's next event), but they leave the in-flight count before
//     they do: counting only that, a SQLite commit carried about 47 of 64 writers' appends.
//
// A lone appender never waits: the last commit answered one append, its own. Before each
// wait, early (when set) gets what fill took since the last; the time it takes is writing,
// not waiting, so it does not count against the wait. The writer waits blocked, not
// spinning, since the appenders it waits for need the CPU.
func (l *lane) fill(first *appendRequest, rejoin time.Duration, early func([]*appendRequest)) []*appendRequest {
	batch := []*appendRequest{first}
	n, given := len(first.evs), 0
	now := time.Now()
	wait, want := groupCommitWait, 0
	if rejoin > 0 && now.Sub(l.answered) < rejoin {
		wait, want = rejoin, l.returning
	}
	deadline := now.Add(wait)
	var timer *time.Timer
	for n < maxBatchEvents {
		select {
		case r := <-l.requests:
			batch = append(batch, r)
			n += len(r.evs)
			continue
		default:
		}
		if int(l.inflight.Load()) <= len(batch) && len(batch) >= want {
			return batch
		}
		if early != nil && given < len(batch) {
			started := time.Now()
			early(batch[given:])
			given = len(batch)
			deadline = deadline.Add(time.Since(started))
			continue // appends may have queued meanwhile
		}
		if timer == nil {
			timer = time.NewTimer(time.Until(deadline))
			defer timer.Stop()
		} else {
			timer.Reset(time.Until(deadline))
		}
		select {
		case r := <-l.requests:
			batch = append(batch, r)
			n += len(r.evs)
		case <-timer.C:
			return batch
		}
	}
	return batch
}

// answering records, before a commit's appends are answered, how many appends may come back
// at once (fill): those it answers and those queued behind it.
func (l *lane) answering(batch []*appendRequest) {
	l.returning = len(batch) + len(l.requests)
	l.answered = time.Now()
}

// drainAfterStop answers appends that were queued before Close.
func (l *lane) drainAfterStop(s *Store) {
	for {
		select {
		case r := <-l.requests:
			s.commit([]*appendRequest{r}, nil)
		default:
			return
		}
	}
}

// commit writes a batch in one transaction; answering, when set, is told of the batch before
// its appends are answered. If the transaction itself fails (not an append's condition, which
// is decided per append), each append is retried alone so that one bad append cannot fail the
// others.
func (s *Store) commit(batch []*appendRequest, answering func([]*appendRequest)) {
	replies, err := s.commitBatch(context.Background(), batch)
	if answering != nil {
		answering(batch)
	}
	if err == nil {
		for i, r := range batch {
			r.reply <- replies[i]
		}
		return
	}
	if len(batch) == 1 {
		batch[0].reply <- appendReply{outcome: storemetrics.OutcomeError, err: err}
		return
	}
	for _, r := range batch {
		replies, err := s.commitBatch(context.Background(), []*appendRequest{r})
		if err != nil {
			r.reply <- appendReply{outcome: storemetrics.OutcomeError, err: err}
			continue
		}
		r.reply <- replies[0]
	}
}

const columns = `position, event_id, stream, stream_revision, type, data, metadata`

func (s *Store) query(ctx context.Context, q sqlx.QueryerContext, query string, args ...any) ([]events.Recorded, error) {
	return s.queryUpTo(ctx, q, 0, query, args...)
}

// queryUpTo is query for a read of at most limit events. Once a read has returned a few dozen
// events its slice is grown to the limit at once: growing it by appending, doubling each time,
// would leave about as much again as garbage at every batch (a rebuild reads the whole log in
// batches of 1,000; docs/storage.md, "Read models and projections"), while a read that returns
// a few events (a live feed's) allocates for those only.
func (s *Store) queryUpTo(ctx context.Context, q sqlx.QueryerContext, limit int, query string, args ...any) ([]events.Recorded, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanRecordsInto(rows, limit)
}

// Growing a read's slice to its limit: once it holds grownAfter events, if the limit is at
// most grownUpTo (a caller may ask for many more than a log holds).
const (
	grownAfter = 64
	grownUpTo  = 4096
)

func scanRecords(rows *sql.Rows) ([]events.Recorded, error) { return scanRecordsInto(rows, 0) }

// scanRecordsInto returns the rows' events; limit, where above 0, is the most there can be.
func scanRecordsInto(rows *sql.Rows, limit int) ([]events.Recorded, error) {
	defer rows.Close()
	var out []events.Recorded
	for rows.Next() {
		var (
			r        events.Recorded
			pos, rev int64
			data, md []byte
		)
		if err := rows.Scan(&pos, &r.ID, &r.Stream, &rev, &r.Type, &data, &md); err != nil {
			return nil, err
		}
		r.Position, r.StreamRevision = uint64(pos), uint64(rev)
		r.Data = json.RawMessage(data)
		if err := events.DecodeMetadata(md, &r.Metadata); err != nil {
			return nil, &events.MalformedEventError{Type: r.Type, Stream: r.Stream, Position: r.Position,
				Err: fmt.Errorf("metadata: %w", err)}
		}
		if len(out) == cap(out) && len(out) >= grownAfter && limit > len(out) && limit <= grownUpTo {
			out = slices.Grow(out, limit-len(out))
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// committed records a commit and wakes the subscribers of this process.
func (s *Store) committed(events int) {
	s.metrics.BatchEvents.WithLabelValues(s.name).Observe(float64(events))
	s.changed.broadcast()
	if s.notify != nil {
		select {
		case s.notify <- struct{}{}:
		default: // one is pending: it covers this commit too
		}
	}
}

func clampRevision(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// ReadStream implements the store contract.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	return s.query(ctx, s.reader, s.reader.Rebind(`SELECT `+columns+` FROM event_log
		WHERE stream = ? AND stream_revision >= ? ORDER BY stream_revision LIMIT ?`), stream, clampRevision(from), limit)
}

// ReadStreamBackward implements the store contract.
func (s *Store) ReadStreamBackward(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	return s.query(ctx, s.reader, s.reader.Rebind(`SELECT `+columns+` FROM event_log
		WHERE stream = ? AND stream_revision <= ? ORDER BY stream_revision DESC LIMIT ?`), stream, clampRevision(from), limit)
}

// ReadAll implements the store contract.
func (s *Store) ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
	below, args, err := s.committedBelow(ctx)
	if err != nil {
		return nil, err
	}
	return s.queryUpTo(ctx, s.reader, limit, s.reader.Rebind(`SELECT `+columns+` FROM event_log
		WHERE position > ?`+below+` ORDER BY position LIMIT ?`), append([]any{clampRevision(after)}, append(args, limit)...)...)
}

// LastPosition implements the store contract.
func (s *Store) LastPosition(ctx context.Context) (uint64, error) {
	below, args, err := s.committedBelow(ctx)
	if err != nil {
		return 0, err
	}
	var last int64
	err = s.reader.GetContext(ctx, &last, s.reader.Rebind(`SELECT COALESCE(MAX(position), 0) FROM event_log WHERE true`+below), args...)
	return uint64(last), err
}

// committedBelow is the condition ("AND ...", with its arguments) that keeps a read of the whole
// log below every append still in progress: none where positions are assigned in commit order
// (SQLite); on Postgres the horizon, asked in a statement of its own before the read, so that
// the read's snapshot is taken after it (docs/storage.md, "Concurrent appends").
func (s *Store) committedBelow(ctx context.Context) (string, []any, error) {
	if !s.concurrentCommits {
		return "", nil, nil
	}
	var horizon string
	if err := s.reader.GetContext(ctx, &horizon, `SELECT zuno_event_horizon()::text`); err != nil {
		return "", nil, fmt.Errorf("read the append horizon: %w", err)
	}
	return ` AND xid < ?::xid8`, []any{horizon}, nil
}

const subscribeBatch = 512

// Subscribe implements the store contract. Because ReadAll never returns an event that a later
// commit could precede, reading "after the last delivered position" is gap-free;
// notifications only say when to read.
func (s *Store) Subscribe(ctx context.Context, after uint64, handle func(events.Recorded) error) error {
	return s.follow(ctx, after, s.ReadAll, handle)
}

// SubscribeHeaders is Subscribe delivering each event's envelope alone (position, id, stream,
// revision, type; no data, no metadata): what a process's live feed hands its waiters, who
// match on stream and type and read the few events they need (docs/architecture.md, "One live
// feed"). Following the log then costs every process the envelopes, not every event's content.
func (s *Store) SubscribeHeaders(ctx context.Context, after uint64, handle func(events.Recorded) error) error {
	return s.follow(ctx, after, paced(s.readHeaders, headerGap), handle)
}

// headerGap is the least time between two reads of a header subscription. On Postgres every
// process is woken by every other's commits (at most one notification each per notifyEvery),
// so a feed read on each wake would read as often as the whole deployment commits, in every
// process; its waiters (an answer, an interrupt) are served within headerGap instead, the
// store's poll interval.
const headerGap = 250 * time.Millisecond

// paced is read, called at most once per gap: a call that comes sooner first waits.
func paced(read func(context.Context, uint64, int) ([]events.Recorded, error), gap time.Duration) func(context.Context, uint64, int) ([]events.Recorded, error) {
	var last time.Time
	return func(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
		if wait := gap - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		last = time.Now()
		return read(ctx, after, limit)
	}
}

// readHeaders is ReadAll without data and metadata.
func (s *Store) readHeaders(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
	below, args, err := s.committedBelow(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.reader.QueryContext(ctx, s.reader.Rebind(`SELECT position, event_id, stream, stream_revision, type FROM event_log
		WHERE position > ?`+below+` ORDER BY position LIMIT ?`), append([]any{clampRevision(after)}, append(args, limit)...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []events.Recorded
	for rows.Next() {
		var (
			r        events.Recorded
			pos, rev int64
		)
		if err := rows.Scan(&pos, &r.ID, &r.Stream, &rev, &r.Type); err != nil {
			return nil, err
		}
		r.Position, r.StreamRevision = uint64(pos), uint64(rev)
		if len(out) == cap(out) && len(out) >= grownAfter && limit > len(out) && limit <= grownUpTo {
			out = slices.Grow(out, limit-len(out))
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// follow reads the log after after with read, batch by batch, handing each event to handle,
// and waits for more: woken by this process's commits, else every pollInterval.
func (s *Store) follow(ctx context.Context, after uint64, read func(context.Context, uint64, int) ([]events.Recorded, error),
	handle func(events.Recorded) error) error {
	pos := after
	for {
		wake := s.changed.wait() // taken before reading, so a commit during the read is not missed
		batch, err := read(ctx, pos, subscribeBatch)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		for _, ev := range batch {
			if err := handle(ev); err != nil {
				return err
			}
			pos = ev.Position
		}
		if len(batch) == subscribeBatch {
			continue
		}
		timer := time.NewTimer(pollInterval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// broadcaster wakes every waiter on each commit.
type broadcaster struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBroadcaster() *broadcaster { return &broadcaster{ch: make(chan struct{})} }

func (b *broadcaster) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcaster) broadcast() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}

// ChainGenesis is the last position written before the hash chain began (the migration that
// added it recorded it): events at or below it may carry no hash (docs/storage.md).
func (s *Store) ChainGenesis(ctx context.Context) (uint64, error) {
	var pos int64
	err := s.reader.GetContext(ctx, &pos, `SELECT COALESCE(MAX(position), 0) FROM event_chain_genesis`)
	return uint64(pos), err
}
