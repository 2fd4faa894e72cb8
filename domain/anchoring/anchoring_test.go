package anchoring_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/anchoring"
	"github.com/zuno-run/zuno/events"
)

func state(recs ...events.LogAnchored) anchoring.State {
	var s anchoring.State
	for _, r := range recs {
		if err := s.Evolve(r); err != nil {
			panic(err)
		}
	}
	return s
}

// Each rule of docs/storage.md "Anchors" is a row: what the file says against what the log
// records.
func TestCheck(t *testing.T) {
	two := state(events.LogAnchored{Chain: "anc_a", Counter: 1, Digest: "sha256:1"}, events.LogAnchored{Chain: "anc_a", Counter: 2, Digest: "sha256:2"})
	file := func(chain string, n uint64, digest string) anchoring.File {
		return anchoring.File{Exists: true, Path: "a.json", Chain: chain, Counter: n, Digest: digest}
	}
	missing := anchoring.File{Path: "a.json"}
	for _, c := range []struct {
		name        string
		s           anchoring.State
		f           anchoring.File
		init, keyed bool
		code        string
	}{
		{name: "a first run without keys writes the first anchor", f: missing},
		{name: "a first run with a key needs --init", f: missing, keyed: true, code: anchoring.CodeAnchorMissing},
		{name: "a first run with a key and --init", f: missing, keyed: true, init: true},
		{name: "the file deleted, the log anchored before", s: two, f: missing, code: anchoring.CodeAnchorMissing},
		{name: "the file deleted, --init begins a new chain", s: two, f: missing, init: true},
		{name: "--init where a file is", s: two, f: file("anc_a", 2, "sha256:2"), init: true, code: anchoring.CodeAnchorExists},
		{name: "the latest anchor", s: two, f: file("anc_a", 2, "sha256:2")},
		{name: "an older copy", s: two, f: file("anc_a", 1, "sha256:1"), code: anchoring.CodeAnchorStale},
		{name: "another file with the latest counter", s: two, f: file("anc_a", 2, "sha256:forged"), code: anchoring.CodeAnchorReplaced},
		{name: "a later anchor than the log records: the log lost anchorings", s: two, f: file("anc_a", 3, "sha256:3"), code: anchoring.CodeAnchorAhead},
		{name: "a chain the log has no record of", s: two, f: file("anc_b", 1, "sha256:b"), code: anchoring.CodeAnchorAhead},
		{name: "a version 1 file, before the chain", f: file("", 0, "sha256:v1")},
		{name: "a version 1 file after the log began a chain: still compared", s: two, f: file("", 0, "sha256:v1")},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := anchoring.Check(c.s, c.f, c.init, c.keyed)
			if got := domain.CodeOf(err); got != c.code && !(c.code == "" && err == nil) {
				t.Fatalf("Check = %v, want code %q", err, c.code)
			}
		})
	}
}

func TestNextAndDecide(t *testing.T) {
	s := state(events.LogAnchored{Chain: "anc_a", Counter: 1, Digest: "sha256:1"})
	chain, n, prev := anchoring.Next(s, anchoring.File{Exists: true, Chain: "anc_a", Counter: 1, Digest: "sha256:1"}, false, "anc_new")
	if chain != "anc_a" || n != 2 || prev != "sha256:1" {
		t.Errorf("renewal: %s %d %s", chain, n, prev)
	}
	for _, f := range []anchoring.File{{}, {Exists: true, Chain: "anc_a", Counter: 1}} {
		if chain, n, prev := anchoring.Next(s, f, true, "anc_new"); chain != "anc_new" || n != 1 || prev != "" {
			t.Errorf("--init: %s %d %s", chain, n, prev)
		}
	}
	if chain, n, _ := anchoring.Next(s, anchoring.File{}, false, "anc_new"); chain != "anc_new" || n != 1 {
		t.Errorf("first: %s %d", chain, n)
	}
	if out, err := anchoring.Decide(s, anchoring.Record{LogAnchored: events.LogAnchored{Chain: "anc_a", Counter: 2}}); err != nil || len(out) != 1 {
		t.Errorf("the next anchor: %v %v", out, err)
	}
	for _, n := range []uint64{1, 3} {
		if _, err := anchoring.Decide(s, anchoring.Record{LogAnchored: events.LogAnchored{Chain: "anc_a", Counter: n}}); domain.CodeOf(err) != anchoring.CodeAnchorStale {
			t.Errorf("anchor %d after 1: %v", n, err)
		}
	}
	if _, err := anchoring.Decide(s, anchoring.Record{LogAnchored: events.LogAnchored{Chain: "anc_b", Counter: 1}}); err != nil {
		t.Errorf("a second chain's first anchor: %v", err)
	}
}
