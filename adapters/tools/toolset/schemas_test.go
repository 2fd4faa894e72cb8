package toolset

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateSchemas = flag.Bool("update-schemas", false, "rewrite testdata/schemas from the current code")

// TestSchemasUnchanged: what the model is shown is byte-identical to the schemas recorded in
// testdata/schemas (taken from the hand-written generators before adapters/tools/schema
// replaced them); prompt receipts digest these bytes (docs/tools.md).
func TestSchemasUnchanged(t *testing.T) {
	s, _ := newSet(t)
	for _, tl := range s.Tools() {
		checkSchema(t, tl.Declaration().Name, tl.Spec().Schema)
	}
}

func checkSchema(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "schemas", name+".json")
	if *updateSchemas {
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
