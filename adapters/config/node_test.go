package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string) Node {
	t.Helper()
	n, _, err := ParseJSONC("test.json", []byte(src))
	if err != nil {
		t.Fatalf("parse %s: %v", src, err)
	}
	return n
}

func compact(t *testing.T, n Node) string {
	t.Helper()
	b, err := n.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docs/config.md: a key both layers set is replaced in the base layer's position, a key only
// the overlay sets is appended after the base's keys; order holds at every level.
func TestMerge(t *testing.T) {
	for _, tc := range []struct{ name, base, over, want string }{
		{"overlay-only keys are appended after the base's", `{"b":1,"a":2}`, `{"c":3}`, `{"b":1,"a":2,"c":3}`},
		{"a key both set keeps the base's position", `{"b":1,"a":2,"c":3}`, `{"a":9}`, `{"b":1,"a":9,"c":3}`},
		{"the seed's catch-all stays first, the overlay's exception lands after it",
			`{"permission":{"rules":{"shell":{"*":"ask","git *":"allow"}}}}`,
			`{"permission":{"rules":{"shell":{"git push*":"deny"}}}}`,
			`{"permission":{"rules":{"shell":{"*":"ask","git *":"allow","git push*":"deny"}}}}`},
		{"the seed's $HOME/.ssh deny is not sorted above the catch-all",
			`{"read":{"*":"allow"}}`, `{"read":{"$HOME/.ssh/*":"deny"}}`, `{"read":{"*":"allow","$HOME/.ssh/*":"deny"}}`},
		{"nested objects merge at every level", `{"s":{"a":{"x":1,"y":2},"b":1}}`, `{"s":{"a":{"y":3,"z":4}}}`,
			`{"s":{"a":{"x":1,"y":3,"z":4},"b":1}}`},
		{"arrays are values: replaced whole", `{"w":["/a","/b"]}`, `{"w":["/c"]}`, `{"w":["/c"]}`},
		{"an object over a scalar replaces it", `{"k":1}`, `{"k":{"x":1}}`, `{"k":{"x":1}}`},
		{"a scalar over an object replaces it", `{"k":{"x":1}}`, `{"k":false}`, `{"k":false}`},
		{"null is a value like any other", `{"k":1}`, `{"k":null}`, `{"k":null}`},
		{"an empty overlay changes nothing", `{"b":1,"a":2}`, `{}`, `{"b":1,"a":2}`},
		{"an empty base takes the overlay's order", `{}`, `{"z":1,"a":2}`, `{"z":1,"a":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := compact(t, Merge(mustParse(t, tc.base), mustParse(t, tc.over))); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseJSONC(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"line comments", "{\n// a comment\n\"a\": 1 // trailing\n}", `{"a":1}`},
		{"block comments", `{/* x */"a"/* y */:/* z */1}`, `{"a":1}`},
		{"trailing commas in objects and arrays", `{"a":[1,2,],"b":{"c":1,},}`, `{"a":[1,2],"b":{"c":1}}`},
		{"// inside a string survives", `{"url":"https://example.com//x"}`, `{"url":"https://example.com//x"}`},
		{"/* inside a string survives", `{"glob":"src/*/x/*"}`, `{"glob":"src/*/x/*"}`},
		{"an escaped quote does not end the string early", `{"a":"say \"//hi\""}`, `{"a":"say \"//hi\""}`},
		{"a key spelled with escapes is the key it spells", `{"\u0073hell":"x"}`, `{"shell":"x"}`},
		{"keys keep their written order", `{"z":1,"a":2,"m":3}`, `{"z":1,"a":2,"m":3}`},
		{"a byte-order-free empty object", " {} ", `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := compact(t, mustParse(t, tc.src)); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// Every parse error is an *Error naming the file, the line and the column.
func TestParseJSONCErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src  string
		line, col  int
		msgContain string
	}{
		{"a missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "invalid character"},
		{"an unterminated comment", "{\"a\":1 /* never closed", 1, 8, ""},
		{"a duplicate key, at the second one", "{\n\"a\": 1,\n  \"a\": 2\n}", 3, 3, `key "a" is set twice`},
		{"a duplicate nested key", "{\"s\": {\n \"mode\": \"x\",\n \"mode\": \"y\"}}", 3, 2, `key "mode" is set twice`},
		{"a top level that is not an object", `["a"]`, 1, 1, "not a JSON object"},
		{"an empty file", ``, 1, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseJSONC("/etc/zuno/x.json", []byte(tc.src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want *Error, got %v", err)
			}
			if e.Code() != CodeBadConfig || e.Source != "/etc/zuno/x.json" || e.Line != tc.line || e.Column != tc.col {
				t.Fatalf("got code %s source %s at %d:%d (%v), want bad_config at %d:%d", e.Code(), e.Source, e.Line, e.Column, err, tc.line, tc.col)
			}
			if !strings.Contains(err.Error(), tc.msgContain) || !strings.Contains(err.Error(), "/etc/zuno/x.json") {
				t.Fatalf("message %q lacks %q or the file", err, tc.msgContain)
			}
		})
	}
}

// FuzzParseJSONC: whatever the input, parsing never panics, and what parses writes back as
// valid JSON that parses to the same document (comments never eat string content).
func FuzzParseJSONC(f *testing.F) {
	for _, s := range []string{`{"a":"//x"}`, "{// c\n\"a\":1,}", `{"a":{"b":[1,2,],}}`, `{"a":"/*"}/**/`, `{"\u0061":1}`, `{"a":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		n, _, err := ParseJSONC("f", []byte(src))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		b, err := n.MarshalJSON()
		if err != nil || !json.Valid(b) {
			t.Fatalf("%q wrote %q (%v)", src, b, err)
		}
		again, _, err := ParseJSONC("f", b)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b, err)
		}
		if b2, _ := again.MarshalJSON(); string(b2) != string(b) {
			t.Fatalf("round trip changed %q to %q", b, b2)
		}
	})
}
