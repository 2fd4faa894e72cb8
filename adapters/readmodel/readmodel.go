// Package readmodel opens the database the projections write (SQLite or PostgreSQL), applies
// its schema, and runs the read-only SQL of `zuno db` over it.
package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// DB is a read-model database.
type DB struct {
	Dialect sqldb.Dialect
	// Writer is where projections write; on SQLite its transactions take the write lock at BEGIN.
	Writer *sqlx.DB
	// reader runs Zuno's own queries and cannot write: a read-only SQLite connection, or
	// read-only transactions on Postgres.
	reader *sqlx.DB

	// path (SQLite) or dsn and readerURL (Postgres) say where UserQuery connects: to user, a
	// connection opened once, apart from reader (sqlite_user.go, pg_user.go).
	path, dsn, readerURL string
	userOnce             sync.Once
	user                 *sql.DB
	userErr              error
}

// Option configures OpenPostgres.
type Option func(*DB)

// WithReaderURL connects UserQuery to this Postgres URL, whose role must hold only SELECT on
// the read models, instead of the reader role the migrations created (docs/storage.md).
func WithReaderURL(u string) Option { return func(d *DB) { d.readerURL = u } }

// OpenSQLite opens the read models in the SQLite file at path, creating their tables.
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	w, err := sqldb.OpenSQLite(ctx, path, sqldb.Writer)
	if err != nil {
		return nil, err
	}
	if err := sqldb.Migrate(ctx, w, sqldb.SQLite, sqldb.ReadModel); err != nil {
		w.Close()
		return nil, err
	}
	if err := shareEventLog(ctx, w, sqldb.SQLite); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sqldb.OpenSQLite(ctx, path, sqldb.ReadOnly)
	if err != nil {
		w.Close()
		return nil, err
	}
	return &DB{Dialect: sqldb.SQLite, Writer: w, reader: r, path: path}, nil
}

// OpenPostgres opens the read models in the PostgreSQL database at dsn, creating their tables
// and the json_extract function.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	db, err := sqldb.OpenPostgres(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := sqldb.Migrate(ctx, db, sqldb.Postgres, sqldb.ReadModel); err != nil {
		db.Close()
		return nil, err
	}
	if err := shareEventLog(ctx, db, sqldb.Postgres); err != nil {
		db.Close()
		return nil, err
	}
	d := &DB{Dialect: sqldb.Postgres, Writer: db, reader: db, dsn: dsn}
	for _, o := range opts {
		o(d)
	}
	return d, nil
}

// Close closes the connections.
func (d *DB) Close() error {
	err := d.Writer.Close()
	if d.reader != d.Writer {
		err = errors.Join(err, d.reader.Close())
	}
	if d.user != nil {
		err = errors.Join(err, d.user.Close())
	}
	return err
}

// Rows is a query's result: column names and values in column order. Values are strings,
// int64s, float64s, nil, or JSON values decoded from JSON columns.
type Rows struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// CodeReadOnly is the stable code of ReadOnlyError.
const CodeReadOnly = "read_only"

// ReadOnlyError is returned when SQL given to Query tries to write. Nothing was written.
type ReadOnlyError struct{ Cause error }

func (e *ReadOnlyError) Error() string {
	return "read_only: zuno db runs read-only SQL over the read models, which are derived from the event log; " +
		"change state through zuno commands, or rebuild read models with `zuno projections rebuild` (" + e.Cause.Error() + ")"
}

// Code returns the stable error code.
func (e *ReadOnlyError) Code() string { return CodeReadOnly }

func (e *ReadOnlyError) Unwrap() error { return e.Cause }

// QueryError is SQL that the database refused for another reason (syntax, unknown table).
type QueryError struct{ Cause error }

func (e *QueryError) Error() string {
	return "query_failed: " + e.Cause.Error() + " (tables: event, session, part, prompt_receipt, provider_request, agent_job, inbox, question, work_plan, work_item, goal, task_context, permission_decision, verification_receipt, projection_checkpoint)"
}

// Code returns the stable error code.
func (e *QueryError) Code() string { return "query_failed" }

func (e *QueryError) Unwrap() error { return e.Cause }

// Query runs SQL that Zuno itself wrote (the lists and lookups of commands/queries) in a
// read-only transaction and returns at most limit rows (0: no limit). Its values come as args,
// bound to '?' placeholders (rebound to $n on Postgres), never spliced into the text. SQL a
// user typed goes through UserQuery, which cannot write by construction.
func (d *DB) Query(ctx context.Context, query string, limit int, args ...any) (*Rows, error) {
	tx, err := d.reader.BeginTxx(ctx, &sql.TxOptions{ReadOnly: d.Dialect == sqldb.Postgres})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, tx.Rebind(query), args...)
	if err != nil {
		return nil, d.classify(err)
	}
	return d.collect(rows, limit)
}

// collect reads at most limit rows (0: all) and closes rows.
func (d *DB) collect(rows *sql.Rows, limit int) (*Rows, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := &Rows{Columns: cols, Rows: [][]any{}}
	for rows.Next() {
		if limit > 0 && len(out.Rows) >= limit {
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, d.classify(err)
		}
		for i, v := range vals {
			vals[i] = normalize(v)
		}
		out.Rows = append(out.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, d.classify(err)
	}
	return out, nil
}

// normalize turns driver values into JSON-friendly ones: bytes (and Postgres JSON columns,
// which arrive as bytes) become text, so output is the same on both dialects.
func normalize(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

func (d *DB) classify(err error) error {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && refusedByPostgres[pqErr.Code] {
		return &ReadOnlyError{Cause: err}
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) && (liteErr.Code()&0xff == 8 || liteErr.Code()&0xff == 23) { // SQLITE_READONLY, SQLITE_AUTH
		return &ReadOnlyError{Cause: err}
	}
	// SQLite refuses a write to a view (the event read model, docs/storage.md) while it
	// compiles the statement, before the read-only connection would.
	if strings.Contains(err.Error(), "readonly database") || strings.Contains(err.Error(), "query_only") ||
		strings.Contains(err.Error(), "because it is a view") {
		return &ReadOnlyError{Cause: err}
	}
	return &QueryError{Cause: err}
}

// refusedByPostgres are the errors of a statement that tried to write or to reach beyond the
// reader's privileges: read_only_sql_transaction, insufficient_privilege.
var refusedByPostgres = map[pq.ErrorCode]bool{"25006": true, "42501": true}

// isTimeout reports a query the database cancelled: a statement or lock timeout on Postgres
// (query_canceled, lock_not_available), an interrupt on SQLite.
func isTimeout(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "57014" || pqErr.Code == "55P03"
	}
	var liteErr *sqlite.Error
	return errors.As(err, &liteErr) && liteErr.Code()&0xff == 9 // SQLITE_INTERRUPT
}
