package readmodel

import (
	"context"
	"errors"
	"time"

	"github.com/zuno-run/zuno/adapters/readmodel/sqlcheck"
	"github.com/zuno-run/zuno/adapters/sqldb"
)

// DefaultTimeout bounds a `zuno db` query when the caller gives none (docs/readmodels.md).
const DefaultTimeout = 30 * time.Second

// UserOptions bound a query a user typed.
type UserOptions struct {
	// Limit returns at most this many rows (0: all).
	Limit int
	// Timeout ends the query, and any lock it waits for, after this long (0: DefaultTimeout).
	Timeout time.Duration
}

// CodeTimeout is the stable code of TimeoutError.
const CodeTimeout = "query_timeout"

// TimeoutError is a query that ran past its timeout and was cancelled by the database.
type TimeoutError struct{ Timeout time.Duration }

func (e *TimeoutError) Error() string {
	return CodeTimeout + ": the query ran longer than " + e.Timeout.String() +
		" and was cancelled; narrow it (WHERE, LIMIT) or give zuno db a longer --timeout"
}

// Code returns the stable error code.
func (e *TimeoutError) Code() string { return CodeTimeout }

// UserQuery runs SQL a user typed (`zuno db`): exactly one query (sqlcheck), on a connection
// that cannot write whatever the SQL says — a read-only SQLite connection whose authorizer
// allows only reads, or a Postgres login role that holds only SELECT on the read models, in a
// READ ONLY transaction with statement, lock and idle timeouts (docs/readmodels.md).
func (d *DB) UserQuery(ctx context.Context, query string, o UserOptions) (*Rows, error) {
	dialect := sqlcheck.SQLite
	if d.Dialect == sqldb.Postgres {
		dialect = sqlcheck.Postgres
	}
	stmt, err := sqlcheck.Check(query, dialect)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	qctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var rows *Rows
	if d.Dialect == sqldb.Postgres {
		rows, err = d.userPostgres(qctx, stmt, o)
	} else {
		rows, err = d.userSQLite(qctx, stmt, o.Limit)
	}
	if err != nil && ctx.Err() == nil && (errors.Is(qctx.Err(), context.DeadlineExceeded) || isTimeout(err)) {
		return nil, &TimeoutError{Timeout: o.Timeout}
	}
	return rows, err
}
