package readmodel_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/migrations"
)

// postgresHostile covers issue 14's classes on Postgres; out is a path a statement tries to
// create, db the database's name.
func postgresHostile(out string) []hostile {
	r := func(s string) hostile { return hostile{sql: s, refuse: true} }
	return []hostile{
		r("COMMIT; DELETE FROM event_log"), r("SELECT 1; DELETE FROM event"), r("COMMIT"), r("BEGIN"), r("ROLLBACK"),
		r("END; DROP FUNCTION json_extract(json, text)"),
		r("DELETE FROM event"), r("DELETE FROM event_log"), r("UPDATE session SET title = 'x'"),
		r("INSERT INTO projection_checkpoint VALUES ('x', 1, 'now')"),
		r("WITH d AS (DELETE FROM event RETURNING 1) SELECT count(*) FROM d"),
		r("WITH d AS (DELETE FROM event_log RETURNING 1) SELECT count(*) FROM d"),
		r("WITH u AS (UPDATE session SET title = 'x' RETURNING 1) SELECT count(*) FROM u"),
		r("SELECT * INTO stolen FROM event"),
		r("CREATE TABLE x (a int)"), r("CREATE TEMP TABLE x AS SELECT 1"),
		r("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'"),
		r("DROP FUNCTION json_extract(json, text)"), r("DROP TABLE event"), r("TRUNCATE event"),
		r("DROP VIEW event"), r("CREATE OR REPLACE VIEW event AS SELECT 1 AS id"), r("ALTER VIEW event RENAME TO e2"),
		r("INSERT INTO event (id) VALUES ('x')"), r("UPDATE event SET type = 'x'"),
		r("ALTER TABLE event ADD COLUMN x int"), r("GRANT SELECT ON event_log TO PUBLIC"),
		r("ALTER ROLE CURRENT_USER SET statement_timeout = 0"), r("CREATE EXTENSION dblink"),
		r("DO $$ BEGIN DELETE FROM event; END $$"), r("PREPARE p AS DELETE FROM event"), r("VACUUM event"),
		r("EXPLAIN ANALYZE DELETE FROM event"),
		r("COPY (SELECT 1) TO PROGRAM 'touch " + out + "'"), r("COPY (SELECT 1) TO '" + out + "'"),
		r("COPY event FROM '/etc/passwd'"), r("COPY event FROM PROGRAM 'id'"),
		r("SELECT pg_read_file('/etc/passwd')"), r("SELECT pg_read_binary_file('/etc/passwd')"),
		r("SELECT pg_ls_dir('.')"), r("SELECT pg_stat_file('/etc/passwd')"),
		r("SELECT lo_import('/etc/passwd')"), r("SELECT lo_export(1, '" + out + "')"),
		// Postgres lets these run in a READ ONLY transaction, and some outlive its rollback (a
		// WAL message, a notification, a signal): the reader may call no function with a side
		// effect (migrations/postgres/readmodel/0015).
		r("SELECT pg_logical_emit_message(false, 'zuno', repeat('x', 1000))"),
		r("SELECT pg_logical_emit_message(true, 'zuno', 'x')"),
		r("SELECT pg_advisory_lock(7365120001)"), r("SELECT pg_try_advisory_xact_lock(7365120001)"),
		r("SELECT setval('x', 1)"), r("SELECT pg_sleep_for('1 hour')"),
		// The migrators' lock (adapters/sqldb.LockMigrations): a reader that held it would stall
		// every process that starts.
		r("LOCK TABLE schema_migration IN SHARE ROW EXCLUSIVE MODE"), r("LOCK TABLE schema_migration IN ACCESS SHARE MODE"),
		r("SELECT * FROM schema_migration"),
		r("SELECT lo_from_bytea(0, 'x')"), r("SELECT lo_create(0)"),
		r("SELECT set_config('role', 'postgres', false)"), r("SELECT set_config('session_authorization', 'postgres', false)"),
		r("SET ROLE postgres"), r("RESET ROLE"), r("SET SESSION AUTHORIZATION postgres"),
		r("SELECT set_config('transaction_read_only', 'off', true), (SELECT count(*) FROM event)"),
		r("SELECT query_to_xml('DELETE FROM event RETURNING 1', true, true, '')"),
		r("SELECT query_to_xml('DELETE FROM event_log RETURNING 1', true, true, '')"),
		r("LOCK TABLE event_log_append_lock IN EXCLUSIVE MODE"), r("SELECT * FROM event_log_append_lock"),
		// The projection leadership (migrations/postgres/readmodel/0012): a reader that held it
		// would make every process a follower of no one.
		r("LOCK TABLE projection_leader IN EXCLUSIVE MODE NOWAIT"), r("LOCK TABLE projection_leader IN ACCESS EXCLUSIVE MODE"),
		r("SELECT * FROM projection_leader"), r("LOCK TABLE read_model_write_lock IN EXCLUSIVE MODE"),
		r("SELECT * FROM event FOR UPDATE"), r("SELECT * FROM zuno_reader_credential"), r("SELECT * FROM event_log"),
		{sql: "SELECT txid_current()"}, r("SELECT pg_reload_conf()"), r("SELECT pg_switch_wal()"),
		r("SELECT 1 /* ; */ ; DROP TABLE event"), r("SELECT $$;$$; DROP TABLE event"), r(`SELECT E'\';'; DROP TABLE event`),
		r("SELECT pg_sleep(5)"), r("SELECT set_config('statement_timeout', '0', false), pg_sleep(5)"),
		{sql: "SELECT set_config('statement_timeout', '0', false), (SELECT count(*) FROM generate_series(1, 1e10))", timeout: true},
		{sql: "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c", timeout: true},
		r(fmt.Sprintf("SELECT pg_advisory_xact_lock(%d), pg_advisory_lock(%d)", migrations.AppendLock, migrations.ReadModelLock)),
		r("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"),
		r("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"),
		r("SELECT pg_notify('zuno_events', '0')"),
		{sql: "SELECT json_extract(data, '$.title') FROM event"},
	}
}

// seededPostgres is a fresh database whose migrations ran as the role of ownerURL, with
// events appended and read-model rows; it returns the read models opened as that role.
func seededPostgres(t *testing.T, ownerURL string, opts ...readmodel.Option) *readmodel.DB {
	ctx := context.Background()
	store, err := sqlstore.OpenPostgres(ctx, ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for i := range 3 {
		ev := events.Event{ID: events.DeriveID("seed", i), Type: "bench.appended.1", Data: []byte(`{"title":"t"}`),
			Metadata: events.Metadata{CommandID: "seed", Actor: "user"}}
		if _, err := store.Append(ctx, "seed", events.Any, ev); err != nil {
			t.Fatal(err)
		}
	}
	rm, err := readmodel.OpenPostgres(ctx, ownerURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Close() })
	// The seeded events are the event read model's rows: a view over event_log here.
	if _, err := rm.Writer.Exec(`INSERT INTO session (id, title, agent, time_created, time_updated) VALUES ('s1', 'title', 'build', 'now', 'now')`); err != nil {
		t.Fatal(err)
	}
	return rm
}

// ownerDatabase creates a login role that is no superuser but may create roles, and a fresh
// database it owns; it returns the database's URL as that role.
func ownerDatabase(t *testing.T, attrs string) string {
	admin := pgtest.NewDatabase(t)
	db, err := sql.Open("postgres", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b [4]byte
	rand.Read(b[:])
	role := "zuno_owner_" + hex.EncodeToString(b[:])
	u, _ := url.Parse(admin)
	name := strings.TrimPrefix(u.Path, "/")
	for _, q := range []string{"CREATE ROLE " + role + " LOGIN " + attrs, "ALTER DATABASE " + name + " OWNER TO " + role,
		"ALTER SCHEMA public OWNER TO " + role} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		db, _ := sql.Open("postgres", os.Getenv(pgtest.EnvURL))
		defer db.Close()
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Exec("DROP OWNED BY " + role)
		db.Exec("DROP ROLE IF EXISTS " + role)
	})
	u.User = url.User(role)
	return u.String()
}

func postgresSnapshot(t testing.TB, adminURL string, dirs []string) snapshot {
	db, err := sql.Open("postgres", adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := snapshot{}
	addQuery(t, s, db, "tables", `SELECT n.nspname, c.relname, c.relkind, c.relowner::regrole, c.relacl FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1, 2`)
	addQuery(t, s, db, "functions", `SELECT p.oid::regprocedure, md5(p.prosrc), p.proacl FROM pg_proc p
		WHERE p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace) ORDER BY 1`)
	// Roles are the cluster's, not the database's: other packages' tests create a reader role
	// for each database of their own meanwhile. Those (unprivileged, named for another
	// database) are left out; any privileged role, and every other zuno role, stays in.
	addQuery(t, s, db, "roles", `SELECT rolname, rolsuper, rolcreaterole, rolcanlogin, rolconfig FROM pg_roles
		WHERE rolname LIKE 'zuno%' AND (rolname NOT LIKE 'zuno\_reader\_%' OR rolsuper OR rolcreaterole
			OR rolname = 'zuno_reader_' || left(md5(current_database()), 16)) ORDER BY 1`)
	addQuery(t, s, db, "largeobjects", `SELECT count(*) FROM pg_largeobject_metadata`)
	addQuery(t, s, db, "extensions", `SELECT extname FROM pg_extension ORDER BY 1`)
	var tables []string
	rows, err := db.Query(`SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	for _, n := range tables {
		addQuery(t, s, db, "table "+n, `SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM `+n+` t`)
	}
	addFiles(t, s, dirs...)
	return s
}

func runPostgresHostile(t *testing.T, rm *readmodel.DB, adminURL string) {
	work, out := t.TempDir(), filepath.Join(os.TempDir(), "zuno-hostile-"+t.Name()[len(t.Name())-8:])
	t.Chdir(work)
	cases := postgresHostile(out)
	if len(cases) < 40 {
		t.Fatalf("%d hostile statements; the issue asks for at least 40", len(cases))
	}
	refused := 0
	for _, h := range cases {
		checkHostile(t, rm, h, func() snapshot { return postgresSnapshot(t, adminURL, []string{work}) })
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q created %s", h.sql, out)
		}
		if h.refuse || h.timeout {
			refused++
		}
	}
	t.Logf("%d hostile statements on Postgres: %d refused or cancelled, %d harmless; nothing changed", len(cases), refused, len(cases)-refused)
	rows, err := userRows(rm, context.Background(), "SELECT title FROM session", readmodel.UserOptions{})
	if err != nil || len(rows.Rows) != 1 || rows.Rows[0][0] != "title" {
		t.Fatalf("ordinary query: %v %v", rows, err)
	}
}

// With the tests' own superuser URL, zuno db runs as the reader role the migrations created.
func TestUserQueryHostilePostgresSuperuserURL(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	runPostgresHostile(t, seededPostgres(t, dbURL), dbURL)
}

// As an ordinary owner (no superuser, but CREATEROLE), likewise, once a superuser has taken
// the functions with side effects from PUBLIC: until then the reader is refused, since the
// owner could not.
func TestUserQueryHostilePostgresOwner(t *testing.T) {
	ownerURL := ownerDatabase(t, "CREATEROLE")
	admin, _ := url.Parse(ownerURL)
	admin.User = url.User("postgres")
	rm := seededPostgres(t, ownerURL)
	_, err := userRows(rm, context.Background(), "SELECT 1", readmodel.UserOptions{})
	var re *readmodel.ReaderError
	if !errors.As(err, &re) || re.Code() != readmodel.CodeReaderPrivileged || !strings.Contains(err.Error(), "zuno_reader_revoke_side_effects") {
		t.Fatalf("before a superuser revoked the side effects: want reader_privileged naming the fix, got %v", err)
	}
	db, err := sql.Open("postgres", admin.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("SELECT zuno_reader_revoke_side_effects()"); err != nil {
		t.Fatal(err)
	}
	// A process checks its reader once: the next one finds it safe.
	again, err := readmodel.OpenPostgres(context.Background(), ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	runPostgresHostile(t, again, admin.String())
}

// harmlessVolatile are the VOLATILE functions a reader may call: they read a clock or a
// random source, or set a setting for the caller's own transaction. The test's own list, so a
// change to the migration's does not pass unseen.
var harmlessVolatile = map[string]bool{"clock_timestamp()": true, "timeofday()": true, "random()": true,
	"gen_random_uuid()": true, "set_config(text,text,boolean)": true}

// Every function the reader may execute, read from the catalog, has no side effect: it is
// IMMUTABLE or STABLE, cannot be called from SQL (a trigger, a handler, one taking internal),
// or is one of harmlessVolatile. And the writer keeps what its appends call.
func TestReaderMayCallNoFunctionWithSideEffects(t *testing.T) {
	for _, c := range []struct{ name, url string }{{"superuser migrator", ""}, {"owner, then a superuser's revoke", "owner"}} {
		t.Run(c.name, func(t *testing.T) {
			dbURL := pgtest.NewDatabase(t)
			if c.url == "owner" {
				dbURL = ownerDatabase(t, "CREATEROLE")
			}
			seededPostgres(t, dbURL)
			admin, _ := url.Parse(dbURL)
			admin.User = url.User("postgres")
			db, err := sql.Open("postgres", admin.String())
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if c.url == "owner" {
				if _, err := db.Exec("SELECT zuno_reader_revoke_side_effects()"); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := db.Query(`SELECT p.oid::regprocedure::text FROM pg_proc p
				WHERE has_function_privilege('zuno_reader_' || left(md5(current_database()), 16), p.oid, 'EXECUTE')
				  AND p.provolatile = 'v'
				  AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype, 'language_handler'::regtype,
				      'index_am_handler'::regtype, 'table_am_handler'::regtype, 'tsm_handler'::regtype,
				      'fdw_handler'::regtype, 'internal'::regtype)`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			allowed := 0
			for rows.Next() {
				var f string
				rows.Scan(&f)
				if !harmlessVolatile[f] {
					t.Errorf("the reader may call %s, a VOLATILE function", f)
				}
				allowed++
			}
			if allowed != len(harmlessVolatile) {
				t.Errorf("the reader may call %d of the %d harmless volatile functions", allowed, len(harmlessVolatile))
			}
			// The writer's appends call pg_notify and pg_current_xact_id: an append still works.
			store, err := sqlstore.OpenPostgres(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			ev := events.Event{ID: events.DeriveID("after-revoke", 0), Type: "bench.appended.1", Data: []byte(`{}`),
				Metadata: events.Metadata{CommandID: "after", Actor: "user"}}
			if _, err := store.Append(context.Background(), "after", events.Any, ev); err != nil {
				t.Errorf("an append after the revoke: %v", err)
			}
		})
	}
}

// A reader URL that is a superuser's or an owner's is refused before any SQL runs, as is an
// owner that could not create a reader.
func TestUserQueryRefusesPrivilegedReader(t *testing.T) {
	ownerURL := ownerDatabase(t, "")
	super, _ := url.Parse(ownerURL)
	super.User = url.User("postgres")
	for _, c := range []struct {
		name string
		opts []readmodel.Option
		code string
	}{
		{"owner without CREATEROLE", nil, readmodel.CodeReaderUnavailable},
		{"owner as reader", []readmodel.Option{readmodel.WithReaderURL(ownerURL)}, readmodel.CodeReaderPrivileged},
		{"superuser as reader", []readmodel.Option{readmodel.WithReaderURL(super.String())}, readmodel.CodeReaderPrivileged},
	} {
		rm, err := readmodel.OpenPostgres(context.Background(), ownerURL, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = userRows(rm, context.Background(), "SELECT 1", readmodel.UserOptions{})
		var re *readmodel.ReaderError
		if !errors.As(err, &re) || re.Code() != c.code {
			t.Errorf("%s: want %s, got %v", c.name, c.code, err)
		}
		rm.Close()
	}
}
