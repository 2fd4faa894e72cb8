package bundle

import (
	"bytes"
	"testing"
)

// FuzzVerify feeds the bundle parser arbitrary bytes, seeded with real bundles (signed and not,
// with an anchor line, with events older than the chain): it must never panic, a verdict of
// valid names no line, and an invalid one names a line of the file or the one after its last.
func FuzzVerify(f *testing.F) {
	evs := chained(f, []string{"session-ses_a", "inbox-ses_a"}, 2, 0)
	f.Add(write(f, Contents{Sessions: []string{"ses_a"}, Events: evs}, key))
	f.Add(write(f, Contents{Sessions: []string{"ses_a"}, Events: evs}, nil))
	f.Add(write(f, Contents{Events: evs, Anchor: []byte(`{"version":"zuno.anchor.2","heads":[]}`)}, nil))
	f.Add(write(f, Contents{Events: chained(f, []string{"s"}, 3, 2), Genesis: 2}, nil))
	f.Add([]byte("{}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := Verify(data, Options{})
		lines := bytes.Count(data, []byte("\n"))
		switch {
		case res.Valid && (res.Line != 0 || res.Reason != ""):
			t.Fatalf("valid, yet %+v", res)
		case !res.Valid && (res.Line < 1 || res.Line > lines+1 || res.Code() == ""):
			t.Fatalf("invalid at line %d of %d: %+v", res.Line, lines, res)
		}
	})
}
