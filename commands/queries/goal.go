package queries

import (
	"context"

	"github.com/zuno-run/zuno/domain/goal"
)

// Goal is goal_get: the Goal of a session's root, folded from its work stream (nil when the
// session never had one), as zuno goal show and GET /api/sessions/{id}/goal read it.
func (q *Queries) Goal(ctx context.Context, sessionID string) (*goal.View, error) {
	st, err := q.work(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return st.Goal().View(), nil
}
