package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"

	"github.com/zuno-run/zuno/domain"
)

// Read-your-writes by position (docs/storage.md, "Read models and projections"): a process
// has one runner, which follows the log in the background once something waits for it
// (WaitFor) or the host starts it (Start, Follow). A command never catches the read models up
// itself; it returns the position of its last event, and a query that must see the command
// waits until the read models have applied that position.
//
// On Postgres one process of the deployment projects at a time, the leader: it holds the
// projection_leader table lock (migrations/postgres/readmodel/0012) on a connection of its
// own for as long as it leads. The other processes do not project; they read the
// checkpoints the leader writes, and when no process holds the lock (the leader ended or
// died, and the server dropped its connection and so its lock), the first to see it takes
// over. On SQLite every process projects for itself (Follow): the database's write lock
// already serialises the writers, and each transaction re-reads the checkpoints it starts
// from.

// CodeProjectionsBehind is the stable code of BehindError.
const CodeProjectionsBehind = "projections_behind"

// BehindError is a wait for a position that the read models did not reach: no progress for
// the runner's stall timeout, or the projection failed (Cause).
type BehindError struct {
	Position, Reached uint64
	Stalled           time.Duration
	Cause             error
}

func (e *BehindError) Error() string {
	msg := fmt.Sprintf("the read models are at position %d and did not reach %d", e.Reached, e.Position)
	if e.Cause != nil {
		msg += ": projecting failed: " + e.Cause.Error()
	} else {
		msg += fmt.Sprintf(" (no progress for %s)", e.Stalled)
	}
	return domain.FormatError(CodeProjectionsBehind, "", "", msg,
		"zuno projections status shows each projector's checkpoint; zuno projections catch-up applies the log in this process, and names the event it stops at")
}

// Code returns the stable error code.
func (e *BehindError) Code() string { return CodeProjectionsBehind }

func (e *BehindError) Unwrap() error { return e.Cause }

const (
	// DefaultStall is how long WaitFor waits without the read models moving before it gives up.
	DefaultStall = 30 * time.Second
	// firstPoll and lastPoll bound a follower's interval between two reads of the checkpoints:
	// short while the read models move or someone has just started waiting, growing while they
	// stand still.
	firstPoll = 2 * time.Millisecond
	lastPoll  = 250 * time.Millisecond
	// leaderPing is how often the leader checks that its lock connection is alive.
	leaderPing = time.Second
)

// WithStall sets how long WaitFor waits without progress (DefaultStall when not set).
func WithStall(d time.Duration) Option { return func(r *Runner) { r.stall = d } }

// follower is the state of the runner's background loop.
type follower struct {
	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	failure error // the last error of projecting, cleared by progress

	poke    chan struct{} // a waiter arrived: read the checkpoints now
	leading bool          // this process holds the leadership now (export_test.go reads it)
	// tried is when this runner last tried to take the leadership, in Unix nanoseconds
	// (atomic: a host may run Follow beside the loop Start runs).
	tried atomic.Int64
}

// Start follows the log in the background, once per runner, until Close: as the leader, or
// on Postgres as a follower of another process's leader. WaitFor starts it on first use.
func (r *Runner) Start(ctx context.Context) {
	f := &r.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done != nil {
		return
	}
	ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		_ = r.Follow(ctx)
	}()
}

// Close stops the background loop started by Start and gives up the leadership.
func (r *Runner) Close() error {
	f := &r.follow
	f.mu.Lock()
	cancel, done := f.cancel, f.done
	f.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

// Follow keeps the read models up with the log until ctx ends. On Postgres it projects live
// while it holds the leadership, and otherwise follows the leader's checkpoints, taking over
// when no process leads. On SQLite it catches up when a wait begins and then every poll
// interval, rather than live: there a projection transaction takes the one write lock the
// process's own appends need, and one per commit would double a step's syncs. Failures are
// kept for WaitFor to report and retried with backoff.
func (r *Runner) Follow(ctx context.Context) error {
	poll := firstPoll
	for ctx.Err() == nil {
		before := r.reached.at()
		var err error
		if r.db.DriverName() == "postgres" {
			err = r.leadOrFollow(ctx)
		} else {
			_, err = r.CatchUp(ctx)
		}
		if err != nil && ctx.Err() == nil {
			r.setFailure(err)
		}
		if r.reached.at() > before {
			poll = firstPoll
		}
		if !r.sleep(ctx, poll) {
			poll = firstPoll
		} else {
			poll = min(2*poll, lastPoll)
		}
	}
	return ctx.Err()
}

// leadOrFollow projects live for as long as this process holds the leadership, or, when
// another process does, reads the checkpoints it wrote.
func (r *Runner) leadOrFollow(ctx context.Context) error {
	// A follower polls the checkpoints every few milliseconds while they move; trying the
	// lock each time would cost three statements and a transaction per poll in every follower
	// of the deployment. Once per leaderPing is soon enough to take over from a leader that
	// is gone (its lock went with its connection).
	if time.Since(time.Unix(0, r.follow.tried.Load())) < leaderPing {
		return r.readProgress(ctx)
	}
	r.follow.tried.Store(time.Now().UnixNano())
	lead, err := r.lead(ctx)
	if err != nil {
		return err
	}
	if lead == nil {
		return r.readProgress(ctx)
	}
	r.setLeading(true)
	err = r.Run(lead.ctx)
	lead.release()
	r.setLeading(false)
	// A process that has just lost the lock waits its turn: a follower that still has its
	// connection takes over first.
	r.follow.tried.Store(time.Now().UnixNano())
	if errors.Is(err, context.Canceled) {
		return nil // ctx ended, or the lock's connection did: follow whoever leads now
	}
	return err
}

// sleep waits d, or less when a waiter arrives; it reports whether it waited the whole d.
func (r *Runner) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.follow.poke:
		return false
	case <-ctx.Done():
		return false
	}
}

func (r *Runner) setLeading(on bool) {
	r.follow.mu.Lock()
	r.follow.leading = on
	r.follow.mu.Unlock()
}

func (r *Runner) setFailure(err error) {
	r.follow.mu.Lock()
	r.follow.failure = err
	r.follow.mu.Unlock()
	r.reached.nudge()
}

func (r *Runner) failure() error {
	r.follow.mu.Lock()
	defer r.follow.mu.Unlock()
	return r.follow.failure
}

// readProgress reads the checkpoints another process's leader writes.
func (r *Runner) readProgress(ctx context.Context) error {
	cps, err := r.checkpoints(ctx, r.db)
	if err != nil {
		return err
	}
	r.advance(lowest(cps, r.projectors))
	return nil
}

// leadership is the projection leadership while this runner holds it: ctx ends when it is
// lost, release gives it up.
type leadership struct {
	ctx     context.Context
	release func()
}

// leaderLock takes the leadership, or fails at once (lock_not_available) when another
// process holds it.
const leaderLock = "LOCK TABLE projection_leader IN EXCLUSIVE MODE NOWAIT"

// lead takes the leadership when no process holds it; nil when another does. On SQLite
// every process leads (see above).
func (r *Runner) lead(ctx context.Context) (*leadership, error) {
	if r.db.DriverName() != "postgres" {
		return &leadership{ctx: ctx, release: func() {}}, nil
	}
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// A transaction kept open only to hold the lock: READ COMMITTED holds no snapshot between
	// statements, so it keeps no row versions from vacuum while it waits.
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, leaderLock); err != nil {
		tx.Rollback()
		conn.Close()
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && pqErr.Code == "55P03" { // lock_not_available: another leads
			return nil, nil
		}
		return nil, fmt.Errorf("take the projection leadership: %w", err)
	}
	lctx, cancel := context.WithCancel(ctx)
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		keepLeading(lctx, tx)
		cancel()
	}()
	return &leadership{ctx: lctx, release: func() {
		cancel()
		<-pinged
		tx.Rollback()
		conn.Close()
	}}, nil
}

// keepLeading returns when ctx ends or the lock's connection fails: the server has then
// dropped the lock, and another process may be leading already.
func keepLeading(ctx context.Context, tx *sql.Tx) {
	t := time.NewTicker(leaderPing)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := tx.ExecContext(ctx, `SELECT 1`); err != nil {
				return
			}
		}
	}
}

// Head is the log's last position now: what a query that must see every write made before it
// waits for.
func (r *Runner) Head(ctx context.Context) (uint64, error) { return r.feed.LastPosition(ctx) }

// WaitFor blocks until every projector has applied the event at position: a command returns
// its last position, and a query that must see the command waits for it. It starts the
// background loop when nothing runs it yet. It fails with a BehindError when the read models
// stand still for the stall timeout, or when projecting fails.
func (r *Runner) WaitFor(ctx context.Context, position uint64) error {
	if r.reached.at() >= position {
		return nil
	}
	r.Start(ctx)
	select {
	case r.follow.poke <- struct{}{}:
	default:
	}
	return r.reached.wait(ctx, position, r.stall, r.failure)
}
