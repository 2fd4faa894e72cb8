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

// marked is v's statement as this build makes it in SQLite: the marker in a comment, so
// the schema text names the definition.
func (v logView) marked() string {
	return strings.Replace(v.sqlite, " AS\n", " AS /* "+v.marker(sqldb.SQLite)+" */\n", 1)
}

// statements make v's view over whatever v.name is now (kind: "table" or "view"), with its
// dependents dropped first and made again after.
func (v logView) statements(dialect sqldb.Dialect, kind string) []string {
	var out []string
	for _, d := range v.dependents {
		out = append(out, `DROP VIEW IF EXISTS `+d.name)
	}
	out = append(out, `DROP `+strings.ToUpper(kind)+` `+v.name)
	if dialect == sqldb.Postgres {
		out = append(out, v.create(dialect), `COMMENT ON VIEW `+v.name+` IS '`+v.marker(dialect)+`'`)
	} else {
		out = append(out, v.marked())
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
	if here, err := isTable(ctx, db, dialect, "event_log"); err != nil || !here {
		return err
	}
	defs, err := expectedDefinitions(ctx, db, dialect)
	if err != nil {
		return err
	}
	// Looked at without the lock first: once converted, an open takes no lock (issue 30).
	if pending, err := viewsPending(ctx, db, defs); err != nil || !pending {
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
		kind, err := pendingKind(ctx, tx, defs, v)
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
// read model is still a table, "view" where its view, or a view over it, is not defined as
// this build defines it (defs), "" where both are this build's already. The definition
// itself is compared, not the marker kept beside it: a user who may write the database can
// copy a marker onto a definition of their own.
func pendingKind(ctx context.Context, q sqlx.QueryerContext, defs definitions, v logView) (string, error) {
	if table, err := isTable(ctx, q, defs.dialect, v.name); err != nil || table {
		if table {
			return "table", nil
		}
		return "", err
	}
	view, current, err := defs.compare(ctx, q, v.name)
	if err != nil || !view {
		return "", err
	}
	for _, d := range v.dependents {
		_, dcur, err := defs.compare(ctx, q, d.name)
		if err != nil {
			return "", err
		}
		current = current && dcur
	}
	if current {
		return "", nil
	}
	return "view", nil
}

// definitions are the views of logViews and their dependents as this build defines them, in
// the form the database keeps a view's definition in: SQLite's schema text, or Postgres's
// pg_get_viewdef (which rewrites a statement, so the form is the server's own, read from a
// temporary view made with this build's statement and rolled back).
type definitions struct {
	dialect sqldb.Dialect
	byName  map[string]string
}

func expectedDefinitions(ctx context.Context, db *sqlx.DB, dialect sqldb.Dialect) (definitions, error) {
	defs := definitions{dialect: dialect, byName: map[string]string{}}
	for _, v := range logViews {
		defs.byName[v.name] = v.marked()
		if dialect == sqldb.Postgres {
			defs.byName[v.name] = v.postgres
		}
		for _, d := range v.dependents {
			defs.byName[d.name] = d.create
		}
	}
	if dialect != sqldb.Postgres {
		return defs, nil
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return defs, err
	}
	defer tx.Rollback()
	for _, v := range logViews {
		for _, d := range append([]dependentView{{v.name, v.postgres}}, v.dependents...) {
			def, err := probeDefinition(ctx, tx, d)
			if err != nil {
				return defs, err
			}
			defs.byName[d.name] = def
		}
	}
	return defs, nil
}

// probeDefinition is pg_get_viewdef of d's statement, made as a temporary view (or, where the
// role may not make temporary tables, as a view beside the read models; the transaction that
// makes either is rolled back). A dependent reads the view as it is here; where that view
// cannot give it its columns (a definition of another's), the definition is "", which no view
// has, so both are made again.
func probeDefinition(ctx context.Context, tx *sqlx.Tx, d dependentView) (string, error) {
	var made string
	for _, probe := range []string{"pg_temp.zuno_probe_" + d.name, "zuno_probe_" + d.name} {
		kind := "VIEW "
		if strings.HasPrefix(probe, "pg_temp.") {
			kind = "TEMP VIEW "
		}
		stmt := strings.Replace(d.create, "CREATE VIEW "+d.name+" AS", "CREATE "+kind+strings.TrimPrefix(probe, "pg_temp.")+" AS", 1)
		if _, err := tx.ExecContext(ctx, `SAVEPOINT zuno_probe`); err != nil {
			return "", err
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT zuno_probe`); rerr != nil {
				return "", rerr
			}
			continue
		}
		made = probe
		break
	}
	if made == "" {
		return "", nil
	}
	var def string
	if err := tx.QueryRowxContext(ctx, `SELECT pg_get_viewdef(to_regclass($1))`, made).Scan(&def); err != nil {
		return "", fmt.Errorf("read the %s view's definition: %w", d.name, err)
	}
	return def, nil
}

// compare reports whether name is a view here, and whether its definition is this build's.
func (defs definitions) compare(ctx context.Context, q sqlx.QueryerContext, name string) (view, current bool, err error) {
	query := `SELECT COUNT(*), COALESCE(MAX(sql = ?), 0) FROM sqlite_master WHERE type = 'view' AND name = ?`
	if defs.dialect == sqldb.Postgres {
		query = `SELECT COUNT(*), COUNT(*) FILTER (WHERE pg_get_viewdef(oid) = $1) FROM pg_class
			WHERE oid = to_regclass($2) AND relkind = 'v'`
	}
	var views, same int
	if err := q.QueryRowxContext(ctx, query, defs.byName[name], name).Scan(&views, &same); err != nil {
		return false, false, fmt.Errorf("look at the %s view: %w", name, err)
	}
	return views > 0, same > 0, nil
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
func viewsPending(ctx context.Context, q sqlx.QueryerContext, defs definitions) (bool, error) {
	for _, v := range logViews {
		if kind, err := pendingKind(ctx, q, defs, v); err != nil || kind != "" {
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
