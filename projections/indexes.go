package projections

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// deferredIndex is a secondary index a rebuild drops before replaying the log and creates
// again after it: building an index once over the loaded rows costs less than keeping it
// up to date row by row (docs/storage.md, "Read models and projections"). Unique indexes and
// primary keys stay, since upserts (ON CONFLICT) need them while rows load.
type deferredIndex struct {
	name, create string
}

// secondaryIndexes lists the non-unique indexes of tables. Only SQLite's are deferred: on
// Postgres, DROP INDEX would lock the table against `zuno db` readers until the rebuild
// commits, where now they read the old rows meanwhile.
func secondaryIndexes(ctx context.Context, tx *sqlx.Tx, tables []string) ([]deferredIndex, error) {
	if tx.DriverName() != "sqlite" {
		return nil, nil
	}
	var out []deferredIndex
	for _, table := range tables {
		rows, err := tx.QueryxContext(ctx, `SELECT name, sql FROM sqlite_master
			WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL AND upper(sql) NOT LIKE 'CREATE UNIQUE%'`, table)
		if err != nil {
			return nil, fmt.Errorf("list indexes of %s: %w", table, err)
		}
		for rows.Next() {
			var ix deferredIndex
			if err := rows.Scan(&ix.name, &ix.create); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, ix)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dropIndexes drops the deferred indexes; createIndexes builds them again.
func dropIndexes(ctx context.Context, tx *sqlx.Tx, ixs []deferredIndex) error {
	for _, ix := range ixs {
		if _, err := tx.ExecContext(ctx, `DROP INDEX "`+ix.name+`"`); err != nil {
			return fmt.Errorf("drop index %s for the rebuild: %w", ix.name, err)
		}
	}
	return nil
}

func createIndexes(ctx context.Context, tx *sqlx.Tx, ixs []deferredIndex) error {
	for _, ix := range ixs {
		if _, err := tx.ExecContext(ctx, ix.create); err != nil {
			return fmt.Errorf("create index %s after the rebuild: %w", ix.name, err)
		}
	}
	return nil
}
