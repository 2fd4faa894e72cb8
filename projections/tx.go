package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/migrations"
)

// Tx is the transaction a projector writes in. Exec takes '?' placeholders on every dialect
// and keeps one prepared statement per query for the transaction's life: a rebuild runs the
// same few statements hundreds of thousands of times. On Postgres the rows of INSERTs and
// keyed UPDATEs are held and written many per statement (batch.go).
type Tx struct {
	tx    *sqlx.Tx
	stmts map[string]*sqlx.Stmt
	done  bool
	views map[string]bool // read models that are views, which no projector writes

	// schemas are the read-model tables' keys and column types, set on Postgres only:
	// batching is on where they are. There each statement is a round trip; on the embedded
	// SQLite it is not, and multi-row upserts measured slower there than one row per
	// statement (docs/storage.md).
	schemas  map[string]*tableSchema
	shapes   map[string]*batchShape // per query; nil for a statement that is not batched
	held     map[string]*heldTable  // by table
	position uint64                 // the log position of the event being applied

	timeOf time.Time // the event time last spelt, as time (eventTime)
	time   string
}

func newTx(ctx context.Context, db *sqlx.DB) (*Tx, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin read-model transaction: %w", err)
	}
	if db.DriverName() == "postgres" {
		// Serialise read-model writers across processes, as SQLite's write lock does: two
		// runners must not both apply a batch from the same checkpoint. A table lock the
		// reader role of zuno db cannot take (migrations/postgres/readmodel/0006).
		if _, err := tx.ExecContext(ctx, migrations.ReadModelWriteLock); err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("take read-model lock: %w", err)
		}
	}
	return &Tx{tx: tx, stmts: map[string]*sqlx.Stmt{}, shapes: map[string]*batchShape{}, held: map[string]*heldTable{}}, nil
}

// IsView reports whether the read model table is a view in this database: the event read
// model is one where the log shares the database (docs/storage.md, "The event read
// model"), and the view already holds every event.
func (t *Tx) IsView(table string) bool { return t.views[table] }

// readViews lists the views of the read-model database.
func readViews(ctx context.Context, tx *sqlx.Tx) (map[string]bool, error) {
	query := `SELECT name FROM sqlite_master WHERE type = 'view'`
	if tx.DriverName() == "postgres" {
		query = `SELECT relname FROM pg_class WHERE relkind = 'v' AND relnamespace = current_schema()::regnamespace`
	}
	var names []string
	if err := tx.SelectContext(ctx, &names, query); err != nil {
		return nil, fmt.Errorf("list read-model views: %w", err)
	}
	views := make(map[string]bool, len(names))
	for _, n := range names {
		views[n] = true
	}
	return views, nil
}

// Exec runs a statement with '?' placeholders. When batching, a single-row INSERT or an
// UPDATE of one row by key is held and written, with the rows held beside it, before the next
// other statement on its table or commit: an error in it may come from a later call.
func (t *Tx) Exec(ctx context.Context, query string, args ...any) error {
	if t.schemas != nil {
		shape, parsed := t.shapes[query]
		if !parsed {
			shape = parseBatch(query, t.schemas)
			t.shapes[query] = shape
		}
		if shape != nil {
			return t.hold(ctx, shape, args)
		}
	}
	if err := t.flushBefore(ctx, query); err != nil {
		return err
	}
	stmt, err := t.prepared(ctx, query)
	if err != nil {
		return err
	}
	_, err = stmt.ExecContext(ctx, args...)
	return err
}

// planForGrowingTables makes Postgres plan each execution of a prepared statement for the
// tables as they are then, in a rebuild, where they start empty and grow by the whole log
// within the transaction. Otherwise Postgres keeps, after five executions, a generic plan made
// while a table was nearly empty: for a batched UPDATE ... FROM (VALUES ...) that is a scan of
// the whole table, which at a million events cost 20 ms per statement, where looking up each
// row by its key costs well under one (docs/storage.md). Live batches run in transactions
// of their own over tables that are already there, and keep the cheaper cached plans.
func (t *Tx) planForGrowingTables(ctx context.Context) error {
	if t.schemas == nil {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`); err != nil {
		return fmt.Errorf("plan the rebuild's statements for growing tables: %w", err)
	}
	return nil
}

// applying tells the transaction which event the next writes come from, for their errors.
func (t *Tx) applying(position uint64) { t.position = position }

// get reads one value inside the projection's transaction: a projector may read the rows it
// owns (never another projector's, whose checkpoint may differ). Rows held for its table are
// written first.
func (t *Tx) get(ctx context.Context, dest any, query string, args ...any) error {
	if err := t.flushBefore(ctx, query); err != nil {
		return err
	}
	stmt, err := t.prepared(ctx, query)
	if err != nil {
		return err
	}
	return stmt.QueryRowxContext(ctx, args...).Scan(dest)
}

// prepared returns the statement for query, prepared once per transaction: a batch applies
// the same few statements thousands of times.
func (t *Tx) prepared(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if stmt, ok := t.stmts[query]; ok {
		return stmt, nil
	}
	stmt, err := t.tx.PreparexContext(ctx, t.tx.Rebind(query))
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", query, err)
	}
	t.stmts[query] = stmt
	return stmt, nil
}

func (t *Tx) setCheckpoint(ctx context.Context, name string, pos uint64) error {
	return t.Exec(ctx, `INSERT INTO projection_checkpoint (projector, position, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (projector) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
		name, int64(pos), time.Now().UTC().Format(time.RFC3339Nano))
}

// commit writes the held rows, then commits.
func (t *Tx) commit(ctx context.Context) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	t.closeStmts()
	t.done = true
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("commit read models: %w", err)
	}
	return nil
}

func (t *Tx) rollback() {
	if t.done {
		return
	}
	t.closeStmts()
	t.tx.Rollback()
}

func (t *Tx) closeStmts() {
	for _, s := range t.stmts {
		s.Close()
	}
	t.stmts = nil
}
