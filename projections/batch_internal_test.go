package projections

import (
	"reflect"
	"testing"
)

// The projectors' INSERTs are batched, keyed by their ON CONFLICT columns; anything the
// parser cannot take apart safely runs as it is.
func TestParseInsert(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		batched     bool
		perRow      int
		keyArgs     []int // nil: no conflict key
	}{
		{"upsert keyed by two columns out of order", `INSERT INTO work_item (id, session_id, title) VALUES (?, ?, ?)
			ON CONFLICT (session_id, id) DO UPDATE SET title = excluded.title`, true, 3, []int{1, 0}},
		{"constants among the values", `INSERT INTO session (id, title, parent_session_id, message_count)
			VALUES (?, ?, NULL, 0)`, true, 2, nil},
		{"do nothing", `insert into prompt_receipt (id, session_id) values (?, ?) on conflict (id) do nothing`, true, 2, []int{0}},
		{"constant key column", `INSERT INTO t (a, b) VALUES ('x', ?) ON CONFLICT (a) DO NOTHING`, false, 0, nil},
		{"placeholder after the row", `INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO UPDATE SET b = ?`, false, 0, nil},
		{"function in the row", `INSERT INTO t (a, b) VALUES (?, lower(?))`, false, 0, nil},
		{"conflict without columns", `INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING`, false, 0, nil},
		{"returning", `INSERT INTO t (a) VALUES (?) RETURNING a`, false, 0, nil},
		{"select", `INSERT INTO t (a) SELECT ?`, false, 0, nil},
		{"update", `UPDATE t SET a = ?`, false, 0, nil},
		{"key not among the columns", `INSERT INTO t (a) VALUES (?) ON CONFLICT (b) DO NOTHING`, false, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parseInsert(tc.query)
			if (s != nil) != tc.batched {
				t.Fatalf("batched %v, want %v", s != nil, tc.batched)
			}
			if s == nil {
				return
			}
			if s.perRow != tc.perRow || !reflect.DeepEqual(s.keyArgs, tc.keyArgs) {
				t.Fatalf("perRow %d keys %v, want %d %v", s.perRow, s.keyArgs, tc.perRow, tc.keyArgs)
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
