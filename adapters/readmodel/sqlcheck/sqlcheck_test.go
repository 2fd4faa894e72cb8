package sqlcheck

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		sql  string
		d    Dialect
		want string // the statement, or the refusal's code
	}{
		{"SELECT 1", SQLite, "SELECT 1"},
		{"  select 1 ; -- done\n", SQLite, "  select 1 "},
		{"(SELECT 1)", Postgres, "(SELECT 1)"},
		{"/* hi */ WITH a AS (SELECT 1) SELECT * FROM a", SQLite, "/* hi */ WITH a AS (SELECT 1) SELECT * FROM a"},
		{"VALUES (1)", Postgres, "VALUES (1)"},
		{"SELECT ';'", SQLite, "SELECT ';'"},
		{"SELECT $$;$$", Postgres, "SELECT $$;$$"},
		{"SELECT 1; DELETE FROM event", SQLite, CodeMultiple},
		{"SELECT ';'; DROP TABLE event", SQLite, CodeMultiple},
		{"SELECT 1 /* ; */; x", SQLite, CodeMultiple},
		{"SELECT $a$;$a$; DROP TABLE event", Postgres, CodeMultiple},
		{`SELECT E'\';'; DROP TABLE event`, Postgres, CodeMultiple},
		{"SELECT [;]; DROP TABLE event", SQLite, CodeMultiple},
		{"SELECT 1;;", SQLite, CodeMultiple},
		{"COMMIT; DELETE FROM event_log", Postgres, CodeMultiple},
		{"COMMIT", Postgres, CodeNotQuery},
		{"PRAGMA query_only=0", SQLite, CodeNotQuery},
		{"DELETE FROM event", SQLite, CodeNotQuery},
		{"EXPLAIN SELECT 1", SQLite, CodeNotQuery},
		{"", SQLite, CodeEmpty},
		{" -- nothing\n /* */ ;", SQLite, CodeEmpty},
	} {
		got, err := Check(c.sql, c.d)
		var r *Refused
		if errors.As(err, &r) {
			got = r.Code()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Check(%q) = %q, want %q", c.sql, got, c.want)
		}
	}
}
