package readmodel

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/events"
)

// Read models that are one row per event of the log, with nothing but what the event says,
// are views over event_log where the log and the read models share one database, rather than a
// second copy (docs/storage.md, "The event read model"): same columns, same values, so
// forensic SQL runs unchanged, and nothing is written per event. The projectors write them
// only where the log is elsewhere.
//
// The `event` read model is every event of the log with its aggregate id and a fixed-width UTC
// time (projections.EventLog). The time column spells metadata.time as projections.TimeFormat
// does: whole seconds in UTC, then the fraction the log stored padded to nine digits.
const (
	sqliteTime = `strftime('%Y-%m-%dT%H:%M:%S', CASE WHEN substr(t, 20, 1) = '.' THEN substr(t, 1, 19) || ltrim(substr(t, 21), '0123456789') ELSE t END)
        || '.' || substr(CASE WHEN substr(t, 20, 1) = '.'
            THEN substr(t, 21, length(substr(t, 21)) - length(ltrim(substr(t, 21), '0123456789'))) ELSE '' END || '000000000', 1, 9)
        || 'Z'`
	postgresTime = `to_char(regexp_replace(metadata->>'time', '\.[0-9]+', '')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
        || '.' || rpad(coalesce(substring(metadata->>'time' from '\.([0-9]+)'), ''), 9, '0') || 'Z'`

	sqliteEventView = `CREATE VIEW event AS
SELECT event_id AS id, position,
    CASE WHEN instr(stream, '-') > 0 THEN substr(stream, instr(stream, '-') + 1) ELSE stream END AS aggregate_id,
    stream, stream_revision AS revision, type, data, metadata,
    ` + sqliteTime + ` AS time
FROM (SELECT *, json_extract(metadata, '$.time') AS t FROM event_log)`

	postgresEventView = `CREATE VIEW event AS
SELECT event_id::text AS id, position,
    CASE WHEN strpos(stream, '-') > 0 THEN substr(stream, strpos(stream, '-') + 1) ELSE stream END AS aggregate_id,
    stream, stream_revision AS revision, type, data::jsonb AS data, metadata::jsonb AS metadata,
    ` + postgresTime + ` AS time
FROM event_log`

	// verification_receipt is one row per session.verification.receipt.1, with the values
	// projections.VerificationReceipts writes: an empty turn id is NULL, constructs the JSON
	// array of the limitations' construct names in order ('[]' for none).
	sqliteVerificationView = `CREATE VIEW verification_receipt AS
SELECT json_extract(data, '$.receiptId') AS id, json_extract(data, '$.sessionId') AS session_id,
    nullif(json_extract(data, '$.turnId'), '') AS turn_id, json_extract(data, '$.callId') AS call_id, event_id,
    json_extract(data, '$.command') AS command, json_extract(data, '$.interpreter') AS interpreter,
    json_extract(data, '$.policy') AS policy, json_extract(data, '$.verdict') AS verdict,
    json_extract(data, '$.exitCode') AS exit_code, json_extract(data, '$.coverage') AS coverage,
    json_extract(data, '$.authority') AS authority,
    (SELECT json_group_array(json_extract(l.value, '$.construct')) FROM json_each(data, '$.limitations') AS l) AS constructs,
    position, ` + sqliteTime + ` AS time_created
FROM (SELECT *, json_extract(metadata, '$.time') AS t FROM event_log WHERE type = '` + events.TypeVerificationReceipt + `')`

	postgresVerificationView = `CREATE VIEW verification_receipt AS
SELECT d->>'receiptId' AS id, d->>'sessionId' AS session_id, nullif(d->>'turnId', '') AS turn_id,
    d->>'callId' AS call_id, event_id::text AS event_id, d->>'command' AS command,
    d->>'interpreter' AS interpreter, d->>'policy' AS policy, d->>'verdict' AS verdict,
    (d->>'exitCode')::bigint AS exit_code, d->>'coverage' AS coverage, d->>'authority' AS authority,
    coalesce((SELECT '[' || string_agg(to_json(l.value->>'construct')::text, ',' ORDER BY l.ordinality) || ']'
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(d->'limitations') = 'array' THEN d->'limitations' ELSE '[]' END)
            WITH ORDINALITY AS l(value, ordinality)), '[]') AS constructs,
    position, ` + postgresTime + ` AS time_created
FROM (SELECT *, data::jsonb AS d FROM event_log WHERE type = '` + events.TypeVerificationReceipt + `') AS r`
)

// logView is a read model that is a view over event_log where the log shares its database.
type logView struct{ name, sqlite, postgres string }

var logViews = []logView{
	{"event", sqliteEventView, postgresEventView},
	{"verification_receipt", sqliteVerificationView, postgresVerificationView},
}

// shareEventLog replaces each table of logViews by its view when event_log is in this
// database, once: afterwards the read model is a view and this does nothing. A database
// without event_log (the log elsewhere, or the scratch replay of zuno verify --all) keeps the
// tables, which the projectors fill. It runs under the migration lock, so two processes
// opening at once convert once. The rows a table held are dropped with it: the view shows
// the same rows from the log.
func shareEventLog(ctx context.Context, db *sqlx.DB, dialect sqldb.Dialect) error {
	// Looked at without the lock first: once converted, an open takes no lock (issue 30).
	if pending, err := viewsPending(ctx, db, dialect); err != nil || !pending {
		return err
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := sqldb.LockMigrations(ctx, tx, dialect); err != nil {
		return err
	}
	if here, err := isTable(ctx, tx, dialect, "event_log"); err != nil || !here {
		return err
	}
	for _, v := range logViews {
		table, err := isTable(ctx, tx, dialect, v.name)
		if err != nil || !table {
			if err != nil {
				return err
			}
			continue
		}
		view := v.sqlite
		if dialect == sqldb.Postgres {
			view = v.postgres
		}
		for _, stmt := range []string{`DROP TABLE ` + v.name, view} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("make the %s read model a view over event_log: %w", v.name, err)
			}
		}
		if dialect == sqldb.Postgres {
			if err := grantReader(ctx, tx, v.name); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// isTable reports whether name is a table (not a view) of this database.
func isTable(ctx context.Context, q sqlx.QueryerContext, dialect sqldb.Dialect, name string) (bool, error) {
	query := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if dialect == sqldb.Postgres {
		query = `SELECT COUNT(*) FROM pg_class WHERE oid = to_regclass($1) AND relkind = 'r'`
	}
	var n int
	if err := q.QueryRowxContext(ctx, query, name).Scan(&n); err != nil {
		return false, fmt.Errorf("look for %s beside the read models: %w", name, err)
	}
	return n > 0, nil
}

// viewsPending reports whether event_log is here and some read model of logViews is still a
// table.
func viewsPending(ctx context.Context, q sqlx.QueryerContext, dialect sqldb.Dialect) (bool, error) {
	if here, err := isTable(ctx, q, dialect, "event_log"); err != nil || !here {
		return false, err
	}
	for _, v := range logViews {
		if table, err := isTable(ctx, q, dialect, v.name); err != nil || table {
			return table, err
		}
	}
	return false, nil
}

// grantReader gives the reader role of zuno db (postgres/readmodel/0005) SELECT on a relation
// created outside the migrations, when the migrations created one.
func grantReader(ctx context.Context, tx *sqlx.Tx, relation string) error {
	var roles []string
	if err := tx.SelectContext(ctx, &roles, `SELECT role FROM zuno_reader_credential`); err != nil {
		return fmt.Errorf("find the reader role: %w", err)
	}
	for _, role := range roles {
		if _, err := tx.ExecContext(ctx, `GRANT SELECT ON `+pq.QuoteIdentifier(relation)+` TO `+pq.QuoteIdentifier(role)); err != nil {
			return fmt.Errorf("grant the reader SELECT on %s: %w", relation, err)
		}
	}
	return nil
}
