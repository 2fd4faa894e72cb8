package projections_test

import (
	"context"

	"github.com/zuno-run/zuno/adapters/readmodel"
)

// userCollected is a RowSink that keeps every row, for tests that look at a whole result.
type userCollected struct{ readmodel.Rows }

func (c *userCollected) Header(cols []string) error {
	c.Rows.Columns, c.Rows.Rows = cols, [][]any{}
	return nil
}
func (c *userCollected) Row(vals []any) error { c.Rows.Rows = append(c.Rows.Rows, vals); return nil }

// userRows runs a user query and returns its whole result.
func userRows(rm *readmodel.DB, ctx context.Context, query string, o readmodel.UserOptions) (*readmodel.Rows, error) {
	var c userCollected
	_, err := rm.UserQuery(ctx, query, o, &c)
	if err != nil {
		return nil, err
	}
	return &c.Rows, nil
}
