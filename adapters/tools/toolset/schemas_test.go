package toolset

import (
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/schema/schematest"
)

// TestSchemasUnchanged: what the model is shown is byte-identical to the schemas recorded in
// testdata/schemas (taken from the hand-written generators before adapters/tools/schema
// replaced them); prompt receipts digest these bytes (docs/tools.md).
func TestSchemasUnchanged(t *testing.T) {
	s, _ := newSet(t)
	for _, tl := range s.Tools() {
		schematest.Unchanged(t, tl.Declaration().Name, tl.Spec().Schema)
	}
}
