package readmodel_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// snapshot is everything a hostile query could change, as text: every table's row count and
// checksum, the schema, and the files (names, sizes, contents) under the watched directories.
type snapshot map[string]string

func diff(before, after snapshot) []string {
	var out []string
	for k, v := range before {
		if after[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, v, after[k]))
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			out = append(out, fmt.Sprintf("%s: new %q", k, v))
		}
	}
	sort.Strings(out)
	return out
}

// addFiles records each file under dirs with its size and digest. SQLite's -shm is shared
// memory that readers write by design; it holds no data.
func addFiles(t testing.TB, s snapshot, dirs ...string) {
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			s["file "+p] = fmt.Sprint(len(b), " ", hex.EncodeToString(sum[:8]))
			return nil
		})
	}
}

// addQuery records every row of query, in order, under key.
func addQuery(t testing.TB, s snapshot, db *sql.DB, key, query string) {
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("snapshot %s: %v", key, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	n := 0
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = string(v)
		}
		s[fmt.Sprintf("%s[%d]", key, n)] = strings.Join(parts, "|")
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	s[key+" rows"] = fmt.Sprint(n)
}
