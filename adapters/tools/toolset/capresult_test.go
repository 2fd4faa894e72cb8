package toolset

import (
	"os"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// TestCapResult: another package's result over the caps is stored whole as the call's
// artifact, the model gets the notice, and the metadata it had is kept; one within the caps
// is returned as it is.
func TestCapResult(t *testing.T) {
	s, _ := newSet(t, func(c *Config) { c.MaxBytes, c.MaxLines = 100, 10 })
	small := tools.Result{Outcome: tools.OutcomeCompleted, Output: "short", Metadata: tools.Metadata{Details: []byte(`{"k":1}`)}}
	if got := s.CapResult("c1", "webfetch", small); got.Output != "short" || got.Metadata.WithheldOutput != nil {
		t.Fatalf("small: %+v", got)
	}
	big := strings.Repeat("x", 300)
	r := s.CapResult("c2", "webfetch", tools.Result{Outcome: tools.OutcomeCompleted, Output: big, Metadata: tools.Metadata{Details: []byte(`{"k":2}`)}})
	w := r.Metadata.WithheldOutput
	if w == nil || w.Limit != "max_bytes" || len(r.Metadata.OutputPaths) != 1 || string(r.Metadata.Details) != `{"k":2}` || !strings.Contains(r.Output, "Output withheld") {
		t.Fatalf("big: %+v", r)
	}
	if b, err := os.ReadFile(w.Path); err != nil || string(b) != big || !strings.HasSuffix(w.Path, "c2-webfetch.out") {
		t.Fatalf("artifact %s: %v", w.Path, err)
	}
}
