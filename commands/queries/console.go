package queries

import (
	"context"

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
