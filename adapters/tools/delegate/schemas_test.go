package delegate_test

import (
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/schema/schematest"
)

// TestSchemasUnchanged: what the model is shown is the schema recorded in testdata/schemas;
// prompt receipts digest these bytes (docs/tools.md), so a change is deliberate.
func TestSchemasUnchanged(t *testing.T) {
	for _, tl := range byName(nil) {
		schematest.Unchanged(t, tl.Declaration().Name, tl.Spec().Schema)
	}
}
