// Package schematest holds the tools' provider-facing schemas to the bytes recorded in each
// package's testdata/schemas: prompt receipts digest these bytes (docs/tools.md, "Argument
// schemas"), so a change must be deliberate. Run a package's tests with -update-schemas to
// record the current schemas.
package schematest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update-schemas", false, "rewrite testdata/schemas from the current code")

// Unchanged fails t when the schema got of tool name differs from testdata/schemas/NAME.json.
func Unchanged(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "schemas", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s schema changed:\n got %s\nwant %s", name, got, want)
	}
}
