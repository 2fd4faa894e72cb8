package queries

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// SessionFilter is the audit console's filter of the session list (docs/console.md).
type SessionFilter = projections.SessionFilter

// SessionPage lists the sessions f selects, newest first, from the read models once they are
// current: the audit console's list. It reads one row past f.Limit, so More says whether a
// next page exists without counting the table.
func (q *Queries) SessionPage(ctx context.Context, f SessionFilter) (t Table, more bool, err error) {
	f.Limit++
	query, args := projections.SessionPageQuery(f)
	t, err = q.SQL(ctx, query, 0, args...)
	if err != nil {
		return Table{}, false, err
	}
	if len(t.Rows) == f.Limit {
		t.Rows, more = t.Rows[:f.Limit-1], true
	}
	return t, more, nil
}

// Fold hands fn each event of a stream with its decoded payload, in stream order: what a
// face that shows a stream's events (the audit console's timeline) reads, each event decoded
// once. An event this build cannot decode is an error naming it, never skipped.
func (q *Queries) Fold(ctx context.Context, stream string, fn func(events.Recorded, events.Payload) error) error {
	_, err := commands.Load(ctx, q.log, q.registry, stream, 0, fn)
	return err
}
