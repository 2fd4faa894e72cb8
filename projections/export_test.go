package projections

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/events"
)

// WithBatchSize sets how many events one transaction applies (default 1000): the crash test
// makes batches small so that a kill lands inside one.
func WithBatchSize(n int) Option { return func(r *Runner) { r.batch = n } }

// ApplyOne applies one event to p in a transaction of its own, without touching checkpoints:
// a test replays a single event over a finished read model.
func ApplyOne(ctx context.Context, db *sqlx.DB, p Projector, ev events.Recorded, payload events.Payload) error {
	tx, err := newTx(ctx, db)
	if err != nil {
		return err
	}
	defer tx.rollback()
	if tx.views, err = readViews(ctx, tx.tx); err != nil {
		return err
	}
	if err := p.Apply(ctx, tx, ev, payload); err != nil {
		return err
	}
	return tx.commit(ctx)
}

// Leading reports whether this runner holds the projection leadership now.
func (r *Runner) Leading() bool {
	r.follow.mu.Lock()
	defer r.follow.mu.Unlock()
	return r.follow.leading
}

// SetFoldLimit sets how many rows, and how many bytes of large values, a rebuild's fold holds
// per table before it writes the oldest half, and returns a function that restores the
// limits: small limits make a test rebuild write rows early, so that later events reach rows
// already written.
func SetFoldLimit(rows, bytes int) (restore func()) {
	oldRows, oldBytes := foldLimit, foldBytes
	foldLimit, foldBytes = rows, bytes
	return func() { foldLimit, foldBytes = oldRows, oldBytes }
}
