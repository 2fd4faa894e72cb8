package sqldb

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

func pragma(t *testing.T, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRowContext(context.Background(), "PRAGMA "+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

// A new file gets NewPageSize pages and WAL: the page size is set before WAL fixes it
// (docs/storage.md, "Bytes per step").
func TestOpenSQLiteNewFilePageSize(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []Mode{Writer, ReadWrite} {
		path := filepath.Join(t.TempDir(), "zuno.db")
		db, err := OpenSQLite(ctx, path, mode)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `CREATE TABLE t (x TEXT)`); err != nil {
			t.Fatal(err)
		}
		if got := pragma(t, db, "page_size"); got != NewPageSize {
			t.Errorf("mode %d: page_size = %s, want %s", mode, got, NewPageSize)
		}
		if got := pragma(t, db, "journal_mode"); got != "wal" {
			t.Errorf("mode %d: journal_mode = %s, want wal", mode, got)
		}
		db.Close()
	}
}

// A database created with another page size keeps it and its rows: SQLite cannot change the
// page size of a WAL database, and Zuno does not try.
func TestOpenSQLiteExistingFileKeepsPageSize(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(4096)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('kept')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	for _, mode := range []Mode{Writer, ReadWrite, ReadOnly} {
		db, err := OpenSQLite(ctx, path, mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := pragma(t, db, "page_size"); got != "4096" {
			t.Errorf("mode %d: page_size = %s, want 4096", mode, got)
		}
		var x string
		if err := db.GetContext(ctx, &x, `SELECT x FROM t`); err != nil || x != "kept" {
			t.Errorf("mode %d: row = %q, %v", mode, x, err)
		}
		db.Close()
	}
}
