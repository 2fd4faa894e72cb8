package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// combineSchema is the tables the combiner tests write: keys of one and two columns, a
// default, a nullable key (SQLite lets a non-integer primary key hold NULLs, each a row of its
// own), a table with a second unique constraint, and one with a trigger.
const combineSchema = `
CREATE TABLE s (id TEXT NOT NULL PRIMARY KEY, title TEXT, status TEXT, n INTEGER NOT NULL DEFAULT 0, m INTEGER, created TEXT, updated TEXT);
CREATE TABLE w (sid TEXT NOT NULL, pid TEXT NOT NULL, rev INTEGER, body TEXT, PRIMARY KEY (sid, pid)) WITHOUT ROWID;
CREATE TABLE nk (a TEXT PRIMARY KEY, b TEXT);
CREATE TABLE u (id TEXT NOT NULL PRIMARY KEY, email TEXT UNIQUE);
CREATE TABLE tr (id TEXT NOT NULL PRIMARY KEY, v TEXT);
CREATE TABLE log (what TEXT);
CREATE TRIGGER tr_log AFTER UPDATE ON tr BEGIN INSERT INTO log VALUES (NEW.v); END;`

type stmt struct {
	query string
	args  []any
	read  bool // through Tx.get: the value read is compared too
}

const (
	insertS  = `INSERT INTO s (id, title, status, created, updated) VALUES (?, ?, 'open', ?, ?)`
	upsertS  = `INSERT INTO s (id, title, created, updated) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET title = excluded.title, updated = excluded.updated`
	countS   = `UPDATE s SET n = n + 1, updated = ? WHERE id = ?`
	statusS  = `UPDATE s SET status = 'a, b', updated = ? WHERE id = ?`
	upsertW  = `INSERT INTO w (sid, pid, rev, body) VALUES (?, ?, ?, ?) ON CONFLICT (pid, sid) DO UPDATE SET rev = excluded.rev, body = excluded.body`
	updateW  = `UPDATE w SET rev = ? WHERE pid = ? AND sid = ?`
	readS    = `SELECT title FROM s WHERE id = ?`
	nothingS = `INSERT INTO s (id, title, created, updated) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
)

// Every row is a sequence of statements a projector could send; the combiner must leave the
// tables exactly as running them one by one does (the rows, their rowids, the values read
// between them, whether the sequence fails), and follow the rows where it can.
func TestCombinerWritesWhatTheStatementsWould(t *testing.T) {
	many := []stmt{}
	for i := range maxImages + 10 {
		many = append(many, stmt{query: insertS, args: []any{fmt.Sprint("m", i), "t", "1", "1"}})
	}
	many = append(many, stmt{query: countS, args: []any{"2", "m0"}}, stmt{query: countS, args: []any{"2", fmt.Sprint("m", maxImages+5)}})
	reused := []byte("first")
	for _, tc := range []struct {
		name     string
		stmts    []stmt
		followed int // statements the combiner answers without the database (at least)
		fails    bool
	}{
		{"insert, then updates by key and a counter", []stmt{
			{query: insertS, args: []any{"a", "one", "1", "1"}},
			{query: countS, args: []any{"2", "a"}}, {query: countS, args: []any{"3", "a"}},
			{query: statusS, args: []any{"4", "a"}},
		}, 4, false},
		{"upserts keep the first row's created", []stmt{
			{query: upsertS, args: []any{"a", "one", "1", "1"}}, {query: upsertS, args: []any{"a", "two", "2", "2"}},
			{query: nothingS, args: []any{"a", "three", "3", "3"}},
		}, 3, false},
		{"a counter over a column with a constant default", []stmt{
			{query: upsertS, args: []any{"a", "one", "1", "1"}}, {query: countS, args: []any{"2", "a"}},
			{query: countS, args: []any{"3", "a"}},
		}, 3, false},
		{"a counter over a column the image does not hold runs in the database", []stmt{
			{query: upsertS, args: []any{"a", "one", "1", "1"}}, {query: upsertS, args: []any{"b", "two", "1", "1"}},
			{query: `UPDATE s SET m = m + 1 WHERE id = ?`, args: []any{"b"}},
			{query: `UPDATE s SET m = m + 1 WHERE id = ?`, args: []any{"a"}},
		}, 2, false},
		{"an update of a row that does not exist", []stmt{{query: countS, args: []any{"2", "nobody"}}}, 1, false},
		{"a plain insert of a key already there fails", []stmt{
			{query: insertS, args: []any{"a", "one", "1", "1"}}, {query: insertS, args: []any{"a", "two", "2", "2"}},
		}, 1, true},
		{"a row the image lacks a NOT NULL column of fails", []stmt{
			{query: `INSERT INTO s (id, n) VALUES (?, NULL)`, args: []any{"a"}},
		}, 0, true},
		{"NULL keys are rows of their own", []stmt{
			{query: `INSERT INTO nk (a, b) VALUES (?, ?)`, args: []any{nil, "x"}},
			{query: `INSERT INTO nk (a, b) VALUES (?, ?)`, args: []any{nil, "y"}},
		}, 0, false},
		{"two-column keys named in another order", []stmt{
			{query: upsertW, args: []any{"s1", "p1", 1, "a"}}, {query: upsertW, args: []any{"s1", "p2", 1, "b"}},
			{query: updateW, args: []any{2, "p1", "s1"}}, {query: upsertW, args: []any{"s1", "p1", 3, "c"}},
		}, 4, false},
		{"an update of many rows sees the images", []stmt{
			{query: upsertW, args: []any{"s1", "p1", 1, "a"}}, {query: upsertW, args: []any{"s1", "p2", 1, "b"}},
			{query: `UPDATE w SET body = ? WHERE sid = ?`, args: []any{"all", "s1"}},
			{query: updateW, args: []any{5, "p2", "s1"}},
		}, 2, false},
		{"an insert it cannot take apart stops following the table", []stmt{
			{query: insertS, args: []any{"a", "one", "1", "1"}},
			{query: `INSERT INTO s (id, title, created, updated) SELECT ?, title, created, updated FROM s WHERE id = ?`, args: []any{"b", "a"}},
			{query: countS, args: []any{"2", "b"}}, {query: insertS, args: []any{"c", "c", "1", "1"}},
		}, 1, false},
		{"a read between writes sees the image", []stmt{
			{query: insertS, args: []any{"a", "one", "1", "1"}}, {query: upsertS, args: []any{"a", "two", "2", "2"}},
			{query: readS, args: []any{"a"}, read: true}, {query: upsertS, args: []any{"a", "three", "3", "3"}},
			{query: readS, args: []any{"a"}, read: true},
		}, 1, false},
		{"a read of a row that does not exist", []stmt{{query: readS, args: []any{"zz"}, read: true}}, 0, true},
		{"a read of a row already written", []stmt{
			{query: insertS, args: []any{"a", "one", "1", "1"}},
			{query: `UPDATE s SET title = ? WHERE title = ?`, args: []any{"uno", "one"}},
			{query: readS, args: []any{"a"}, read: true},
		}, 1, false},
		{"a read of a column the image does not hold", []stmt{
			{query: `INSERT INTO s (id, created) VALUES (?, ?)`, args: []any{"a", "1"}},
			{query: `SELECT status FROM s WHERE id = ?`, args: []any{"a"}, read: true},
		}, 1, true},
		{"a read by part of the key", []stmt{
			{query: upsertW, args: []any{"s1", "p1", 1, "a"}},
			{query: `SELECT body FROM w WHERE sid = ?`, args: []any{"s1"}, read: true},
		}, 1, false},
		{"a table with another unique constraint is not followed", []stmt{
			{query: `INSERT INTO u (id, email) VALUES (?, ?)`, args: []any{"a", "x@y"}},
			{query: `UPDATE u SET email = ? WHERE id = ?`, args: []any{"z@y", "a"}},
			{query: `INSERT INTO u (id, email) VALUES (?, ?)`, args: []any{"b", "x@y"}},
		}, 0, false},
		{"a table with a trigger is not followed", []stmt{
			{query: `INSERT INTO tr (id, v) VALUES (?, ?)`, args: []any{"a", "1"}},
			{query: `UPDATE tr SET v = ? WHERE id = ?`, args: []any{"2", "a"}},
		}, 0, false},
		{"excluded of a column the insert does not list", []stmt{
			{query: insertS, args: []any{"a", "one", "1", "1"}},
			{query: `INSERT INTO s (id, title) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status`, args: []any{"a", "x"}},
		}, 1, false},
		{"a byte slice the caller reuses", []stmt{
			{query: `INSERT INTO nk (a, b) VALUES (?, ?)`, args: []any{"k", reused}},
			{query: `UPDATE nk SET b = ? WHERE a = ?`, args: []any{"k2", "other"}},
		}, 2, false},
		{"more rows than a table keeps as images", many, maxImages, false},
		{"a wrong argument count fails", []stmt{{query: countS, args: []any{"2"}}}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantReads, wantErr := runStatements(t, tc.stmts, false, func() { reused[0] = 'F' })
			reused[0] = 'f'
			got, gotReads, gotErr := runStatements(t, tc.stmts, true, func() { reused[0] = 'F' })
			reused[0] = 'f'
			if (wantErr != nil) != tc.fails || (gotErr != nil) != tc.fails {
				t.Fatalf("errors: one by one %v, combined %v; want failure %v", wantErr, gotErr, tc.fails)
			}
			if tc.fails {
				if errors.Is(gotErr, sql.ErrNoRows) != errors.Is(wantErr, sql.ErrNoRows) {
					t.Errorf("errors: one by one %v, combined %v", wantErr, gotErr)
				}
				return
			}
			if !reflect.DeepEqual(gotReads, wantReads) {
				t.Errorf("read %v combined, %v one by one", gotReads, wantReads)
			}
			if len(got) != len(want) {
				t.Errorf("tables with rows: %d combined, %d one by one", len(got), len(want))
			}
			for table, rows := range want {
				for i, row := range rows {
					if i >= len(got[table]) || got[table][i] != row {
						t.Fatalf("%s row %d: one by one %s, combined %v", table, i, row, got[table][i:min(i+1, len(got[table]))])
					}
				}
				if len(got[table]) != len(rows) {
					t.Errorf("%s: %d rows combined, %d one by one", table, len(got[table]), len(rows))
				}
			}
			if followed := countFollowed(t, tc.stmts); followed < tc.followed {
				t.Errorf("the combiner answered %d statements itself, want at least %d", followed, tc.followed)
			}
		})
	}
}

// runStatements runs stmts in a new database, through a transaction that combines or not,
// calls after once they are sent (a caller changing its arguments), and returns every
// table's rows with their rowids, the values read, and the first error.
func runStatements(t *testing.T, stmts []stmt, combine bool, after func()) (map[string][]string, []string, error) {
	ctx := context.Background()
	db := combineDB(t)
	tx, err := newTx(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.rollback()
	if combine {
		if tx.combine, err = newCombiner(ctx, tx, []string{"s", "w", "nk", "u", "tr"}); err != nil {
			t.Fatal(err)
		}
	}
	var reads []string
	for _, s := range stmts {
		if s.read {
			var v string
			if err := tx.get(ctx, &v, s.query, s.args...); err != nil {
				return nil, nil, err
			}
			reads = append(reads, v)
			continue
		}
		if err := tx.Exec(ctx, s.query, s.args...); err != nil {
			return nil, nil, err
		}
	}
	after()
	if err := tx.commit(ctx); err != nil {
		return nil, nil, err
	}
	return dumpTables(t, db), reads, nil
}

// countFollowed is how many of stmts the combiner answered without the database.
func countFollowed(t *testing.T, stmts []stmt) int {
	ctx := context.Background()
	db := combineDB(t)
	tx, err := newTx(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.rollback()
	c, err := newCombiner(ctx, tx, []string{"s", "w", "nk", "u", "tr"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range stmts {
		if s.read {
			continue
		}
		done, err := c.exec(ctx, tx, s.query, s.args)
		if err != nil {
			return n
		}
		if done {
			n++
		} else if err := tx.Exec(ctx, s.query, s.args...); err != nil {
			return n
		}
	}
	return n
}

func combineDB(t *testing.T) *sqlx.DB {
	t.Helper()
	db, err := sqldb.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "c.db"), sqldb.Writer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(combineSchema); err != nil {
		t.Fatal(err)
	}
	return db
}

func dumpTables(t *testing.T, db *sqlx.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for table, q := range map[string]string{
		"s": `SELECT rowid, * FROM s ORDER BY rowid`, "w": `SELECT * FROM w ORDER BY sid, pid`,
		"nk": `SELECT rowid, * FROM nk ORDER BY rowid`, "u": `SELECT rowid, * FROM u ORDER BY rowid`,
		"tr": `SELECT rowid, * FROM tr ORDER BY rowid`, "log": `SELECT rowid, * FROM log ORDER BY rowid`,
	} {
		rows, err := db.Queryx(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, v := range vals {
				fmt.Fprintf(&b, "%T:%v|", v, v)
			}
			out[table] = append(out[table], b.String())
		}
		rows.Close()
	}
	return out
}

// A table's images are written once they hold maxImageBytes, however few rows they are: a
// rebuild's memory does not grow with its largest rows.
func TestCombinerBoundsImageBytes(t *testing.T) {
	ctx := context.Background()
	db := combineDB(t)
	tx, err := newTx(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.rollback()
	if tx.combine, err = newCombiner(ctx, tx, []string{"nk"}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	rows := maxImageBytes>>20 + 2
	for i := range rows {
		if err := tx.Exec(ctx, `INSERT INTO nk (a, b) VALUES (?, ?)`, fmt.Sprint("k", i), big); err != nil {
			t.Fatal(err)
		}
	}
	if held := len(tx.combine.tables["nk"].images); held >= rows || held == 0 {
		t.Errorf("%d of %d rows of 1 MiB held as images", held, rows)
	}
	var n int
	if err := tx.tx.Get(&n, `SELECT COUNT(*) FROM nk`); err != nil || n == 0 || n == rows {
		t.Errorf("%d rows in the table before commit (%v), want some but not all", n, err)
	}
	if err := tx.commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&n, `SELECT COUNT(*) FROM nk WHERE length(b) = ?`, len(big)); err != nil || n != rows {
		t.Errorf("%d rows after commit (%v), want %d", n, err, rows)
	}
}
