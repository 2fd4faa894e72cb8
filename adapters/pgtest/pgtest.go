// Package pgtest gives tests a fresh database on a real PostgreSQL server: the one named by
// ZUNO_TEST_POSTGRES_URL (.ci/start-postgres starts a throwaway cluster and prints it).
package pgtest

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
)

// EnvURL names the server tests use.
const EnvURL = "ZUNO_TEST_POSTGRES_URL"

// NewDatabase creates an empty database for this test, drops it afterwards, and returns its
// URL. Without a server it skips, visibly, except under CI, where a missing server is a
// failure: CI must never go green by skipping the Postgres half of the suite.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set under CI: .ci/run must start PostgreSQL (.ci/start-postgres)", EnvURL)
		}
		t.Skipf("%s not set: start a server with .ci/start-postgres and export the URL it prints", EnvURL)
	}
	ctx := context.Background()
	db, err := sqlx.Open("postgres", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b [6]byte
	rand.Read(b[:])
	name := "zuno_t_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database on %s: %v", admin, err)
	}
	t.Cleanup(func() {
		db, err := sqlx.Open("postgres", admin)
		if err != nil {
			return
		}
		defer db.Close()
		db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		// The reader role the read-model migrations created for this database (one per
		// database, named by a digest of its name: migrations/postgres/readmodel/0005).
		sum := md5.Sum([]byte(name))
		db.ExecContext(context.Background(), "DROP ROLE IF EXISTS zuno_reader_"+hex.EncodeToString(sum[:])[:16])
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
