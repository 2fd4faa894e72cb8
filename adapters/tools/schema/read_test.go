package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// readsAsJSON reports whether the reader takes data as one JSON value.
func readsAsJSON(data []byte) bool {
	r := reader{data: data}
	r.value()
	r.skipSpace()
	return !r.broken && r.i == len(data)
}

// FuzzReader: the reader, which replaces a separate encoding/json syntax pass, takes exactly
// the documents encoding/json takes, and decodes them to the same values.
func FuzzReader(f *testing.F) {
	for _, s := range []string{``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00\n"}`, `-0.5e+3`, `01`, `1.`,
		`1e`, `-`, `"\u12"`, `"\x"`, "\"\x01\"", `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1}}`, `tru`, `nul`, `"a`, "\"\xff\"",
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000), `{"a":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := readsAsJSON(data), json.Valid(data); got != want {
			t.Fatalf("%q: reader %v, encoding/json %v", data, got, want)
		}
		if !json.Valid(data) {
			return
		}
		r := reader{data: data}
		got, _ := json.Marshal(r.value())
		var v any
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(v)
		if string(got) != string(want) {
			t.Fatalf("%q: read %s, encoding/json %s", data, got, want)
		}
	})
}
