package sqldb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/zuno-run/zuno/migrations"
)

// Migration sets.
const (
	EventLog  = "eventlog"
	ReadModel = "readmodel"
)

// Migrate applies the not yet applied migrations of set for dialect, each in its own
// transaction together with its bookkeeping row, so a crash leaves each either applied or not.
//
// Concurrent migrators are serialised by a lock on schema_migration (LockMigrations), taken
// only when a migration is pending: a process that finds every migration applied takes no
// lock at all, so nothing can hold up its start. On SQLite db must be opened in Writer mode,
// whose transactions take the write lock at BEGIN.
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
	if err := createBookkeeping(ctx, db); err != nil {
		return fmt.Errorf("create schema_migration: %w", err)
	}
	var applied []string
	if err := db.SelectContext(ctx, &applied, db.Rebind(`SELECT name FROM schema_migration WHERE set_name = ?`), set); err != nil {
		return err
	}
	for _, name := range names {
		if slices.Contains(applied, name) {
			continue
		}
		if err := applyOne(ctx, db, dialect, set, dir, name); err != nil {
			return err
		}
	}
	return nil
}

// LockMigrations serialises migrators on Postgres until tx ends: a table lock on
// schema_migration, which conflicts with itself and not with reads. It replaced an advisory
// key (issue 30): any role may take any advisory key, so a reader that held the key stalled
// every process that started. The reader role holds no privilege on schema_migration and so
// cannot take this lock.
func LockMigrations(ctx context.Context, tx *sqlx.Tx, dialect Dialect) error {
	if dialect != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `LOCK TABLE schema_migration IN SHARE ROW EXCLUSIVE MODE`)
	return err
}

// createBookkeeping creates the schema_migration table. Two Postgres processes starting at
// once on an empty database may both try; CREATE TABLE IF NOT EXISTS then fails in the loser
// with a duplicate in the catalog, and the table is there when it tries again.
func createBookkeeping(ctx context.Context, db *sqlx.DB) error {
	const create = `CREATE TABLE IF NOT EXISTS schema_migration (
		set_name TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (set_name, name))`
	var err error
	for range 3 {
		if _, err = db.ExecContext(ctx, create); err == nil || !createRace(err) {
			return err
		}
	}
	return err
}

// createRace: the catalog's unique_violation or duplicate_table from a concurrent CREATE.
func createRace(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07")
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
	if err := LockMigrations(ctx, tx, dialect); err != nil {
		return err
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
