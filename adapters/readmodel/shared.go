package readmodel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

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
	// array of the limitations' construct names in order ('[]' for none), and the session the
	// stream's (session-<id>) where the data leaves it out as implied (docs/events.md).
	sqliteVerificationView = `CREATE VIEW verification_receipt AS
SELECT json_extract(data, '$.receiptId') AS id,
    coalesce(json_extract(data, '$.sessionId'), CASE WHEN substr(stream, 1, 8) = 'session-' THEN substr(stream, 9) ELSE '' END) AS session_id,
    nullif(json_extract(data, '$.turnId'), '') AS turn_id, json_extract(data, '$.callId') AS call_id, event_id,
    json_extract(data, '$.command') AS command, json_extract(data, '$.interpreter') AS interpreter,
    json_extract(data, '$.policy') AS policy, json_extract(data, '$.verdict') AS verdict,
    json_extract(data, '$.exitCode') AS exit_code, json_extract(data, '$.coverage') AS coverage,
    json_extract(data, '$.authority') AS authority,
    (SELECT json_group_array(json_extract(l.value, '$.construct')) FROM json_each(data, '$.limitations') AS l) AS constructs,
    position, ` + sqliteTime + ` AS time_created
FROM (SELECT *, json_extract(metadata, '$.time') AS t FROM event_log WHERE type = '` + events.TypeVerificationReceipt + `')`

	postgresVerificationView = `CREATE VIEW verification_receipt AS
SELECT d->>'receiptId' AS id,
    coalesce(d->>'sessionId', CASE WHEN substr(stream, 1, 8) = 'session-' THEN substr(stream, 9) ELSE '' END) AS session_id,
    nullif(d->>'turnId', '') AS turn_id,
    d->>'callId' AS call_id, event_id::text AS event_id, d->>'command' AS command,
    d->>'interpreter' AS interpreter, d->>'policy' AS policy, d->>'verdict' AS verdict,
    (d->>'exitCode')::bigint AS exit_code, d->>'coverage' AS coverage, d->>'authority' AS authority,
    coalesce((SELECT '[' || string_agg(to_json(l.value->>'construct')::text, ',' ORDER BY l.ordinality) || ']'
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(d->'limitations') = 'array' THEN d->'limitations' ELSE '[]' END)
            WITH ORDINALITY AS l(value, ordinality)), '[]') AS constructs,
    position, ` + postgresTime + ` AS time_created
FROM (SELECT *, data::jsonb AS d FROM event_log WHERE type = '` + events.TypeVerificationReceipt + `') AS r`
)

// prompt_receipt_row is one row per session.prompt.assembled.1, with the values
// projections.PromptReceipts writes: prompt_receipt_key holds what the event does not say
// (the session, the position, the receipt's id and its header's) and the rest is read from the
// event at that position, a lookup by the log's key (docs/storage.md, "Bytes per step").
const (
	sqlitePromptReceiptRowView = `CREATE VIEW prompt_receipt_row AS
SELECT k.id, k.session_id, e.event_id, k.position, json_extract(e.data, '$.model') AS model,
    json_extract(e.data, '$.assemblyDigest') AS assembly_digest, json_extract(e.data, '$.actualDigest') AS actual_digest,
    coalesce(json_extract(e.data, '$.estimatedInputTokens'), 0) AS estimated_input_tokens,
    coalesce(json_extract(e.data, '$.contextWindow'), 0) AS context_window, k.header_id,
    ` + sqliteTime + ` AS time_created
FROM prompt_receipt_key AS k JOIN (SELECT position, event_id, data, json_extract(metadata, '$.time') AS t FROM event_log) AS e
    ON e.position = k.position`

	postgresPromptReceiptRowView = `CREATE VIEW prompt_receipt_row AS
SELECT k.id, k.session_id, event_id::text AS event_id, k.position, d->>'model' AS model,
    d->>'assemblyDigest' AS assembly_digest, d->>'actualDigest' AS actual_digest,
    coalesce((d->>'estimatedInputTokens')::bigint, 0) AS estimated_input_tokens,
    coalesce((d->>'contextWindow')::bigint, 0) AS context_window, k.header_id,
    ` + postgresTime + ` AS time_created
FROM prompt_receipt_key AS k JOIN event_log AS e ON e.position = k.position CROSS JOIN LATERAL (SELECT e.data::jsonb AS d) AS j`

	// promptReceiptView is migrations' prompt_receipt (sqlite 0009, postgres 0011), made again
	// over the view: it depends on prompt_receipt_row, which Postgres will not drop under it.
	promptReceiptView = `CREATE VIEW prompt_receipt AS
SELECT r.id, r.session_id, r.event_id, r.position, r.model, r.assembly_digest, r.actual_digest,
    r.estimated_input_tokens, r.context_window, h.section_count, h.sections, h.tool_names, r.time_created
FROM prompt_receipt_row r JOIN prompt_receipt_header h ON h.id = r.header_id`
)

// logView is a read model that is a view over event_log where the log shares its database.
// dependents are views over it, dropped before it and made again after it.
type logView struct {
	name, sqlite, postgres string
	dependents             []dependentView
}

type dependentView struct{ name, create string }

var logViews = []logView{
	{name: "event", sqlite: sqliteEventView, postgres: postgresEventView},
	{name: "verification_receipt", sqlite: sqliteVerificationView, postgres: postgresVerificationView},
	{name: "prompt_receipt_row", sqlite: sqlitePromptReceiptRowView, postgres: postgresPromptReceiptRowView,
		dependents: []dependentView{{"prompt_receipt", promptReceiptView}}},
}

// create is the statement making v's view in dialect.
func (v logView) create(dialect sqldb.Dialect) string {
	if dialect == sqldb.Postgres {
		return v.postgres
	}
	return v.sqlite
}

// marker names the definition of v's view in dialect: a digest of its statement, kept with the
// view (a comment in SQLite's schema text, COMMENT ON VIEW in Postgres), so a database whose
// view an older build made is given this build's (issue 32: the verification receipt's
// session is implied since).
func (v logView) marker(dialect sqldb.Dialect) string {
	sum := sha256.Sum256([]byte(v.create(dialect)))
	return "zuno:" + hex.EncodeToString(sum[:8])
}

// statements make v's view over whatever v.name is now (kind: "table" or "view"), with its
// dependents dropped first and made again after.
func (v logView) statements(dialect sqldb.Dialect, kind string) []string {
	var out []string
	for _, d := range v.dependents {
		out = append(out, `DROP VIEW IF EXISTS `+d.name)
	}
	out = append(out, `DROP `+strings.ToUpper(kind)+` `+v.name)
	marker := v.marker(dialect)
	if dialect == sqldb.Postgres {
		out = append(out, v.create(dialect), `COMMENT ON VIEW `+v.name+` IS '`+marker+`'`)
	} else {
		out = append(out, strings.Replace(v.create(dialect), " AS\n", " AS /* "+marker+" */\n", 1))
	}
	for _, d := range v.dependents {
		out = append(out, d.create)
	}
	return out
}

// shareEventLog replaces each table of logViews by its view when event_log is in this
// database, once, and a view another build defined by this build's: afterwards this does
// nothing. A database without event_log (the log elsewhere, or the scratch replay of zuno
// verify --all) keeps the tables, which the projectors fill. It runs under the migration
// lock, so two processes opening at once convert once. The rows a table held are dropped with
// it: the view shows the same rows from the log (prompt_receipt_row's, from the keys its
// migration copied into prompt_receipt_key).
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
		kind, err := pendingKind(ctx, tx, dialect, v)
		if err != nil || kind == "" {
			if err != nil {
				return err
			}
			continue
		}
		for _, stmt := range v.statements(dialect, kind) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("make the %s read model a view over event_log: %w", v.name, err)
			}
		}
		if dialect == sqldb.Postgres {
			for _, name := range append([]string{v.name}, dependentNames(v)...) {
				if err := grantReader(ctx, tx, name); err != nil {
					return err
				}
			}
		}
	}
	return tx.Commit()
}

func dependentNames(v logView) []string {
	var out []string
	for _, d := range v.dependents {
		out = append(out, d.name)
	}
	return out
}

// pendingKind says what must be replaced to give v this build's view: "table" where the
// read model is still a table, "view" where its view was made by another build's definition,
// "" where it is this build's view already.
func pendingKind(ctx context.Context, q sqlx.QueryerContext, dialect sqldb.Dialect, v logView) (string, error) {
	if table, err := isTable(ctx, q, dialect, v.name); err != nil || table {
		if table {
			return "table", nil
		}
		return "", err
	}
	query := `SELECT COUNT(*), COALESCE(MAX(instr(sql, ?)), 0) FROM sqlite_master WHERE type = 'view' AND name = ?`
	if dialect == sqldb.Postgres {
		query = `SELECT COUNT(*), COUNT(*) FILTER (WHERE obj_description(oid, 'pg_class') = $1) FROM pg_class
			WHERE oid = to_regclass($2) AND relkind = 'v'`
	}
	var views, current int
	if err := q.QueryRowxContext(ctx, query, v.marker(dialect), v.name).Scan(&views, &current); err != nil {
		return "", fmt.Errorf("look at the %s view: %w", v.name, err)
	}
	if views == 0 || current > 0 {
		return "", nil
	}
	return "view", nil
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
// table, or a view of another build's definition.
func viewsPending(ctx context.Context, q sqlx.QueryerContext, dialect sqldb.Dialect) (bool, error) {
	if here, err := isTable(ctx, q, dialect, "event_log"); err != nil || !here {
		return false, err
	}
	for _, v := range logViews {
		if kind, err := pendingKind(ctx, q, dialect, v); err != nil || kind != "" {
			return kind != "", err
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
