// Package projections builds the read models from the event log. Each projector consumes the
// store's global, ordered feed from its checkpoint and writes its rows and its checkpoint in
// the same transaction, so an event's effect is applied exactly once, also across crashes.
// Rebuild drops a projector's rows, resets its checkpoint and replays the log in one
// transaction, so readers see either the old read model or the rebuilt one.
package projections

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/events"
)

// Feed is what projections need of an event store: the global ordered log.
type Feed interface {
	ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error)
	Subscribe(ctx context.Context, after uint64, handle func(events.Recorded) error) error
	LastPosition(ctx context.Context) (uint64, error)
}

// Projector turns events into rows of the tables it owns.
type Projector interface {
	// Name identifies the projector's checkpoint.
	Name() string
	// Tables are the tables it owns: emptied on rebuild.
	Tables() []string
	// Apply writes the effect of one event. payload is the decoded event.
	Apply(ctx context.Context, tx *Tx, ev events.Recorded, payload events.Payload) error
}

// Runner drives a set of projectors over one read-model database.
type Runner struct {
	db         *sqlx.DB
	feed       Feed
	registry   *events.Registry
	projectors []Projector
	metrics    *Metrics
	batch      int

	mu      sync.Mutex // one writer of the read model per runner
	reached reachedPosition
	stall   time.Duration // how long WaitFor waits without progress (follow.go)
	follow  follower
	// views are the read models that are views in db, read by the first transaction: a
	// database becomes shared when it is opened (adapters/readmodel), before runners start.
	views map[string]bool
	// schemas are the read-model tables' keys and column types on Postgres, read by the first
	// transaction after the migrations: they turn on batched writes (batch.go).
	schemas map[string]*tableSchema
}

// Option configures a Runner.
type Option func(*Runner)

// WithMetrics reports to m.
func WithMetrics(m *Metrics) Option { return func(r *Runner) { r.metrics = m } }

// NewRunner returns a runner. db must be writable, and on SQLite open in sqldb.Writer mode
// (transactions take the write lock at BEGIN, so they never fail to upgrade a read lock).
func NewRunner(db *sqlx.DB, feed Feed, registry *events.Registry, projectors []Projector, opts ...Option) *Runner {
	r := &Runner{db: db, feed: feed, registry: registry, projectors: projectors, batch: 1000, stall: DefaultStall}
	r.reached.init()
	r.follow.poke = make(chan struct{}, 1)
	for _, o := range opts {
		o(r)
	}
	if r.metrics == nil {
		r.metrics = NewMetrics(nil)
	}
	return r
}

// begin starts a read-model transaction; r.mu must be held.
func (r *Runner) begin(ctx context.Context) (*Tx, error) {
	tx, err := newTx(ctx, r.db)
	if err != nil {
		return nil, err
	}
	if r.views == nil {
		if r.views, err = readViews(ctx, tx.tx); err != nil {
			tx.rollback()
			return nil, err
		}
	}
	tx.views = r.views
	if r.schemas == nil && r.db.DriverName() == "postgres" {
		if r.schemas, err = readSchemas(ctx, tx.tx); err != nil {
			tx.rollback()
			return nil, err
		}
	}
	tx.schemas = r.schemas
	return tx, nil
}

// checkpoints reads every projector's checkpoint (0 when it never ran).
func (r *Runner) checkpoints(ctx context.Context, q sqlx.QueryerContext) (map[string]uint64, error) {
	rows, err := q.QueryxContext(ctx, `SELECT projector, position FROM projection_checkpoint`)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	cps := make(map[string]uint64, len(r.projectors))
	for rows.Next() {
		var name string
		var pos int64
		if err := rows.Scan(&name, &pos); err != nil {
			return nil, err
		}
		cps[name] = uint64(pos)
	}
	return cps, rows.Err()
}

func lowest(cps map[string]uint64, ps []Projector) uint64 {
	low := ^uint64(0)
	for _, p := range ps {
		low = min(low, cps[p.Name()])
	}
	return low
}

// CatchUp applies every event stored now to every projector and returns the position reached.
func (r *Runner) CatchUp(ctx context.Context) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cps, err := r.checkpoints(ctx, r.db)
	if err != nil {
		return 0, err
	}
	pos := lowest(cps, r.projectors)
	for {
		batch, err := r.feed.ReadAll(ctx, pos, r.batch)
		if err != nil {
			return pos, err
		}
		if len(batch) == 0 {
			r.advance(pos)
			return pos, nil
		}
		if err := r.applyBatch(ctx, batch); err != nil {
			return pos, err
		}
		pos = batch[len(batch)-1].Position
	}
}

// Run catches up, then follows the log live until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	pos, err := r.CatchUp(ctx)
	if err != nil {
		return endedWith(ctx, err)
	}
	// Live events arrive one by one; they are grouped into one transaction while more are
	// already waiting, so a burst costs one commit, not one per event.
	pending := make(chan events.Recorded, r.batch)
	errc := make(chan error, 1)
	go func() {
		errc <- r.feed.Subscribe(ctx, pos, func(ev events.Recorded) error {
			select {
			case pending <- ev:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for {
		var batch []events.Recorded
		select {
		case ev := <-pending:
			batch = append(batch, ev)
		case err := <-errc:
			return endedWith(ctx, err) // a read cancelled mid-statement says so in the driver's words
		}
	more:
		for len(batch) < r.batch {
			select {
			case ev := <-pending:
				batch = append(batch, ev)
			default:
				break more
			}
		}
		if err := r.applyLive(ctx, batch); err != nil {
			return err
		}
	}
}

func (r *Runner) applyLive(ctx context.Context, batch []events.Recorded) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applyBatch(ctx, batch)
}

// applyBatch applies a batch in one transaction; each projector skips what its checkpoint has
// already seen, so a batch re-read after a crash or by a second runner is harmless.
func (r *Runner) applyBatch(ctx context.Context, batch []events.Recorded) (err error) {
	defer func() { err = endedWith(ctx, err) }()
	started := time.Now()
	payloads := make([]events.Payload, len(batch))
	for i, ev := range batch {
		p, err := r.registry.Decode(ev)
		if err != nil {
			return err // never skipped: the projection stops at the event it cannot read
		}
		payloads[i] = p
	}
	tx, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.rollback()
	// Read inside the transaction: another runner (another process) may have moved them.
	cps, err := r.checkpoints(ctx, tx.tx)
	if err != nil {
		return err
	}
	ps := r.projectors
	last := batch[len(batch)-1].Position
	rows := statementContext(ctx)
	for _, p := range ps {
		from := cps[p.Name()]
		if from >= last {
			continue
		}
		for i, ev := range batch {
			if ev.Position <= from {
				continue
			}
			tx.applying(ev.Position)
			if err := p.Apply(rows, tx, ev, payloads[i]); err != nil {
				return fmt.Errorf("projector %s at position %d (%s): %w", p.Name(), ev.Position, ev.Type, err)
			}
		}
		if err := tx.setCheckpoint(ctx, p.Name(), last); err != nil {
			return err
		}
	}
	if err := tx.commit(ctx); err != nil {
		return err
	}
	r.advance(last)
	for _, p := range ps {
		r.metrics.checkpoint.WithLabelValues(p.Name()).Set(float64(last))
	}
	r.metrics.applied.Add(float64(len(batch)))
	r.metrics.batchSeconds.Observe(time.Since(started).Seconds())
	return nil
}

// advance records that every projector has applied the log up to pos, which ends a failure
// WaitFor would report.
func (r *Runner) advance(pos uint64) {
	if r.reached.set(pos) {
		r.follow.mu.Lock()
		r.follow.failure = nil
		r.follow.mu.Unlock()
	}
}

// Status is one projector's progress.
type Status struct {
	Projector  string `json:"projector" db:"projector"`
	Checkpoint uint64 `json:"checkpoint"`
	Head       uint64 `json:"head"`
	Lag        uint64 `json:"lag"`
}

// Status reports each projector's checkpoint and its lag behind the log's head.
func (r *Runner) Status(ctx context.Context) ([]Status, error) {
	cps, err := r.checkpoints(ctx, r.db)
	if err != nil {
		return nil, err
	}
	head, err := r.feed.LastPosition(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(r.projectors))
	for _, p := range r.projectors {
		cp := cps[p.Name()]
		s := Status{Projector: p.Name(), Checkpoint: cp, Head: head}
		if head > cp {
			s.Lag = head - cp
		}
		r.metrics.lag.WithLabelValues(p.Name()).Set(float64(s.Lag))
		r.metrics.checkpoint.WithLabelValues(p.Name()).Set(float64(cp))
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Projector < out[j].Projector })
	return out, nil
}

// UnknownProjectorError names a projector that does not exist.
type UnknownProjectorError struct {
	Name  string
	Known []string
}

func (e *UnknownProjectorError) Error() string {
	return fmt.Sprintf("unknown projector %q; known projectors: %v", e.Name, e.Known)
}

// Rebuild empties the named projectors' tables (all projectors when names is empty), resets
// their checkpoints and replays the whole log into them, in one transaction. It returns how
// many events were replayed.
func (r *Runner) Rebuild(ctx context.Context, names ...string) (count int, err error) {
	defer func() { err = endedWith(ctx, err) }()
	ps, err := r.select_(names)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tx, err := r.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.rollback()
	if err := tx.planForGrowingTables(ctx); err != nil {
		return 0, err
	}
	tables, err := emptyTables(ctx, tx, ps)
	if err != nil {
		return 0, err
	}
	deferred, err := secondaryIndexes(ctx, tx.tx, tables)
	if err != nil {
		return 0, err
	}
	if err := dropIndexes(ctx, tx.tx, deferred); err != nil {
		return 0, err
	}
	for _, p := range ps {
		if err := tx.setCheckpoint(ctx, p.Name(), 0); err != nil {
			return 0, err
		}
	}
	count, pos, err := r.replayAll(ctx, tx, ps)
	if err != nil {
		return count, err
	}
	// The rows go in before the indexes are built over them.
	if err := tx.flush(ctx); err != nil {
		return count, err
	}
	if err := createIndexes(ctx, tx.tx, deferred); err != nil {
		return count, err
	}
	for _, p := range ps {
		if err := tx.setCheckpoint(ctx, p.Name(), pos); err != nil {
			return count, err
		}
	}
	if err := tx.commit(ctx); err != nil {
		return count, err
	}
	r.metrics.applied.Add(float64(count))
	return count, nil
}

// emptyTables deletes the rows of ps's tables, views aside, and returns the tables emptied.
func emptyTables(ctx context.Context, tx *Tx, ps []Projector) ([]string, error) {
	var tables []string
	for _, p := range ps {
		for _, table := range p.Tables() {
			if tx.IsView(table) {
				continue // derived by the database itself: nothing to empty
			}
			if _, err := tx.tx.ExecContext(ctx, `DELETE FROM `+table); err != nil {
				return nil, fmt.Errorf("empty %s: %w", table, err)
			}
			tables = append(tables, table)
		}
	}
	return tables, nil
}

// replayAll applies the whole log to ps in tx, reading and decoding it beside the writes
// (readDecoded); a projector that folds (fold.go) holds its rows and writes them at the end.
// It returns how many events it applied and the last one's position.
func (r *Runner) replayAll(ctx context.Context, tx *Tx, ps []Projector) (count int, pos uint64, err error) {
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	decoded := make(chan decodedBatch, 4)
	go r.readDecoded(readCtx, decoded)
	rows := statementContext(ctx)
	// A projector that folds its rows applies its fold instead of its statements (fold.go).
	appliers := make([]interface {
		Apply(context.Context, *Tx, events.Recorded, events.Payload) error
	}, len(ps))
	var folds []fold
	for i, p := range ps {
		appliers[i] = p
		if f, ok := p.(folding); ok {
			appliers[i] = f.fold()
			folds = append(folds, appliers[i].(fold))
		}
	}
	for batch := range decoded {
		if batch.err != nil {
			return count, pos, batch.err
		}
		for i, ev := range batch.events {
			tx.applying(ev.Position)
			for j, a := range appliers {
				if err := a.Apply(rows, tx, ev, batch.payloads[i]); err != nil {
					return count, pos, fmt.Errorf("projector %s at position %d (%s): %w", ps[j].Name(), ev.Position, ev.Type, err)
				}
			}
		}
		pos = batch.events[len(batch.events)-1].Position
		count += len(batch.events)
	}
	// The reading ends alike when the log does and when ctx does; and the statements above do
	// not see ctx (statementContext).
	if err := ctx.Err(); err != nil {
		return count, pos, err
	}
	for _, f := range folds {
		if err := f.flush(rows, tx); err != nil {
			return count, pos, err
		}
	}
	return count, pos, nil
}

// statementContext is the context the projectors' statements run in: ctx, except that it
// never ends. A statement given a context that can end makes the database driver watch it
// for that statement alone (modernc.org/sqlite starts a goroutine and installs a progress
// handler, lib/pq starts a goroutine), and a rebuild would pay that once per row
// (docs/storage.md, "Read models and projections"). ctx still ends the work: the
// transaction was begun with it, so database/sql rolls it back when ctx ends and every later
// statement fails (endedWith names the cause), and a rebuild looks at ctx after the log.
func statementContext(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// endedWith is err, marked as ctx's error when ctx has ended: a statement of a transaction
// whose context ended fails as if the transaction were done (statementContext), and callers
// tell an interrupt from a failure by the context's error.
func endedWith(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w: %w", ctx.Err(), err)
}

type decodedBatch struct {
	events   []events.Recorded
	payloads []events.Payload
	err      error
}

// readDecoded sends the whole log, decoded, in batches, then closes out; a failure is sent as
// the last batch. Reading and decoding run in goroutines of their own, so that with the
// writer they make a pipeline of three stages: on the embedded SQLite, reading a batch,
// decoding it and writing its rows each cost about a third of a rebuild.
func (r *Runner) readDecoded(ctx context.Context, out chan<- decodedBatch) {
	read := make(chan decodedBatch, 4)
	go r.read(ctx, read)
	defer close(out)
	for d := range read {
		d.payloads = make([]events.Payload, len(d.events))
		for i := 0; d.err == nil && i < len(d.events); i++ {
			d.payloads[i], d.err = r.registry.Decode(d.events[i])
		}
		select {
		case out <- d:
		case <-ctx.Done():
			return
		}
		if d.err != nil {
			return
		}
	}
}

// read sends the whole log in batches, then closes out; a failure is sent as the last batch.
// The reads do not see ctx, as the projectors' statements do not (statementContext): a query
// given a context that can end makes the driver watch it for that query (modernc.org/sqlite
// installs a progress handler and watches each step's wait, lib/pq starts a goroutine), which
// the raw copy of the log does not pay. ctx ends the reading between two batches.
func (r *Runner) read(ctx context.Context, out chan<- decodedBatch) {
	defer close(out)
	reads := statementContext(ctx)
	var pos uint64
	for {
		if ctx.Err() != nil {
			return
		}
		batch, err := r.feed.ReadAll(reads, pos, r.batch)
		if err == nil && len(batch) == 0 {
			return
		}
		select {
		case out <- decodedBatch{events: batch, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		pos = batch[len(batch)-1].Position
	}
}

func (r *Runner) select_(names []string) ([]Projector, error) {
	if len(names) == 0 {
		return r.projectors, nil
	}
	byName := map[string]Projector{}
	var known []string
	for _, p := range r.projectors {
		byName[p.Name()] = p
		known = append(known, p.Name())
	}
	var out []Projector
	for _, n := range names {
		p, ok := byName[n]
		if !ok {
			return nil, &UnknownProjectorError{Name: n, Known: known}
		}
		out = append(out, p)
	}
	return out, nil
}

// reachedPosition lets WaitFor sleep until a position is applied.
type reachedPosition struct {
	mu   sync.Mutex
	pos  uint64
	wake chan struct{}
}

func (p *reachedPosition) init() { p.wake = make(chan struct{}) }

// set raises the position to pos and wakes the waiters; it reports whether pos was higher.
func (p *reachedPosition) set(pos uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pos <= p.pos {
		return false
	}
	p.pos = pos
	close(p.wake)
	p.wake = make(chan struct{})
	return true
}

// nudge wakes the waiters without progress, to look at a failure.
func (p *reachedPosition) nudge() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.wake)
	p.wake = make(chan struct{})
}

func (p *reachedPosition) at() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pos
}

// wait returns when pos is reached, ctx ends, failed reports a failure, or stall passes
// without the position moving.
func (p *reachedPosition) wait(ctx context.Context, pos uint64, stall time.Duration, failed func() error) error {
	timer := time.NewTimer(stall)
	defer timer.Stop()
	last := p.at()
	for {
		p.mu.Lock()
		reached, wake := p.pos, p.wake
		p.mu.Unlock()
		if reached >= pos {
			return nil
		}
		if err := failed(); err != nil {
			return &BehindError{Position: pos, Reached: reached, Cause: err}
		}
		if reached > last {
			last = reached
			timer.Reset(stall)
		}
		select {
		case <-wake:
		case <-timer.C:
			return &BehindError{Position: pos, Reached: reached, Stalled: stall}
		case <-ctx.Done():
			return errors.Join(ctx.Err(), fmt.Errorf("read models at position %d, waiting for %d", reached, pos))
		}
	}
}
