package readmodel_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/events"
)

// hostile is a statement zuno db must refuse or run harmlessly. refuse: it must fail;
// timeout: it must fail as a query_timeout.
type hostile struct {
	sql     string
	refuse  bool
	timeout bool
}

// sqliteHostile covers issue 14's classes on SQLite; DB is the database file's path and OUT a
// path in the working directory.
func sqliteHostile(db, out string) []hostile {
	return []hostile{
		{sql: "PRAGMA query_only=0; ATTACH '" + db + "' AS w; DELETE FROM w.event_log; COMMIT", refuse: true},
		{sql: "PRAGMA query_only=0", refuse: true},
		{sql: "PRAGMA query_only", refuse: true},
		{sql: "PRAGMA journal_mode=DELETE", refuse: true},
		{sql: "PRAGMA writable_schema=1", refuse: true},
		{sql: "PRAGMA wal_checkpoint(TRUNCATE)", refuse: true},
		{sql: "PRAGMA user_version=7", refuse: true},
		{sql: "ATTACH '" + db + "' AS w", refuse: true},
		{sql: "ATTACH '" + out + "' AS n", refuse: true},
		{sql: "ATTACH 'file:" + out + "?mode=rwc' AS n", refuse: true},
		{sql: "DETACH main", refuse: true},
		{sql: "VACUUM", refuse: true},
		{sql: "VACUUM INTO '" + out + "'", refuse: true},
		{sql: "BEGIN", refuse: true},
		{sql: "BEGIN IMMEDIATE", refuse: true},
		{sql: "COMMIT", refuse: true},
		{sql: "ROLLBACK", refuse: true},
		{sql: "END", refuse: true},
		{sql: "SAVEPOINT a", refuse: true},
		{sql: "RELEASE a", refuse: true},
		{sql: "DELETE FROM event", refuse: true},
		{sql: "DELETE FROM event_log", refuse: true},
		{sql: "UPDATE session SET title = 'x'", refuse: true},
		{sql: "INSERT INTO projection_checkpoint VALUES ('x', 1, 'now')", refuse: true},
		{sql: "REPLACE INTO projection_checkpoint VALUES ('x', 1, 'now')", refuse: true},
		{sql: "WITH x AS (SELECT 1) DELETE FROM event_log", refuse: true},
		{sql: "WITH x AS (SELECT 1) UPDATE session SET title = 'x'", refuse: true},
		{sql: "WITH x AS (SELECT 1) INSERT INTO projection_checkpoint SELECT 'x', 1, 'now'", refuse: true},
		{sql: "CREATE TABLE stolen AS SELECT * FROM event", refuse: true},
		{sql: "CREATE TEMP TABLE t (a)", refuse: true},
		{sql: "CREATE VIEW v AS SELECT 1", refuse: true},
		{sql: "CREATE TRIGGER tr AFTER INSERT ON event BEGIN DELETE FROM event_log; END", refuse: true},
		{sql: "CREATE INDEX i ON event (type)", refuse: true},
		{sql: "CREATE VIRTUAL TABLE f USING fts5(a)", refuse: true},
		{sql: "DROP TABLE event", refuse: true},
		{sql: "DROP VIEW event", refuse: true},
		{sql: "INSERT INTO event (id) VALUES ('x')", refuse: true},
		{sql: "UPDATE event SET type = 'x'", refuse: true},
		{sql: "CREATE TRIGGER tr INSTEAD OF DELETE ON event BEGIN DELETE FROM event_log; END", refuse: true},
		{sql: "DROP INDEX event_id", refuse: true},
		{sql: "ALTER TABLE event ADD COLUMN x", refuse: true},
		{sql: "ANALYZE", refuse: true},
		{sql: "REINDEX", refuse: true},
		{sql: "EXPLAIN DELETE FROM event", refuse: true},
		{sql: "SELECT load_extension('/tmp/nothing.so')", refuse: true},
		{sql: "SELECT fts3_tokenizer('simple')", refuse: true},
		{sql: "SELECT writefile('" + out + "', 'x')", refuse: true},
		{sql: "SELECT 1; DELETE FROM event_log", refuse: true},
		{sql: "SELECT 1 /* ; */; DELETE FROM event_log", refuse: true},
		{sql: "SELECT ';'; DROP TABLE event", refuse: true},
		{sql: "SELECT 1 -- ;\n; DROP TABLE event", refuse: true},
		{sql: "SELECT \"a;\" FROM (SELECT 1 AS \"a;\"); VACUUM", refuse: true},
		{sql: "SELECT randomblob(1000000000)", refuse: true},
		{sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", timeout: true},
		{sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c", timeout: true},
		{sql: "SELECT * FROM pragma_table_info('event')"},
		{sql: "SELECT * FROM sqlite_master"},
		{sql: "SELECT count(*) FROM event_log"},
		{sql: "SELECT json_extract(data, '$.title') FROM event"},
	}
}

// seededSQLite is a real SQLite file with events appended through the store and projected
// read-model rows, and a working directory; it returns the file, the directories to watch,
// and an open read-model database.
func seededSQLite(t testing.TB) (string, []string, *readmodel.DB) {
	dir, work := t.TempDir(), t.TempDir()
	t.Chdir(work)
	path := filepath.Join(dir, "zuno.db")
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, path)
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
	rm, err := readmodel.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Close() })
	// The seeded events are the event read model's rows: a view over event_log here.
	if _, err := rm.Writer.Exec(`INSERT INTO session (id, title, agent, time_created, time_updated) VALUES ('s1', 'title', 'build', 'now', 'now')`); err != nil {
		t.Fatal(err)
	}
	return path, []string{dir, work}, rm
}

func sqliteSnapshot(t testing.TB, path string, dirs []string) snapshot {
	db, err := sql.Open("sqlite", sqldb.SQLiteDSN(path, sqldb.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := snapshot{}
	addQuery(t, s, db, "schema", "SELECT type, name, sql FROM sqlite_master ORDER BY name")
	addQuery(t, s, db, "user_version", "PRAGMA user_version")
	var tables []string
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
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
		// A table scan reads rows in key order (rowid, or the primary key of a WITHOUT ROWID table).
		addQuery(t, s, db, "table "+n, `SELECT * FROM "`+n+`"`)
	}
	addFiles(t, s, dirs...)
	return s
}

// checkHostile runs h and fails the test unless it was refused as it must be and nothing in
// the snapshot changed.
func checkHostile(t *testing.T, rm *readmodel.DB, h hostile, snap func() snapshot) {
	before := snap()
	_, err := userRows(rm, context.Background(), h.sql, readmodel.UserOptions{Timeout: 300 * time.Millisecond})
	var timeout *readmodel.TimeoutError
	switch {
	case h.timeout && !errors.As(err, &timeout):
		t.Errorf("%q: want query_timeout, got %v", h.sql, err)
	case h.refuse && err == nil:
		t.Errorf("%q: ran; want it refused", h.sql)
	}
	if d := diff(before, snap()); len(d) > 0 {
		t.Errorf("%q (err %v) changed the database or files:\n%v", h.sql, err, d)
	}
}

func TestUserQueryHostileSQLite(t *testing.T) {
	path, dirs, rm := seededSQLite(t)
	cases := sqliteHostile(path, filepath.Join(dirs[1], "out.db"))
	if len(cases) < 40 {
		t.Fatalf("%d hostile statements; the issue asks for at least 40", len(cases))
	}
	refused := 0
	for _, h := range cases {
		checkHostile(t, rm, h, func() snapshot { return sqliteSnapshot(t, path, dirs) })
		if h.refuse || h.timeout {
			refused++
		}
	}
	t.Logf("%d hostile statements on SQLite: %d refused or cancelled, %d harmless reads; nothing changed", len(cases), refused, len(cases)-refused)
	// And an ordinary query still works.
	rows, err := userRows(rm, context.Background(), "SELECT title FROM session;", readmodel.UserOptions{})
	if err != nil || len(rows.Rows) != 1 || rows.Rows[0][0] != "title" {
		t.Fatalf("ordinary query: %v %v", rows, err)
	}
}

// FuzzUserQuerySQLite feeds arbitrary SQL to zuno db's query path on a real SQLite file: whatever
// it returns, nothing changes.
func FuzzUserQuerySQLite(f *testing.F) {
	for _, h := range sqliteHostile("zuno.db", "out.db") {
		f.Add(h.sql)
	}
	path, dirs, rm := seededSQLite(f)
	before := sqliteSnapshot(f, path, dirs)
	f.Fuzz(func(t *testing.T, q string) {
		userRows(rm, context.Background(), q, readmodel.UserOptions{Timeout: 100 * time.Millisecond, Limit: 10})
		if d := diff(before, sqliteSnapshot(t, path, dirs)); len(d) > 0 {
			t.Fatalf("%q changed the database or files:\n%v", q, d)
		}
	})
}
