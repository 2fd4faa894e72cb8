package projections_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/sqldb"
)

// A view's marker (the digest of its definition, kept beside it) is not what makes it this
// build's: a user with write access can replace a log view with a definition of their own and
// copy the marker onto it (in SQLite's schema text, or as Postgres's COMMENT ON VIEW). Opening
// must make the view again as this build defines it, as for any other definition
// (docs/storage.md, "Bytes per step").
func testForgedViewMarker(t *testing.T, e *env, reopen func() *env) {
	var marker string
	if e.rm.Dialect == sqldb.Postgres {
		got := e.query(t, `SELECT obj_description(to_regclass('verification_receipt'), 'pg_class')`)
		if len(got) != 1 {
			t.Fatalf("no comment on the view: %v", got)
		}
		marker = got[0]
	} else {
		got := e.query(t, `SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'verification_receipt'`)
		if len(got) != 1 {
			t.Fatalf("no view: %v", got)
		}
		marker = regexp.MustCompile(`zuno:[0-9a-f]+`).FindString(got[0])
	}
	if marker == "" {
		t.Fatal("the view carries no marker")
	}
	stmts := []string{`DROP VIEW verification_receipt`,
		`CREATE VIEW verification_receipt AS /* ` + marker + ` */ SELECT 'forged' AS id, 'forged' AS session_id`,
		// A view over a log view, which carries no marker of its own.
		`DROP VIEW prompt_receipt`, `CREATE VIEW prompt_receipt AS SELECT 'forged' AS id`}
	if e.rm.Dialect == sqldb.Postgres {
		stmts = append(stmts, `COMMENT ON VIEW verification_receipt IS '`+marker+`'`)
	}
	for _, stmt := range stmts {
		if _, err := e.rm.Writer.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	e = reopen()
	if got := e.query(t, `SELECT COUNT(*) FROM verification_receipt WHERE id = 'forged'`); len(got) != 1 || got[0] != "0" {
		t.Fatalf("the forged view is still there after opening: %v", got)
	}
	if got := e.query(t, `SELECT COUNT(*) FROM prompt_receipt WHERE id = 'forged'`); len(got) != 1 || got[0] != "0" {
		t.Fatalf("the forged prompt_receipt view is still there after opening: %v", got)
	}
	if got := e.query(t, `SELECT COUNT(*) FROM verification_receipt`); len(got) != 1 {
		t.Fatalf("the view made again does not answer: %v", got)
	}
}

func TestForgedViewMarkerSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	testForgedViewMarker(t, sqliteEnvAt(t, path), func() *env { return sqliteEnvAt(t, path) })
}

func TestForgedViewMarkerPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	testForgedViewMarker(t, postgresEnvAt(t, url), func() *env { return postgresEnvAt(t, url) })
}
