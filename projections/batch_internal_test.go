package projections

import (
	"reflect"
	"strings"
	"testing"
)

// testSchemas are read-model tables as readSchemas reads them: keys sorted by name.
var testSchemas = map[string]*tableSchema{
	"work_item": {key: []string{"id", "session_id"}, types: map[string]string{"id": "text", "session_id": "text", "title": "text"}},
	"session": {key: []string{"id"}, types: map[string]string{"id": "text", "title": "text", "parent_session_id": "text",
		"message_count": "integer", "status": "text", "time_updated": "text"}},
	"prompt_receipt": {key: []string{"id"}, types: map[string]string{"id": "text", "session_id": "text"}},
	"work_plan": {key: []string{"plan_id", "session_id"}, types: map[string]string{"session_id": "text", "plan_id": "text",
		"status": "text", "revision": "integer"}},
	"t": {key: []string{"a"}, types: map[string]string{"a": "text", "b": "text", "c": "text"}},
}

// The projectors' INSERTs and keyed UPDATEs are batched, keyed by the table's primary key;
// anything the parser cannot take apart safely, or whose row the key does not name, runs as
// it is.
func TestParseBatch(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		perRow      int
		keyArgs     []int // nil: not batched
		statement   string
	}{
		{"upsert keyed by two columns out of order", `INSERT INTO work_item (id, session_id, title) VALUES (?, ?, ?)
			ON CONFLICT (session_id, id) DO UPDATE SET title = excluded.title`, 3, []int{0, 1}, ""},
		{"constants among the values", `INSERT INTO session (id, title, parent_session_id, message_count)
			VALUES (?, ?, NULL, 0)`, 2, []int{0}, ""},
		{"do nothing", `insert into prompt_receipt (id, session_id) values (?, ?) on conflict (id) do nothing`, 2, []int{0}, ""},
		{"constant key column", `INSERT INTO t (a, b) VALUES ('x', ?) ON CONFLICT (a) DO NOTHING`, 0, nil, ""},
		{"placeholder after the row", `INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO UPDATE SET b = ?`, 0, nil, ""},
		{"function in the row", `INSERT INTO t (a, b) VALUES (?, lower(?))`, 0, nil, ""},
		{"conflict without columns", `INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING`, 0, nil, ""},
		{"conflict on another column", `INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (b) DO NOTHING`, 0, nil, ""},
		{"upsert that changes the key", `INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO UPDATE SET a = excluded.b`, 0, nil, ""},
		{"returning", `INSERT INTO t (a) VALUES (?) RETURNING a`, 0, nil, ""},
		{"select", `INSERT INTO t (a) SELECT ?`, 0, nil, ""},
		{"unknown table", `INSERT INTO elsewhere (a) VALUES (?)`, 0, nil, ""},
		{"update by key", `UPDATE session SET title = ?, time_updated = ? WHERE id = ?`, 3, []int{2},
			`UPDATE session SET title = v.p1, time_updated = v.p2 FROM (VALUES (CAST(? AS text), CAST(? AS text), CAST(? AS text)), ` +
				`(CAST(? AS text), CAST(? AS text), CAST(? AS text))) AS v (p1, p2, p3) WHERE session.id = v.p3`},
		{"update with constants and a quoted AND", `UPDATE session SET message_count = message_count + 1, status = 'x AND y',
			time_updated = ? WHERE id = ?`, 2, []int{1},
			`UPDATE session SET message_count = message_count + 1, status = 'x AND y', time_updated = v.p1 FROM (VALUES ` +
				`(CAST(? AS text), CAST(? AS text)), (CAST(? AS text), CAST(? AS text))) AS v (p1, p2) WHERE session.id = v.p2`},
		{"update by a two-column key", `UPDATE work_plan SET status = ?, revision = ? WHERE session_id = ? AND plan_id = ?`,
			4, []int{3, 2}, ""},
		{"update by part of the key", `UPDATE work_plan SET status = ? WHERE session_id = ?`, 0, nil, ""},
		{"update with another condition", `UPDATE t SET b = ? WHERE a = ? AND c IS NULL`, 0, nil, ""},
		{"update of the key", `UPDATE t SET a = ? WHERE a = ?`, 0, nil, ""},
		{"update with a placeholder in an expression", `UPDATE t SET b = b || ? WHERE a = ?`, 0, nil, ""},
		{"update with a subquery", `UPDATE t SET b = (SELECT c FROM t) WHERE a = ?`, 0, nil, ""},
		{"update of every row", `UPDATE t SET b = ?`, 0, nil, ""},
		{"update of an unknown column", `UPDATE t SET d = ? WHERE a = ?`, 0, nil, ""},
		{"delete", `DELETE FROM t WHERE a = ?`, 0, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parseBatch(tc.query, testSchemas)
			if (s != nil) != (tc.keyArgs != nil) {
				t.Fatalf("batched %v, want %v", s != nil, tc.keyArgs != nil)
			}
			if s == nil {
				return
			}
			if s.perRow != tc.perRow || !reflect.DeepEqual(s.keyArgs, tc.keyArgs) {
				t.Fatalf("perRow %d keys %v, want %d %v", s.perRow, s.keyArgs, tc.perRow, tc.keyArgs)
			}
			if got := s.statement(1); tc.statement != "" && got != tc.statement {
				t.Fatalf("statement for two rows:\n%s\nwant\n%s", got, tc.statement)
			}
			if got := strings.Count(s.statement(3), "?"); got != 8*tc.perRow {
				t.Fatalf("%d placeholders for 8 rows of %d", got, tc.perRow)
			}
		})
	}
}

func TestStatementTable(t *testing.T) {
	for query, want := range map[string]string{
		`UPDATE session SET title = ? WHERE id = ?`:                       "session",
		`DELETE FROM part`:                                                "part",
		`SELECT data FROM part WHERE session_id = ? AND id = ?`:           "part",
		`SELECT a FROM part JOIN session ON part.session_id = session.id`: "",
		`SELECT a FROM part WHERE id IN (SELECT id FROM session)`:         "",
		`SELECT a FROM part, session`:                                     "",
		`WITH x AS (SELECT 1) SELECT * FROM x`:                            "",
		`VACUUM`:                                                          "",
	} {
		if got := statementTable(query); got != want {
			t.Errorf("%s: table %q, want %q", query, got, want)
		}
	}
}

// One row's statements share a key whatever Go types name it, so that they keep their order.
func TestKeyIgnoresArgumentTypes(t *testing.T) {
	s := &batchShape{keyArgs: []int{0, 1}}
	if a, b := key(s, []any{"x", int64(7)}), key(s, []any{[]byte("x"), 7}); a != b {
		t.Fatalf("keys %s and %s differ", a, b)
	}
	if a, b := key(s, []any{"7", 7}), key(s, []any{7, 7}); a != b {
		t.Fatalf("a number and its text: keys %q and %q differ", a, b)
	}
	if a, b := key(s, []any{"x", "y"}), key(s, []any{"xy", ""}); a == b {
		t.Fatalf("different rows share the key %q", a)
	}
}
