package continuity_test

import (
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/continuity"
	"github.com/zuno-run/zuno/adapters/tools/schema/schematest"
)

// TestSchemasUnchanged: what the model is shown is byte-identical to testdata/schemas; prompt
// receipts digest these bytes, so a change is a deliberate one (go test -update-schemas).
func TestSchemasUnchanged(t *testing.T) {
	for _, tl := range continuity.New(nil) {
		schematest.Unchanged(t, tl.Declaration().Name, tl.Spec().Schema)
	}
}
