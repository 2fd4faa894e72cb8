package readmodel_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/readmodel"
)

// Opening compares each log view's definition with this build's, rendered by the server from
// a view made for the purpose (adapters/readmodel/shared.go). Where the owner may not make
// temporary tables, that view is made beside the read models and rolled back: an open does not
// make the views again when they are this build's, and does when another definition replaced
// one.
func TestLogViewsCheckedWithoutTemporaryTables(t *testing.T) {
	ownerURL := ownerDatabase(t, "CREATEROLE")
	u, _ := url.Parse(ownerURL)
	role, name := u.User.Username(), strings.TrimPrefix(u.Path, "/")
	admin := *u
	admin.User = url.User("postgres")
	adb, err := sql.Open("postgres", admin.String())
	if err != nil {
		t.Fatal(err)
	}
	defer adb.Close()
	for _, q := range []string{"REVOKE TEMP ON DATABASE " + name + " FROM PUBLIC", "REVOKE TEMP ON DATABASE " + name + " FROM " + role} {
		if _, err := adb.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	rm := seededPostgres(t, ownerURL)
	if _, err := rm.Writer.Exec(`CREATE TEMP VIEW t AS SELECT 1`); err == nil {
		t.Fatal("the owner may still make temporary views")
	}
	oid := func(db interface {
		QueryRow(string, ...any) *sql.Row
	}, view string) string {
		var o string
		if err := db.QueryRow(`SELECT to_regclass($1)::oid::text`, view).Scan(&o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	before := map[string]string{}
	for _, v := range []string{"event", "verification_receipt", "prompt_receipt_row", "prompt_receipt"} {
		before[v] = oid(rm.Writer, v)
	}
	again, err := readmodel.OpenPostgres(context.Background(), ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	for v, o := range before {
		if got := oid(again.Writer, v); got != o {
			t.Errorf("%s was made again by an open although it is this build's", v)
		}
	}
	var marker string
	if err := again.Writer.QueryRow(`SELECT obj_description(to_regclass('event'), 'pg_class')`).Scan(&marker); err != nil {
		t.Fatal(err)
	}
	again.Close()
	for _, q := range []string{`DROP VIEW event`, `CREATE VIEW event AS SELECT 'forged' AS id`, `COMMENT ON VIEW event IS '` + marker + `'`} {
		if _, err := rm.Writer.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	third, err := readmodel.OpenPostgres(context.Background(), ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	var forged int
	if err := third.Writer.QueryRow(`SELECT COUNT(*) FROM event WHERE id = 'forged'`).Scan(&forged); err != nil || forged != 0 {
		t.Fatalf("the forged event view stayed: %d, %v", forged, err)
	}
}
