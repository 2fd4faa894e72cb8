package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// Stable codes of ReaderError.
const (
	// CodeReaderUnavailable: zuno db has no reader role on Postgres (none configured, and the
	// migrations could not create one), or cannot connect as it.
	CodeReaderUnavailable = "reader_unavailable"
	// CodeReaderPrivileged: the reader role could do more than read (superuser, owner, writer).
	CodeReaderPrivileged = "reader_privileged"
)

// ReaderError says `zuno db` has no Postgres role it can trust to be read-only, and how to
// configure one (docs/storage.md). Nothing was run.
type ReaderError struct {
	code   string
	detail string
}

func (e *ReaderError) Error() string {
	return e.code + ": " + e.detail + "; zuno db connects as a login role that holds only SELECT on the " +
		"read-model tables: set ZUNO_READMODEL_READER_URL (readmodel_reader_url) to one, or run Zuno's " +
		"migrations as a role with CREATEROLE, which creates it (docs/storage.md)"
}

// Code returns the stable error code.
func (e *ReaderError) Code() string { return e.code }

// userPostgres runs stmt as the reader role: one statement through the extended protocol
// (prepared, so a second statement is a syntax error), in a READ ONLY transaction whose
// statement, lock and idle timeouts are the query's timeout, and which is always rolled back
// (Postgres lets a few functions, lo_create among them, run read-only). A role switched to from an owner
// session can be switched back from inside a statement, so the boundary is the login role
// itself, checked in verifyReader.
func (d *DB) userPostgres(ctx context.Context, stmt string, p *pass) error {
	r, err := d.pgReader(ctx)
	if err != nil {
		return err
	}
	tx, err := r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ms := strconv.FormatInt(p.o.Timeout.Milliseconds(), 10)
	if _, err := tx.ExecContext(ctx, `SELECT set_config('statement_timeout', $1, true),
		set_config('lock_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $1, true)`, ms); err != nil {
		return err
	}
	ps, err := tx.PrepareContext(ctx, stmt)
	if err != nil {
		return d.classify(err)
	}
	defer ps.Close()
	// Reading stops early at a bound: the server is then told to cancel the statement
	// (the driver sends a cancel request when rctx ends), so closing the rows does not drain
	// the rest of the result over the wire.
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	rows, err := ps.QueryContext(rctx)
	if err != nil {
		return d.classify(err)
	}
	defer rows.Close()
	err = d.passRows(rows, p)
	if err != nil {
		stop()
	}
	if err == errStop {
		return nil
	}
	return err
}

// pgReader connects as the reader once: the URL configured, else the role and password the
// migrations created (zuno_reader_credential, readable by the owner only).
func (d *DB) pgReader(ctx context.Context) (*sql.DB, error) {
	d.userOnce.Do(func() {
		d.user, d.userErr = d.connectReader(ctx)
	})
	return d.user, d.userErr
}

func (d *DB) connectReader(ctx context.Context) (*sql.DB, error) {
	u := d.readerURL
	if u == "" {
		var err error
		if u, err = d.storedReaderURL(ctx); err != nil {
			return nil, err
		}
	}
	db, err := sqldb.OpenPostgres(ctx, u)
	if err != nil {
		return nil, &ReaderError{CodeReaderUnavailable, err.Error()}
	}
	db.SetMaxOpenConns(1)
	if err := verifyReader(ctx, db.DB); err != nil {
		db.Close()
		return nil, err
	}
	return db.DB, nil
}

func (d *DB) storedReaderURL(ctx context.Context) (string, error) {
	var role, password string
	err := d.Writer.QueryRowContext(ctx, `SELECT role, password FROM zuno_reader_credential`).Scan(&role, &password)
	if errors.Is(err, sql.ErrNoRows) {
		return "", &ReaderError{CodeReaderUnavailable, "the migrations could not create a reader role (their role lacks CREATEROLE) and none is configured"}
	}
	if err != nil {
		return "", &ReaderError{CodeReaderUnavailable, "read the reader's credentials: " + err.Error()}
	}
	u, err := url.Parse(d.dsn)
	if err != nil {
		return "", err
	}
	u.User = url.UserPassword(role, password)
	return u.String(), nil
}

// verifyReader refuses a connection whose role could do more than read: a superuser, a role
// that owns a table here or may act as its owner, may write one, may create roles or
// databases, belongs to a role that reads server files, runs programs or signals backends, or
// may call a function with a side effect (migrations/postgres/readmodel/0015).
func verifyReader(ctx context.Context, db *sql.DB) error {
	var role, why string
	err := db.QueryRowContext(ctx, readerCheck).Scan(&role, &why)
	if err != nil {
		return &ReaderError{CodeReaderUnavailable, "check the reader role: " + err.Error()}
	}
	if why != "" {
		return &ReaderError{CodeReaderPrivileged, "role " + role + " " + why + ", so zuno db refuses to run SQL as it"}
	}
	return nil
}

const readerCheck = `SELECT current_user::text, CASE
	WHEN r.rolsuper THEN 'is a superuser'
	WHEN r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls THEN 'may create roles or databases, replicate or bypass row security'
	WHEN EXISTS (SELECT 1 FROM pg_class c WHERE c.relkind IN ('r','p','v','m','S','f')
		AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
		AND pg_has_role(current_user, c.relowner, 'MEMBER')) THEN 'owns tables in this database (or may act as their owner)'
	WHEN EXISTS (SELECT 1 FROM pg_class c WHERE c.relkind IN ('r','p')
		AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
		AND has_table_privilege(c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER')) THEN 'may write tables in this database'
	WHEN pg_has_role(current_user, 'pg_read_server_files', 'MEMBER') OR pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
		OR pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER') OR pg_has_role(current_user, 'pg_signal_backend', 'MEMBER')
		THEN 'may read or write server files, run programs or signal other sessions'
	WHEN has_database_privilege(current_database(), 'CREATE') THEN 'may create schemas in this database'
	WHEN EXISTS (SELECT 1 FROM zuno_reader_side_effect_functions() f WHERE has_function_privilege(f, 'EXECUTE'))
		THEN 'may call ' || (SELECT min(f::text) FROM zuno_reader_side_effect_functions() f WHERE has_function_privilege(f, 'EXECUTE'))
			|| ', a function with side effects (a superuser must run SELECT zuno_reader_revoke_side_effects() in this database once: docs/storage.md)'
	ELSE '' END
FROM pg_roles r WHERE r.rolname = current_user`
