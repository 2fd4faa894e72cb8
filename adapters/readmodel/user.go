package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/adapters/readmodel/sqlcheck"
	"github.com/zuno-run/zuno/adapters/sqldb"
)

// DefaultTimeout bounds a `zuno db` query when the caller gives none (docs/readmodels.md).
const DefaultTimeout = 30 * time.Second

// UserOptions bound a query a user typed.
type UserOptions struct {
	// Limit passes at most this many rows (0: no bound); UserSummary.More says whether the
	// query had more.
	Limit int
	// MaxBytes bounds the bytes of the values passed, all rows together (0: no bound): the row
	// that would pass it is not passed, and the query ends with a TooLargeError.
	MaxBytes int64
	// Timeout ends the query, and any lock it waits for, after this long (0: DefaultTimeout).
	Timeout time.Duration
}

// RowSink receives a user query's result as it is read: the column names once (Header), then each row.
// A row's values are the sink's to keep; an error from the sink ends the query with it.
type RowSink interface {
	Header(columns []string) error
	Row(values []any) error
}

// UserSummary is what a user query passed.
type UserSummary struct {
	Rows  int
	Bytes int64
	// More: the query had rows past Limit, which were not read.
	More bool
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

// CodeResultTooLarge is the stable code of TooLargeError.
const CodeResultTooLarge = "result_too_large"

// TooLargeError is a result whose values passed UserOptions.MaxBytes: the rows before the one
// that would pass it were passed on, the rest was not read (docs/config.md, "Bounds").
type TooLargeError struct {
	MaxBytes int64
	Rows     int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the result passed --max-bytes (%d bytes) at row %d; the %d rows before it were printed and the rest was not read: "+
		"select fewer or shorter columns (substr, length), narrow it with WHERE or LIMIT, or pass a larger --max-bytes", CodeResultTooLarge, e.MaxBytes, e.Rows+1, e.Rows)
}

// Code returns the stable error code.
func (e *TooLargeError) Code() string { return CodeResultTooLarge }

// UserQuery runs SQL a user typed (`zuno db`): exactly one query (sqlcheck), on a connection
// that cannot write whatever the SQL says — a read-only SQLite connection whose authorizer
// allows only reads, or a Postgres login role that holds only SELECT on the read models, in a
// READ ONLY transaction with statement, lock and idle timeouts (docs/readmodels.md). Rows
// stream into sink as they are read, within o's row and byte bounds, so what the query
// returns never accumulates here (docs/config.md, "Bounds").
func (d *DB) UserQuery(ctx context.Context, query string, o UserOptions, sink RowSink) (UserSummary, error) {
	dialect := sqlcheck.SQLite
	if d.Dialect == sqldb.Postgres {
		dialect = sqlcheck.Postgres
	}
	stmt, err := sqlcheck.Check(query, dialect)
	if err != nil {
		return UserSummary{}, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	qctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	p := &pass{o: o, sink: sink}
	if d.Dialect == sqldb.Postgres {
		err = d.userPostgres(qctx, stmt, p)
	} else {
		err = d.userSQLite(qctx, stmt, p)
	}
	var tooLarge *TooLargeError
	if err != nil && !errors.As(err, &tooLarge) && ctx.Err() == nil && (errors.Is(qctx.Err(), context.DeadlineExceeded) || isTimeout(err)) {
		return p.sum, &TimeoutError{Timeout: o.Timeout}
	}
	return p.sum, err
}

// pass hands a user query's rows to its sink within the bounds.
type pass struct {
	o       UserOptions
	sink    RowSink
	sum     UserSummary
	started bool
}

// errStop ends reading at the row limit; it is not an error of the query.
var errStop = errors.New("row limit reached")

// columns passes the columns once.
func (p *pass) columns(cols []string) error {
	if p.started {
		return nil
	}
	p.started = true
	return p.sink.Header(cols)
}

// rows reads rows into the sink until they end, the limit or the byte bound; errStop at the
// limit once one more row showed there are more.
func (d *DB) passRows(rows *sql.Rows, p *pass) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if err := p.columns(cols); err != nil {
		return err
	}
	for rows.Next() {
		if p.o.Limit > 0 && p.sum.Rows >= p.o.Limit {
			p.sum.More = true
			return errStop
		}
		vals, err := d.scanRow(rows, len(cols))
		if err != nil {
			return err
		}
		n := rowBytes(vals)
		if p.o.MaxBytes > 0 && p.sum.Bytes+n > p.o.MaxBytes {
			return &TooLargeError{MaxBytes: p.o.MaxBytes, Rows: p.sum.Rows}
		}
		if err := p.sink.Row(vals); err != nil {
			return err
		}
		p.sum.Rows++
		p.sum.Bytes += n
	}
	if err := rows.Err(); err != nil {
		if tooBig(err) {
			return &TooLargeError{MaxBytes: p.o.MaxBytes, Rows: p.sum.Rows}
		}
		return d.classify(err)
	}
	return nil
}

// scanRow reads the current row's values, normalized (normalize).
func (d *DB) scanRow(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]value, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, d.classify(err)
	}
	out := make([]any, n)
	for i, v := range vals {
		out[i] = v.v
	}
	return out, nil
}

// value takes a column's value from the driver as it is, normalized: scanning into an any
// would copy a byte value once more before it is made text (database/sql clones bytes for
// an *any), and a user query's values may be as long as its whole bound.
type value struct{ v any }

func (v *value) Scan(src any) error {
	v.v = normalize(src)
	return nil
}

// rowBytes is what a row's values weigh: a string its length, anything else 8 bytes.
func rowBytes(vals []any) int64 {
	var n int64
	for _, v := range vals {
		if s, ok := v.(string); ok {
			n += int64(len(s))
		} else {
			n += 8
		}
	}
	return n
}
