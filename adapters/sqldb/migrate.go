package sqldb

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/migrations"
)

// Migration sets.
const (
	EventLog  = "eventlog"
	ReadModel = "readmodel"
)

// Migrate applies the not yet applied migrations of set for dialect, each in its own
// transaction together with its bookkeeping row, so a crash leaves each either applied or not.
// Concurrent migrators are serialised: an advisory lock on Postgres; on SQLite db must be opened
// in Writer mode, whose transactions take the write lock at BEGIN.
func Migrate(ctx context.Context, db *sqlx.DB, dialect Dialect, set string) error {
	dir := string(dialect) + "/" + set
	entries, err := fs.ReadDir(migrations.FS, dir)
	if err != nil {
		return fmt.Errorf("migrations %s: %w", dir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if err := createBookkeeping(ctx, db, dialect); err != nil {
		return fmt.Errorf("create schema_migration: %w", err)
	}
	for _, name := range names {
		if err := applyOne(ctx, db, dialect, set, dir, name); err != nil {
			return err
		}
	}
	return nil
}

// createBookkeeping creates the schema_migration table. On Postgres two processes starting at
// once would race even on CREATE TABLE IF NOT EXISTS (a unique violation in the catalog), so it
// runs under the migration lock.
func createBookkeeping(ctx context.Context, db *sqlx.DB, dialect Dialect) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if dialect == Postgres {
		if _, err := tx.ExecContext(ctx, migrations.XactLock(migrations.MigrationLock)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migration (
		set_name TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (set_name, name))`); err != nil {
		return err
	}
	return tx.Commit()
}

func applyOne(ctx context.Context, db *sqlx.DB, dialect Dialect, set, dir, name string) error {
	raw, err := fs.ReadFile(migrations.FS, dir+"/"+name)
	if err != nil {
		return err
	}
	body, err := migrations.Expand(dir+"/"+name, string(raw))
	if err != nil {
		return err
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s/%s: %w", dir, name, err)
	}
	defer tx.Rollback()
	if dialect == Postgres {
		if _, err := tx.ExecContext(ctx, migrations.XactLock(migrations.MigrationLock)); err != nil {
			return err
		}
	}
	var done int
	if err := tx.GetContext(ctx, &done, tx.Rebind(`SELECT COUNT(*) FROM schema_migration WHERE set_name = ? AND name = ?`), set, name); err != nil {
		return err
	}
	if done > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return fmt.Errorf("migration %s/%s: %w", dir, name, err)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO schema_migration (set_name, name) VALUES (?, ?)`), set, name); err != nil {
		return err
	}
	return tx.Commit()
}
