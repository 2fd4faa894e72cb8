// Package sqlstore is the event store on SQL databases: embedded SQLite (the default) and
// PostgreSQL. Both share one design:
//
//   - One writer goroutine per process groups concurrent appends into one transaction (group
//     commit: many appends, one fsync). Each append is decided on its own inside the batch, so
//     one append's failed condition never fails another.
//   - Global positions are assigned as max+1 while holding the database's write lock (SQLite's
//     BEGIN IMMEDIATE, an advisory lock on Postgres that is released only after commit), so
//     position order is commit order: a reader that resumes after position N can never skip
//     an event that commits later with a smaller position. This also holds with several
//     processes writing to one database.
//   - A unique index on event ids makes idempotency durable: a re-append of stored events
//     returns the original result without a cache.
package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/events"
)

// maxBatchEvents bounds one group commit, keeping statements under the databases' parameter
// limits (7 parameters per row).
const maxBatchEvents = 1024

// Store is an event store on SQLite or PostgreSQL.
type Store struct {
	dialect sqldb.Dialect
	name    string // metrics label: "sqlite" or "postgres"
	writer  *sqlx.DB
	reader  *sqlx.DB
	metrics *storemetrics.Metrics
	poll    time.Duration

	requests chan *appendRequest
	changed  *broadcaster
	stop     chan struct{}
	wg       sync.WaitGroup
	closers  []func() error
	once     sync.Once
}

type appendRequest struct {
	ctx      context.Context
	stream   string
	expected events.ExpectedRevision
	evs      []events.Event
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

// WithPollInterval sets how often a live subscriber re-reads when no commit notification
// reaches it (another process appending to the same SQLite file). Default 250ms.
func WithPollInterval(d time.Duration) Option { return func(s *Store) { s.poll = d } }

func newStore(dialect sqldb.Dialect, writer, reader *sqlx.DB, opts []Option) *Store {
	s := &Store{
		dialect:  dialect,
		name:     string(dialect),
		writer:   writer,
		reader:   reader,
		poll:     250 * time.Millisecond,
		requests: make(chan *appendRequest, maxBatchEvents),
		changed:  newBroadcaster(),
		stop:     make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = storemetrics.New(nil)
	}
	s.wg.Add(1)
	go s.writeLoop()
	return s
}

// Close stops the writer after the appends already queued and closes the databases.
func (s *Store) Close() error {
	var errs []error
	s.once.Do(func() {
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
	req := &appendRequest{ctx: ctx, stream: stream, expected: expected, evs: evs, reply: make(chan appendReply, 1)}
	select {
	case s.requests <- req:
	case <-s.stop:
		return events.AppendResult{}, ErrClosed
	case <-ctx.Done():
		return events.AppendResult{}, ctx.Err()
	}
	// Once queued, wait for the writer even if ctx ends: it decides whether the append
	// committed, and the caller must not be told "failed" about a committed event.
	r := <-req.reply
	s.metrics.ObserveAppend(s.name, started, len(evs), r.outcome, r.err)
	return r.result, r.err
}

func (s *Store) writeLoop() {
	defer s.wg.Done()
	for {
		var first *appendRequest
		select {
		case first = <-s.requests:
		case <-s.stop:
			s.drainAfterStop()
			return
		}
		batch := []*appendRequest{first}
		n := len(first.evs)
	fill:
		for n < maxBatchEvents {
			select {
			case r := <-s.requests:
				batch = append(batch, r)
				n += len(r.evs)
			default:
				break fill
			}
		}
		s.commit(batch)
	}
}

// drainAfterStop answers appends that were queued before Close.
func (s *Store) drainAfterStop() {
	for {
		select {
		case r := <-s.requests:
			s.commit([]*appendRequest{r})
		default:
			return
		}
	}
}

// commit writes a batch in one transaction. If the transaction itself fails (not an append's
// condition, which is decided per append), each append is retried alone so that one bad
// append cannot fail the others.
func (s *Store) commit(batch []*appendRequest) {
	replies, err := s.commitBatch(batch)
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
		replies, err := s.commitBatch([]*appendRequest{r})
		if err != nil {
			r.reply <- appendReply{outcome: storemetrics.OutcomeError, err: err}
			continue
		}
		r.reply <- replies[0]
	}
}

// pendingRow is an event decided into the batch, not yet inserted.
type pendingRow struct {
	events.Recorded
	metadata []byte
}

func (s *Store) commitBatch(batch []*appendRequest) ([]appendReply, error) {
	ctx := context.Background() // the batch outlives any one caller's context
	tx, err := s.writer.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin append transaction: %w", err)
	}
	defer tx.Rollback()
	if s.dialect == sqldb.Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, appendLockKey); err != nil {
			return nil, fmt.Errorf("take append lock: %w", err)
		}
	}
	var last uint64
	if err := tx.GetContext(ctx, &last, `SELECT COALESCE(MAX(position), 0) FROM event_log`); err != nil {
		return nil, fmt.Errorf("read last position: %w", err)
	}
	stored, err := s.storedByID(ctx, tx, batch)
	if err != nil {
		return nil, err
	}
	revisions, err := s.streamRevisions(ctx, tx, batch)
	if err != nil {
		return nil, err
	}

	replies := make([]appendReply, len(batch))
	var rows []pendingRow
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			replies[i] = appendReply{outcome: storemetrics.OutcomeError, err: err}
			continue
		}
		if known := knownEvents(r.evs, stored); len(known) > 0 {
			res, err := events.MatchRetry(r.stream, r.evs, known)
			if err != nil {
				replies[i] = appendReply{outcome: storemetrics.OutcomeConflict, err: err}
			} else {
				replies[i] = appendReply{result: res, outcome: storemetrics.OutcomeDuplicate}
			}
			continue
		}
		current := revisions[r.stream]
		if !r.expected.Allows(current) {
			replies[i] = appendReply{outcome: storemetrics.OutcomeConflict,
				err: &events.WrongExpectedRevisionError{Stream: r.stream, Expected: r.expected, Actual: current}}
			continue
		}
		res := events.AppendResult{FirstPosition: last + 1}
		for _, ev := range r.evs {
			md, err := json.Marshal(ev.Metadata)
			if err != nil {
				return nil, fmt.Errorf("encode metadata of %s: %w", ev.ID, err)
			}
			current++
			last++
			rec := events.Recorded{Event: ev, Stream: r.stream, StreamRevision: uint64(current), Position: last}
			rows = append(rows, pendingRow{Recorded: rec, metadata: md})
			stored[ev.ID] = rec // a retry later in the same batch sees it
		}
		revisions[r.stream] = current
		res.NextRevision, res.LastPosition = uint64(current), last
		replies[i] = appendReply{result: res, outcome: storemetrics.OutcomeOK}
	}
	if len(rows) == 0 {
		return replies, nil
	}
	if err := s.insert(ctx, tx, rows); err != nil {
		return nil, err
	}
	if s.dialect == sqldb.Postgres {
		// Delivered only on commit, to every listening process.
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, fmt.Sprint(last)); err != nil {
			return nil, fmt.Errorf("notify subscribers: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit appends: %w", err)
	}
	s.metrics.BatchEvents.WithLabelValues(s.name).Observe(float64(len(rows)))
	s.changed.broadcast()
	return replies, nil
}

func knownEvents(evs []events.Event, stored map[string]events.Recorded) []events.Recorded {
	var known []events.Recorded
	for _, ev := range evs {
		if r, ok := stored[ev.ID]; ok {
			known = append(known, r)
		}
	}
	return known
}

// storedByID looks up, in one query, every event of the batch whose id is already stored.
func (s *Store) storedByID(ctx context.Context, tx *sqlx.Tx, batch []*appendRequest) (map[string]events.Recorded, error) {
	var ids []string
	for _, r := range batch {
		for _, ev := range r.evs {
			ids = append(ids, ev.ID)
		}
	}
	q, args, err := sqlx.In(`SELECT `+columns+` FROM event_log WHERE event_id IN (?)`, ids)
	if err != nil {
		return nil, err
	}
	recs, err := s.query(ctx, tx, tx.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("look up event ids: %w", err)
	}
	out := make(map[string]events.Recorded, len(recs))
	for _, r := range recs {
		out[r.ID] = r
	}
	return out, nil
}

// streamRevisions returns the last revision of every stream the batch appends to, -1 for a
// stream with no events.
func (s *Store) streamRevisions(ctx context.Context, tx *sqlx.Tx, batch []*appendRequest) (map[string]int64, error) {
	streams := make([]string, 0, len(batch))
	out := make(map[string]int64, len(batch))
	for _, r := range batch {
		if _, ok := out[r.stream]; !ok {
			out[r.stream] = -1
			streams = append(streams, r.stream)
		}
	}
	q, args, err := sqlx.In(`SELECT stream, MAX(stream_revision) FROM event_log WHERE stream IN (?) GROUP BY stream`, streams)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, tx.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("read stream revisions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var stream string
		var rev int64
		if err := rows.Scan(&stream, &rev); err != nil {
			return nil, err
		}
		out[stream] = rev
	}
	return out, rows.Err()
}

const insertChunk = 500

func (s *Store) insert(ctx context.Context, tx *sqlx.Tx, rows []pendingRow) error {
	for start := 0; start < len(rows); start += insertChunk {
		chunk := rows[start:min(start+insertChunk, len(rows))]
		var b strings.Builder
		b.WriteString(`INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata) VALUES `)
		args := make([]any, 0, len(chunk)*7)
		for i, r := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`(?, ?, ?, ?, ?, ?, ?)`)
			args = append(args, int64(r.Position), r.ID, r.Stream, int64(r.StreamRevision), r.Type, string(r.Data), string(r.metadata))
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(b.String()), args...); err != nil {
			return fmt.Errorf("insert events: %w", err)
		}
	}
	return nil
}

const columns = `position, event_id, stream, stream_revision, type, data, metadata`

func (s *Store) query(ctx context.Context, q sqlx.QueryerContext, query string, args ...any) ([]events.Recorded, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
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
		if err := json.Unmarshal(md, &r.Metadata); err != nil {
			return nil, &events.MalformedEventError{Type: r.Type, Stream: r.Stream, Position: r.Position,
				Err: fmt.Errorf("metadata: %w", err)}
		}
		out = append(out, r)
	}
	return out, rows.Err()
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
	return s.query(ctx, s.reader, s.reader.Rebind(`SELECT `+columns+` FROM event_log
		WHERE position > ? ORDER BY position LIMIT ?`), clampRevision(after), limit)
}

// LastPosition implements the store contract.
func (s *Store) LastPosition(ctx context.Context) (uint64, error) {
	var last int64
	err := s.reader.GetContext(ctx, &last, `SELECT COALESCE(MAX(position), 0) FROM event_log`)
	return uint64(last), err
}

const subscribeBatch = 512

// Subscribe implements the store contract. Because positions are commit-ordered, reading
// "after the last delivered position" is gap-free; notifications only say when to read.
func (s *Store) Subscribe(ctx context.Context, after uint64, handle func(events.Recorded) error) error {
	pos := after
	for {
		wake := s.changed.wait() // taken before reading, so a commit during the read is not missed
		batch, err := s.ReadAll(ctx, pos, subscribeBatch)
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
		timer := time.NewTimer(s.poll)
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
