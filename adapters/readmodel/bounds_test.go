package readmodel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
)

// counted is a RowSink that only counts, as a printer that keeps nothing would.
type counted struct{ rows int }

func (c *counted) Header([]string) error { return nil }
func (c *counted) Row([]any) error       { c.rows++; return nil }

// boundedQueries are, per dialect, an endless query of short rows and one of 1000-byte rows.
var boundedQueries = map[string][2]string{
	"sqlite": {`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c`,
		`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100) SELECT n, substr(hex(zeroblob(500)), 1, 1000) AS v FROM c`},
	"postgres": {`SELECT generate_series(1, 2000000000) AS n`,
		`SELECT n, repeat('x', 1000) AS v FROM generate_series(1, 100) AS n`},
}

// A user query streams: an endless result stops at the row limit and says it had more, and
// a result past the byte bound ends with result_too_large after the rows that fit, on both
// dialects (docs/config.md, "Bounds"; issue 30: zuno db once buffered whole results).
func TestUserQueryBounds(t *testing.T) {
	open := map[string]func(t *testing.T) *readmodel.DB{
		"sqlite":   func(t *testing.T) *readmodel.DB { _, _, rm := seededSQLite(t); return rm },
		"postgres": func(t *testing.T) *readmodel.DB { return seededPostgres(t, pgtest.NewDatabase(t)) },
	}
	for name, q := range boundedQueries {
		t.Run(name, func(t *testing.T) { userQueryBounds(t, open[name](t), q) })
	}
}

func userQueryBounds(t *testing.T, rm *readmodel.DB, q [2]string) {
	{
		t.Run("limit", func(t *testing.T) {
			var c counted
			sum, err := rm.UserQuery(context.Background(), q[0], readmodel.UserOptions{Limit: 5, Timeout: 20 * time.Second}, &c)
			if err != nil || c.rows != 5 || sum.Rows != 5 || !sum.More {
				t.Fatalf("rows %d, summary %+v, %v; want 5 rows and more", c.rows, sum, err)
			}
		})
		t.Run("max bytes", func(t *testing.T) {
			var c counted
			sum, err := rm.UserQuery(context.Background(), q[1], readmodel.UserOptions{Limit: 1000, MaxBytes: 5 * 1008, Timeout: 20 * time.Second}, &c)
			var tl *readmodel.TooLargeError
			if !errors.As(err, &tl) || tl.Code() != readmodel.CodeResultTooLarge || tl.Rows != 5 || c.rows != 5 || sum.Bytes != 5*1008 {
				t.Fatalf("rows %d, summary %+v, %v; want result_too_large after 5 rows", c.rows, sum, err)
			}
			// The connection serves the next query as before.
			if _, err := rm.UserQuery(context.Background(), "SELECT 1", readmodel.UserOptions{}, &c); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// On SQLite no value longer than the result may be is read into memory at all: the engine
// refuses it (SQLITE_LIMIT_LENGTH), and the query ends with result_too_large.
func TestUserQueryValueOverTheBoundSQLite(t *testing.T) {
	_, _, rm := seededSQLite(t)
	var c counted
	_, err := rm.UserQuery(context.Background(), `SELECT substr(hex(zeroblob(1500000)), 1, 3000000) AS v`,
		readmodel.UserOptions{Limit: 10, MaxBytes: 2 << 20}, &c)
	var tl *readmodel.TooLargeError
	if !errors.As(err, &tl) || c.rows != 0 {
		t.Fatalf("rows %d, %v; want result_too_large before any row", c.rows, err)
	}
	// Under the bound the same query answers.
	if _, err := rm.UserQuery(context.Background(), `SELECT substr(hex(zeroblob(1500000)), 1, 3000000) AS v`,
		readmodel.UserOptions{Limit: 10, MaxBytes: 4 << 20}, &c); err != nil || c.rows != 1 {
		t.Fatalf("rows %d, %v", c.rows, err)
	}
}
