package migrations_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// Review attacks on sqlite/readmodel/0017 (session, work_plan and work_item rebuilt WITHOUT
// ROWID), on a database as the previous build left it (every other migration applied, rows
// and checkpoints in it):
//
//	the migrating process SIGKILLed in the middle   → TestKeyedTablesMigrationKilled: the
//	                                                   database is as before (rows, rowid
//	                                                   tables, 0017 not recorded), and the next
//	                                                   start applies it
//	a read-only connection (`zuno db`) reading across it, a statement prepared before it
//	                                                 → TestKeyedTablesMigrationUnderAReader
const keyedMigration = "0017_keyed_tables_without_rowid.sql"

// previousBuild makes a read model as the build before 0017 left it, with n sessions, plans
// and items, and returns it open as a writer.
func previousBuild(t *testing.T, path string, n int) *sqlx.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, path, sqldb.Writer)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `CREATE TABLE schema_migration (set_name TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (set_name, name))`)
	mustExec(t, db, `INSERT INTO schema_migration VALUES (?, ?)`, sqldb.ReadModel, keyedMigration)
	if err := sqldb.Migrate(ctx, db, sqldb.SQLite, sqldb.ReadModel); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
		INSERT INTO session SELECT printf('ses_%07d', ? - i), 'title ' || i, 'build', NULL, '/src', i, 't' || i, 't' || i, 'idle' FROM k`, n, n)
	mustExec(t, db, `INSERT INTO work_plan SELECT id, 'p1', 1, 'plan', 'active', 0, NULL, '[]', 't', 't' FROM session`)
	mustExec(t, db, `INSERT INTO work_item SELECT 't1', id, 'item', 'pending', NULL, '[]', NULL, 't', 't' FROM session`)
	mustExec(t, db, `INSERT INTO projection_checkpoint VALUES ('session', 42, 't'), ('work_plan', 42, 't'), ('work_item', 41, 't')`)
	mustExec(t, db, `DELETE FROM schema_migration WHERE name = ?`, keyedMigration)
	return db
}

var keyedQueries = []string{
	`SELECT * FROM session ORDER BY id`,
	`SELECT * FROM work_plan ORDER BY session_id, plan_id`,
	`SELECT * FROM work_item ORDER BY session_id, id`,
	`SELECT * FROM projection_checkpoint ORDER BY projector`,
}

func withoutRowid(t *testing.T, db *sqlx.DB, table string) bool {
	t.Helper()
	var sql string
	if err := db.Get(&sql, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table); err != nil {
		t.Fatal(err)
	}
	return strings.HasSuffix(sql, "WITHOUT ROWID")
}

// The helper process: applies the read model's migrations to ZUNO_TEST_MIGRATE_DB and is
// killed by its parent while it does.
func TestKeyedTablesMigrateHelper(t *testing.T) {
	path := os.Getenv("ZUNO_TEST_MIGRATE_DB")
	if path == "" {
		t.Skip("the helper process of TestKeyedTablesMigrationKilled")
	}
	db, err := sqldb.OpenSQLite(context.Background(), path, sqldb.Writer)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("migrating\n")
	_ = sqldb.Migrate(context.Background(), db, sqldb.SQLite, sqldb.ReadModel)
	os.Stdout.WriteString("migrated\n")
}

func TestKeyedTablesMigrationKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	db := previousBuild(t, path, 50000)
	before := dump(t, db, keyedQueries)
	db.Close()
	killedMidway := false
	// Each kill lands the given time after the helper said it began migrating.
	for _, after := range []time.Duration{0, 30 * time.Millisecond, 120 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKeyedTablesMigrateHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ZUNO_TEST_MIGRATE_DB="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		for lines.Scan() && lines.Text() != "migrating" { // the helper's test binary starting
		}
		time.Sleep(after)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		rest, _ := io.ReadAll(stdout)
		_ = cmd.Wait()
		if strings.Contains(string(rest), "migrated") {
			t.Logf("the migration ended within %v: not killed midway", after)
			break
		}
		killedMidway = true
		db, err := sqldb.OpenSQLite(context.Background(), path, sqldb.Writer)
		if err != nil {
			t.Fatal(err)
		}
		var check string
		if err := db.Get(&check, `PRAGMA integrity_check`); err != nil || check != "ok" {
			t.Fatalf("integrity after a kill at %v: %q, %v", after, check, err)
		}
		if got := dump(t, db, keyedQueries); got != before {
			t.Fatalf("rows changed by a migration killed at %v", after)
		}
		var recorded int
		if err := db.Get(&recorded, `SELECT count(*) FROM schema_migration WHERE name = ?`, keyedMigration); err != nil || recorded != 0 {
			t.Fatalf("0017 recorded after a kill: %d, %v", recorded, err)
		}
		for _, table := range []string{"session", "work_plan", "work_item"} {
			if withoutRowid(t, db, table) {
				t.Fatalf("%s is half migrated after a kill at %v", table, after)
			}
		}
		for _, leftover := range []string{"session_keyed", "work_plan_keyed", "work_item_keyed"} {
			var n int
			if err := db.Get(&n, `SELECT count(*) FROM sqlite_master WHERE name = ?`, leftover); err != nil || n != 0 {
				t.Fatalf("%s left after a kill at %v", leftover, after)
			}
		}
		db.Close()
	}
	if !killedMidway {
		t.Fatal("no kill landed inside the migration: the test tested nothing (more rows?)")
	}
	db, err := sqldb.OpenSQLite(context.Background(), path, sqldb.Writer)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := sqldb.Migrate(context.Background(), db, sqldb.SQLite, sqldb.ReadModel); err != nil {
		t.Fatalf("the next start: %v", err)
	}
	if got := dump(t, db, keyedQueries); got != before {
		t.Fatal("rows changed by the migration after the kills")
	}
	for _, table := range []string{"session", "work_plan", "work_item"} {
		if !withoutRowid(t, db, table) {
			t.Fatalf("%s is not WITHOUT ROWID after the next start", table)
		}
	}
}

// A read-only connection (as `zuno db` opens) holds a read transaction across the migration
// and reads the old rows throughout; a statement it prepared before reads the new tables
// after, with the same rows.
func TestKeyedTablesMigrationUnderAReader(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "zuno.db")
	db := previousBuild(t, path, 1000)
	defer db.Close()
	before := dump(t, db, keyedQueries)
	ro, err := sqldb.OpenSQLite(ctx, path, sqldb.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	stmt, err := ro.Preparex(`SELECT id, title, message_count FROM session WHERE id >= ? ORDER BY id LIMIT 3`)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var first []struct {
		ID    string `db:"id"`
		Title string `db:"title"`
		N     int    `db:"message_count"`
	}
	if err := stmt.Select(&first, "ses_0000500"); err != nil {
		t.Fatal(err)
	}
	tx, err := ro.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.Get(&n, `SELECT count(*) FROM session`); err != nil || n != 1000 {
		t.Fatalf("%d, %v", n, err)
	}
	if err := sqldb.Migrate(ctx, db, sqldb.SQLite, sqldb.ReadModel); err != nil {
		t.Fatalf("the migration under a reader: %v", err)
	}
	if err := tx.Get(&n, `SELECT count(*) FROM session`); err != nil || n != 1000 {
		t.Fatalf("the reader's snapshot after the migration: %d, %v", n, err)
	}
	_ = tx.Rollback()
	var again []struct {
		ID    string `db:"id"`
		Title string `db:"title"`
		N     int    `db:"message_count"`
	}
	if err := stmt.Select(&again, "ses_0000500"); err != nil {
		t.Fatalf("a statement prepared before the migration: %v", err)
	}
	if len(again) != 3 || len(first) != 3 {
		t.Fatalf("%v, %v", first, again)
	}
	for i := range first {
		if first[i] != again[i] {
			t.Fatalf("row %d: %v before, %v after", i, first[i], again[i])
		}
	}
	if got := dump(t, db, keyedQueries); got != before {
		t.Fatal("rows changed by the migration")
	}
	if !withoutRowid(t, db, "session") {
		t.Fatal("session is not WITHOUT ROWID")
	}
}
