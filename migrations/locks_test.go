package migrations_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/migrations"
)

// Every embedded migration expands, and its advisory locks are named, not numbered.
func TestMigrationsUseLockPlaceholders(t *testing.T) {
	numbered := regexp.MustCompile(`pg_advisory[a-z_]*\(\s*[0-9]`)
	appendLock := "pg_advisory_xact_lock(" + strconv.FormatInt(migrations.AppendLock, 10) + ")"
	sawAppend := false
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sql") {
			return err
		}
		raw, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		if loc := numbered.FindIndex(raw); loc != nil {
			t.Errorf("%s hard-codes an advisory-lock key: %q; use a placeholder of migrations/locks.go", path, raw[loc[0]:loc[1]])
		}
		body, err := migrations.Expand(path, string(raw))
		if err != nil {
			t.Error(err)
		}
		if path == "postgres/eventlog/0002_append_function.sql" {
			sawAppend = strings.Contains(body, appendLock)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawAppend {
		t.Errorf("the append function does not take %s", appendLock)
	}
}

func TestExpand(t *testing.T) {
	got, err := migrations.Expand("x.sql", "PERFORM pg_advisory_xact_lock({{AppendLock}}); -- {{ReadModelLock}}")
	if want := "PERFORM pg_advisory_xact_lock(7365120002); -- 7365120003"; err != nil || got != want {
		t.Fatalf("Expand = %q, %v; want %q", got, err, want)
	}
	if _, err := migrations.Expand("x.sql", "SELECT {{AppendLok}}"); err == nil || !strings.Contains(err.Error(), "x.sql") {
		t.Fatalf("Expand of an unknown placeholder = %v, want an error naming the file", err)
	}
}

// No Go or SQL file outside locks.go spells an advisory-lock key: each is named once.
func TestLockKeysNamedOnce(t *testing.T) {
	keys := []int64{migrations.AppendLock, migrations.ReadModelLock}
	seen := map[int64]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Fatalf("advisory-lock key %d is used twice", k)
		}
		seen[k] = true
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if (!strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".sql")) ||
			path == filepath.Join("..", "migrations", "locks.go") || path == filepath.Join("..", "migrations", "locks_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if strings.Contains(string(b), strconv.FormatInt(k, 10)) {
				t.Errorf("%s spells advisory-lock key %d; use the constant of migrations/locks.go", path, k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
