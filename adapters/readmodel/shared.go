package readmodel

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/migrations"
)

// The `event` read model is every event of the log with its aggregate id and a fixed-width
// UTC time (projections.EventLog). Where the log and the read models share one database it is
// a view over event_log rather than a second copy of every event (docs/storage.md, "The
// event read model"): same columns, same values, so forensic SQL runs unchanged, and nothing
// is written per event. The time column spells metadata.time as projections.TimeFormat does:
// whole seconds in UTC, then the fraction the log stored padded to nine digits.
const (
	sqliteEventView = `CREATE VIEW event AS
SELECT event_id AS id, position,
    CASE WHEN instr(stream, '-') > 0 THEN substr(stream, instr(stream, '-') + 1) ELSE stream END AS aggregate_id,
    stream, stream_revision AS revision, type, data, metadata,
    strftime('%Y-%m-%dT%H:%M:%S', CASE WHEN substr(t, 20, 1) = '.' THEN substr(t, 1, 19) || ltrim(substr(t, 21), '0123456789') ELSE t END)
        || '.' || substr(CASE WHEN substr(t, 20, 1) = '.'
            THEN substr(t, 21, length(substr(t, 21)) - length(ltrim(substr(t, 21), '0123456789'))) ELSE '' END || '000000000', 1, 9)
        || 'Z' AS time
FROM (SELECT *, json_extract(metadata, '$.time') AS t FROM event_log)`

	postgresEventView = `CREATE VIEW event AS
SELECT event_id::text AS id, position,
    CASE WHEN strpos(stream, '-') > 0 THEN substr(stream, strpos(stream, '-') + 1) ELSE stream END AS aggregate_id,
    stream, stream_revision AS revision, type, data::jsonb AS data, metadata::jsonb AS metadata,
    to_char(regexp_replace(metadata->>'time', '\.[0-9]+', '')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
        || '.' || rpad(coalesce(substring(metadata->>'time' from '\.([0-9]+)'), ''), 9, '0') || 'Z' AS time
FROM event_log`
)

// shareEventLog replaces the `event` table by the view when event_log is in this database,
// once: afterwards `event` is a view and this does nothing. A database without event_log (the
// log elsewhere, or the scratch replay of zuno verify --all) keeps the table, which the
// projector fills. It runs under the migration lock, so two processes opening at once
// convert once.
func shareEventLog(ctx context.Context, db *sqlx.DB, dialect sqldb.Dialect) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	check, view := `SELECT
		(SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'event_log'),
		(SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'event')`, sqliteEventView
	if dialect == sqldb.Postgres {
		if _, err := tx.ExecContext(ctx, migrations.XactLock(migrations.MigrationLock)); err != nil {
			return err
		}
		check = `SELECT
			(SELECT COUNT(*) FROM pg_class WHERE oid = to_regclass('event_log') AND relkind = 'r'),
			(SELECT COUNT(*) FROM pg_class WHERE oid = to_regclass('event') AND relkind = 'r')`
		view = postgresEventView
	}
	var logHere, eventTable int
	if err := tx.QueryRowxContext(ctx, check).Scan(&logHere, &eventTable); err != nil {
		return fmt.Errorf("look for event_log beside the read models: %w", err)
	}
	if logHere == 0 || eventTable == 0 {
		return nil
	}
	for _, stmt := range []string{`DROP TABLE event`, view} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("make the event read model a view over event_log: %w", err)
		}
	}
	if dialect == sqldb.Postgres {
		if err := grantReader(ctx, tx, "event"); err != nil {
			return err
		}
	}
	return tx.Commit()
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
