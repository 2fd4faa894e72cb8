// Package sqldb opens the SQL databases Zuno uses (embedded SQLite through modernc.org/sqlite,
// PostgreSQL through lib/pq) with the settings an audit log needs, and applies the embedded
// migrations.
package sqldb

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"  // registers "postgres"
	_ "modernc.org/sqlite" // registers "sqlite"
)

// Dialect names a SQL database family.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Mode says how a SQLite file is opened.
type Mode int

const (
	// ReadWrite opens for reads and ordinary (deferred) transactions.
	ReadWrite Mode = iota
	// Writer opens a connection whose transactions take the write lock at BEGIN
	// (BEGIN IMMEDIATE), so a read-then-write transaction never fails to upgrade its lock.
	Writer
	// ReadOnly opens the file read-only: any write fails inside SQLite itself.
	ReadOnly
)

// SQLiteDSN returns the modernc.org/sqlite DSN for path: WAL with synchronous=FULL (an audit
// log that drops acknowledged events on power loss is not an audit log) and a busy timeout so
// several processes can share one file.
func SQLiteDSN(path string, mode Mode) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	// Statement journals go to memory, not to a temporary file: every multi-row INSERT in a
	// transaction keeps one, and writing it to disk cost a fifth of an append.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-32000)")
	switch mode {
	case ReadOnly:
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
	default:
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		if mode == Writer {
			q.Set("_txlock", "immediate")
		}
	}
	return "file:" + path + "?" + q.Encode()
}

// OpenSQLite opens (creating when needed, unless read-only) the SQLite file at path.
func OpenSQLite(ctx context.Context, path string, mode Mode) (*sqlx.DB, error) {
	if mode != ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("create directory for %s: %w", path, err)
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open %s: %w (run a zuno command that writes first, or check ZUNO_DB)", path, err)
	}
	db, err := sqlx.Open("sqlite", SQLiteDSN(path, mode))
	if err != nil {
		return nil, err
	}
	if mode == Writer {
		db.SetMaxOpenConns(1)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open SQLite database %s: %w", path, err)
	}
	return db, nil
}

// OpenPostgres connects to a PostgreSQL URL (postgres://user@host:port/db?sslmode=disable).
func OpenPostgres(ctx context.Context, dsn string) (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", withOneRoundTrip(dsn))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to PostgreSQL %s: %w", RedactURL(dsn), err)
	}
	return db, nil
}

// RedactURL hides a password in a connection URL for error messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparseable URL>"
	}
	return u.Redacted()
}

// withOneRoundTrip turns on lib/pq's binary_parameters, with which a statement with
// parameters is parsed, bound and executed in one round trip instead of two: an append runs
// several such statements while holding the append lock.
func withOneRoundTrip(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Query().Has("binary_parameters") {
		return dsn
	}
	q := u.Query()
	q.Set("binary_parameters", "yes")
	u.RawQuery = q.Encode()
	return u.String()
}
