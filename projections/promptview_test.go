package projections_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/projections"
)

// allReceipts reads every column of the prompt receipt read model, view and tables alike.
const allReceipts = `SELECT r.id, r.session_id, r.event_id, r.position, r.model, r.assembly_digest, r.actual_digest,
	r.estimated_input_tokens, r.context_window, r.header_id, r.time_created, p.section_count, p.sections, p.tool_names
	FROM prompt_receipt_row r JOIN prompt_receipt p ON p.position = r.position AND p.session_id = r.session_id
	ORDER BY r.position`

// Where the log shares the database, prompt_receipt_row is a view reading each receipt's event
// by the position prompt_receipt_key holds (docs/storage.md, "Bytes per step"); elsewhere a
// table the projector fills. The two must hold the same rows, value for value (zuno verify
// --all compares them), for receipts that record their header and receipts that name a base,
// with and without a context window, in two sessions; and a rebuild derives the keys again.
func TestPromptReceiptViewEqualsTheCopy(t *testing.T) {
	for _, tc := range dialects {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			ctx := context.Background()
			if !isView(t, e, "prompt_receipt_row") || isView(t, e, "prompt_receipt_key") {
				t.Fatal("prompt_receipt_row is not a view over prompt_receipt_key although the log shares the database")
			}
			writeSteps(t, e.store, "ses_p", &turnClock{}, forensicTurns(t, "ses_p", ""), nil)
			writeSteps(t, e.store, "ses_q", &turnClock{}, forensicTurns(t, "ses_q", "_q"), nil)
			if _, err := e.runner.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			copied := rebuiltCopy(t, e)
			want := (&env{rm: &readmodel.DB{Writer: copied}}).query(t, allReceipts)
			if len(want) != 10 {
				t.Fatalf("the copy holds %d receipts, want 10", len(want))
			}
			wantRows(t, "the view", e.query(t, allReceipts), want)
			drift, err := projections.CompareReadModels(ctx, e.rm.Writer, copied, projections.All(), math.MaxUint64)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range drift {
				t.Errorf("%s row %s: %v", d.Table, d.Kind, d.Row)
			}
			if _, err := e.runner.Rebuild(ctx, projections.PromptReceipts{}.Name()); err != nil {
				t.Fatal(err)
			}
			wantRows(t, "rebuilt", e.query(t, allReceipts), want)
		})
	}
}

// A session's receipts are found by key through the view: the key table's range, then the
// log by its key (SQLite's rowid, Postgres's primary key), never a scan of the log.
func TestPromptReceiptViewIsIndexed(t *testing.T) {
	for _, tc := range dialects {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			writeSteps(t, e.store, "ses_p", &turnClock{}, forensicTurns(t, "ses_p", ""), nil)
			if _, err := e.runner.CatchUp(context.Background()); err != nil {
				t.Fatal(err)
			}
			const bySession = `SELECT * FROM prompt_receipt WHERE session_id = 'ses_p' ORDER BY position`
			var plan []string
			if e.rm.Dialect == sqldb.Postgres {
				// Tables this small are read whole when the planner may; with sequential scans
				// discouraged, a plan without one shows the indexes that answer the query.
				tx := e.rm.Writer.MustBegin()
				defer tx.Rollback()
				tx.MustExec(`SET LOCAL enable_seqscan = off`)
				if err := tx.Select(&plan, `EXPLAIN `+bySession); err != nil {
					t.Fatal(err)
				}
			} else {
				rows, err := e.rm.Writer.Queryx(`EXPLAIN QUERY PLAN ` + bySession)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				for rows.Next() {
					var id, parent, notused int
					var detail string
					if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
						t.Fatal(err)
					}
					plan = append(plan, detail)
				}
			}
			text := strings.Join(plan, "\n")
			if strings.Contains(text, "Seq Scan") || strings.Contains(text, "SCAN ") || !strings.Contains(strings.ToLower(text), "event_log") {
				t.Fatalf("a session's receipts are not read by key:\n%s", text)
			}
		})
	}
}

// A database the build before left (prompt_receipt_row a table with its rows, no
// prompt_receipt_key, the log views of another definition) keeps every receipt row when it is
// opened: *_prompt_receipt_keys.sql copies the keys, the table becomes the view, and the
// views an older build made are made again as this build defines them, without a catch-up.
func testPromptReceiptKeysUpgrade(t *testing.T, e *env, reopen func() *env) {
	ctx := context.Background()
	writeSteps(t, e.store, "ses_u", &turnClock{}, forensicTurns(t, "ses_u", ""), nil)
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	want := e.query(t, allReceipts)
	if len(want) != 5 {
		t.Fatalf("%d receipts", len(want))
	}
	for _, stmt := range []string{
		`CREATE TABLE prompt_receipt_old AS SELECT * FROM prompt_receipt_row`,
		`DROP VIEW prompt_receipt`, `DROP VIEW prompt_receipt_row`, `DROP TABLE prompt_receipt_key`,
		`ALTER TABLE prompt_receipt_old RENAME TO prompt_receipt_row`,
		`CREATE VIEW prompt_receipt AS SELECT r.id, r.session_id, r.event_id, r.position, r.model, r.assembly_digest,
			r.actual_digest, r.estimated_input_tokens, r.context_window, h.section_count, h.sections, h.tool_names, r.time_created
			FROM prompt_receipt_row r JOIN prompt_receipt_header h ON h.id = r.header_id`,
		// The verification view of a build whose receipts all held their session.
		`DROP VIEW verification_receipt`,
		`CREATE VIEW verification_receipt AS SELECT 'old' AS id, 'old' AS session_id`,
		`DELETE FROM schema_migration WHERE set_name = 'readmodel' AND name LIKE '%_prompt_receipt_keys.sql'`,
	} {
		if _, err := e.rm.Writer.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	e = reopen()
	if !isView(t, e, "prompt_receipt_row") {
		t.Fatal("prompt_receipt_row is still a table")
	}
	wantRows(t, "upgraded, before any catch-up", e.query(t, allReceipts), want)
	if got := e.query(t, `SELECT COUNT(*) FROM verification_receipt WHERE id = 'old'`); len(got) != 1 || got[0] != "0" {
		t.Fatalf("the old verification view is still there: %v", got)
	}
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, "upgraded, caught up", e.query(t, allReceipts), want)
	drift, err := projections.CompareReadModels(ctx, e.rm.Writer, rebuiltCopy(t, e), projections.All(), math.MaxUint64)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		t.Errorf("%s row %s: %v", d.Table, d.Kind, d.Row)
	}
}

func TestPromptReceiptKeysUpgradeSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	testPromptReceiptKeysUpgrade(t, sqliteEnvAt(t, path), func() *env { return sqliteEnvAt(t, path) })
}

func TestPromptReceiptKeysUpgradePostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	testPromptReceiptKeysUpgrade(t, postgresEnvAt(t, url), func() *env { return postgresEnvAt(t, url) })
}
