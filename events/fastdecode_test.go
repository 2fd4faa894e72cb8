package events

import (
	"reflect"
	"testing"
)

// FuzzFastDecodeAgrees: the fast decoder (fastUnmarshal) and encoding/json (decodeStrict)
// accept the same data and decode it to the same payload, for every registered type. Decode
// takes the fast decoder's result where it succeeds, so a datum it accepted and
// encoding/json refused would let a malformed event through.
func FuzzFastDecodeAgrees(f *testing.F) {
	reg := NewRegistry(AllPayloads()...)
	names := reg.Names()
	f.Add(0, []byte(`{"sessionId":"s","title":"t","agent":"build"}`))
	f.Add(1, []byte(`{"items":[{"id":"a","dependencies":null}]}`))
	f.Add(2, []byte(`{"steps":[1,2]}`))
	f.Add(3, []byte(`{"title":`))
	f.Add(4, []byte(`{"SESSIONID":"s","sessionId":"t","sessionid":"u"}`))
	f.Add(5, []byte("{\"title\":\"\xff\\ud800\"}"))
	f.Add(6, []byte(`{"revision":1e2,"depth":-0,"steps":[{"id":"x","title":null}]}`))
	f.Add(7, []byte(`{"a":1,"a":2} `))
	f.Fuzz(func(t *testing.T, which int, data []byte) {
		typ := names[uint(which)%uint(len(names))]
		rec := Recorded{Event: Event{ID: DeriveID("f", 0), Type: typ, Data: data}, Stream: "s", Position: 7}
		tp := reg.types[typ]
		fast, fastErr := reg.decodeWith(fastUnmarshal, tp, rec)
		slow, slowErr := reg.decodeWith(decodeStrict, tp, rec)
		if (fastErr == nil) != (slowErr == nil) {
			t.Fatalf("%s %q: fast decoder says %v, encoding/json %v", typ, data, fastErr, slowErr)
		}
		if fastErr == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s %q: fast decoder gives %#v, encoding/json %#v", typ, data, fast, slow)
		}
	})
}
