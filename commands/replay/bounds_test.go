package replay

import (
	"encoding/json"
	"testing"
)

// A turn recorded before its limits were recorded compares without them; one that records
// them is held to them.
func TestBoundsCompared(t *testing.T) {
	replayed := json.RawMessage(`{"agent":"build","bounds":{"maxBytes":51200}}`)
	rec, rep := boundsCompared(json.RawMessage(`{"agent":"build"}`), replayed)
	if _, _, _, same := diff(rec, rep); !same {
		t.Fatalf("an old recording differs: %s vs %s", rec, rep)
	}
	rec, rep = boundsCompared(json.RawMessage(`{"agent":"build","bounds":{"maxBytes":100}}`), replayed)
	if path, _, _, same := diff(rec, rep); same || path != "bounds.maxBytes" {
		t.Fatalf("recorded limits not compared: %q %v", path, same)
	}
}
