package app

import (
	"context"
	"time"
)

// ProjectionAdmin is the process's projection runner as `zuno projections catch-up` and
// `rebuild` change it (projections.Runner); its status is a query (Queries.ProjectionStatus).
type ProjectionAdmin interface {
	CatchUp(ctx context.Context) (uint64, error)
	Rebuild(ctx context.Context, names ...string) (int, error)
}

// CatchUpProjections applies every stored event the read models have not seen yet and returns
// the position they are at.
func (c *Commands) CatchUpProjections(ctx context.Context) (uint64, error) {
	return c.ports.Projections.CatchUp(ctx)
}

// Rebuilt is what a rebuild replayed, and how long it took.
type Rebuilt struct {
	// Projectors are those rebuilt as named; none named is every one.
	Projectors []string
	Events     int
	Elapsed    time.Duration
}

// RebuildProjections drops the named projectors' rows (every projector's when none is named),
// resets their checkpoints and replays the log into them in one transaction, so readers see
// the old read model until the rebuilt one is committed (docs/storage.md, "Read models and projections").
func (c *Commands) RebuildProjections(ctx context.Context, names ...string) (Rebuilt, error) {
	started := time.Now()
	n, err := c.ports.Projections.Rebuild(ctx, names...)
	if err != nil {
		return Rebuilt{}, err
	}
	return Rebuilt{Projectors: names, Events: n, Elapsed: time.Since(started)}, nil
}
