package verify_test

import (
	"reflect"
	"testing"

	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/events"
)

// TestMergeHeads: what a new anchor records after a whole-log run and after a run over some
// streams.
func TestMergeHeads(t *testing.T) {
	h := func(s string, rev uint64) events.StreamHead {
		return events.StreamHead{Stream: s, Revision: rev, Hash: s}
	}
	previous := []events.StreamHead{h("a", 1), h("b", 1), h("gone", 3)}
	cases := []struct {
		name     string
		verified []events.StreamHead
		walked   []string
		want     []events.StreamHead
	}{
		{"whole log: exactly the heads verified", []events.StreamHead{h("b", 2), h("a", 2)}, nil, []events.StreamHead{h("a", 2), h("b", 2)}},
		{"some streams: theirs replaced, the others kept", []events.StreamHead{h("b", 5)}, []string{"b"}, []events.StreamHead{h("a", 1), h("b", 5), h("gone", 3)}},
		{"a new stream joins", []events.StreamHead{h("c", 0)}, []string{"c"}, []events.StreamHead{h("a", 1), h("b", 1), h("c", 0), h("gone", 3)}},
		{"first anchor", []events.StreamHead{}, nil, []events.StreamHead{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := verify.MergeHeads(previous, tc.verified, tc.walked); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
