package migrations_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// TestKeyedTablesKeepTheirRows applies sqlite/readmodel/0017 to a read model that holds rows
// (every migration before it applied, as a database written by an earlier release): session,
// work_plan and work_item become WITHOUT ROWID tables and keep every row, each value with its
// type, in the same columns, and the projectors' checkpoints stay where they were.
func TestKeyedTablesKeepTheirRows(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, filepath.Join(t.TempDir(), "zuno.db"), sqldb.Writer)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const keyed = "0017_keyed_tables_without_rowid.sql"
	// Every migration but 0017: marked applied first, so Migrate passes it by.
	mustExec(t, db, `CREATE TABLE schema_migration (set_name TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (set_name, name))`)
	mustExec(t, db, `INSERT INTO schema_migration VALUES (?, ?)`, sqldb.ReadModel, keyed)
	if err := sqldb.Migrate(ctx, db, sqldb.SQLite, sqldb.ReadModel); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `INSERT INTO session (id, title, agent, parent_session_id, directory, message_count, time_created, time_updated, status)
		VALUES ('ses_b', 'B', 'build', 'ses_a', NULL, 3, 't1', 't2', 'open'), ('ses_a', 'A', 'plan', NULL, '/src', 0, 't0', 't0', 'idle')`)
	mustExec(t, db, `INSERT INTO work_plan VALUES ('ses_a', 'p2', 4, 'Dig', 'popped', 1, 'p1', '[]', 't1', 't3'),
		('ses_a', 'p1', 2, 'Fix', 'active', 0, NULL, '[{"id":"s1"}]', 't0', 't2')`)
	mustExec(t, db, `INSERT INTO work_item VALUES ('t2', 'ses_a', 'fix', 'pending', 'build', '["t1"]', NULL, 't1', 't1'),
		('t1', 'ses_a', 'test', 'completed', NULL, '[]', 's1', 't0', 't2')`)
	mustExec(t, db, `INSERT INTO projection_checkpoint VALUES ('session', 42, 't'), ('work_plan', 42, 't'), ('work_item', 41, 't')`)
	queries := []string{
		`SELECT id, title, agent, parent_session_id, directory, message_count, time_created, time_updated, status FROM session ORDER BY id`,
		`SELECT * FROM work_plan ORDER BY session_id, plan_id`,
		`SELECT * FROM work_item ORDER BY session_id, id`,
		`SELECT * FROM projection_checkpoint ORDER BY projector`,
	}
	before := dump(t, db, queries)

	mustExec(t, db, `DELETE FROM schema_migration WHERE name = ?`, keyed)
	if err := sqldb.Migrate(ctx, db, sqldb.SQLite, sqldb.ReadModel); err != nil {
		t.Fatal(err)
	}
	if after := dump(t, db, queries); after != before {
		t.Fatalf("rows changed by %s:\nbefore:\n%s\nafter:\n%s", keyed, before, after)
	}
	for _, table := range []string{"session", "work_plan", "work_item"} {
		var sql string
		if err := db.Get(&sql, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(sql, "WITHOUT ROWID") {
			t.Errorf("%s is not WITHOUT ROWID: %s", table, sql)
		}
	}
	// SELECT * keeps its columns' order (forensic SQL and `zuno db` print them in it).
	var columns []string
	if err := db.Select(&columns, `SELECT name FROM pragma_table_info('session') ORDER BY cid`); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(columns, ","); got != "id,title,agent,parent_session_id,directory,message_count,time_created,time_updated,status" {
		t.Errorf("session's columns: %s", got)
	}
}

func mustExec(t *testing.T, db *sqlx.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// dump is every row the queries return, each value with its Go type (the stored type: TEXT,
// INTEGER or NULL).
func dump(t *testing.T, db *sqlx.DB, queries []string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range queries {
		rows, err := db.Queryx(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			values, err := rows.SliceScan()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range values {
				fmt.Fprintf(&b, "%T:%v|", v, v)
			}
			b.WriteString("\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}
