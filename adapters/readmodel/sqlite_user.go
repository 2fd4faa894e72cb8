package readmodel

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// userSQLite runs stmt on the user connection: the file opened read-only, no database may be
// attached (SQLITE_LIMIT_ATTACHED 0), and an authorizer that lets SQLite compile only reads.
// mode=ro alone is not enough: ATTACH opens with the connection's flags, which are read-write
// in modernc.org/sqlite, and PRAGMA query_only can be turned off from SQL (issue 14).
// Cancelling ctx interrupts the statement (sqlite3_interrupt).
func (d *DB) userSQLite(ctx context.Context, stmt string, p *pass) error {
	pool, err := d.userPool(ctx)
	if err != nil {
		return err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := lockDown(conn, valueLimit(p.o.MaxBytes)); err != nil {
		return err
	}
	rows, err := conn.QueryContext(ctx, stmt)
	if tooBig(err) {
		return &TooLargeError{MaxBytes: p.o.MaxBytes}
	}
	if err != nil {
		return d.classify(err)
	}
	defer rows.Close()
	if err := d.passRows(rows, p); err != nil && err != errStop {
		return err
	}
	return nil
}

// userPool opens the user connection once, apart from the reader Zuno's own queries use
// (those run in transactions, which the authorizer refuses).
func (d *DB) userPool(ctx context.Context) (*sql.DB, error) {
	d.userOnce.Do(func() {
		db, err := sqldb.OpenSQLite(ctx, d.path, sqldb.ReadOnly)
		if err != nil {
			d.userErr = err
			return
		}
		db.SetMaxOpenConns(1)
		d.user = db.DB
	})
	return d.user, d.userErr
}

// lockDown installs the limits and the authorizer on conn's physical connection; both stay on
// it, and installing them again is harmless.
func lockDown(conn *sql.Conn, maxValue int) error {
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return fmt.Errorf("limit attached databases: %w", err)
	}
	// A string or blob a query builds (randomblob, zeroblob, group_concat) stays far below
	// the default gigabyte, so one query cannot take the machine's memory.
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, maxValue); err != nil {
		return fmt.Errorf("limit value length: %w", err)
	}
	return conn.Raw(func(c any) error {
		r, ok := c.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("the SQLite driver has no authorizer: zuno db cannot guarantee it cannot write")
		}
		return r.RegisterAuthorizer(authorizeRead)
	})
}

// maxValueBytes bounds one value a user query may build or read on SQLite.
const maxValueBytes = 64 << 20

// valueLimit is the longest value SQLite may build or read for a query whose result is
// bounded to maxBytes: no value longer than the whole result may be is read into memory at
// all (docs/config.md, "Bounds"), though never less than 1 MiB, so a small bound does not
// refuse a query's intermediate strings.
func valueLimit(maxBytes int64) int {
	if maxBytes <= 0 {
		return maxValueBytes
	}
	return int(min(maxValueBytes, max(maxBytes, 1<<20)))
}

// deniedFunctions are SQL functions with effects beyond reading.
var deniedFunctions = map[string]bool{"load_extension": true, "fts3_tokenizer": true}

// authorizeRead lets SQLite compile SELECTs, reads of the main database, recursive CTEs and
// functions; everything else — writes, DDL, PRAGMA, ATTACH, DETACH, transactions, savepoints,
// ANALYZE, REINDEX — is denied while the statement is prepared, before it can run.
func authorizeRead(action sqlite.AuthorizerActionCode, _, arg2, dbName, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthRead:
		// "" is a table of the statement itself (a CTE read whole, as count(*) does).
		if dbName == "main" || dbName == "" {
			return sqlite.AuthorizerOK
		}
	case sqlite.AuthFunction:
		if !deniedFunctions[strings.ToLower(arg2)] {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}
