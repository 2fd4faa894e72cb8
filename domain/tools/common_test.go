package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
)

// TestSplitCommon: intent (seeds: a common tool parameter, only a UI label) is taken off every
// call before its tool's validator; everything else reaches the validator as it was sent.
func TestSplitCommon(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		code           string
	}{
		{"intent is taken off", `{"command":"go test ./...","intent":"Run the tests"}`, `{"command":"go test ./..."}`, ""},
		{"intent first", `{"intent":"x","path":"a"}`, `{"path":"a"}`, ""},
		{"intent alone", `{"intent":"look"}`, `{}`, ""},
		{"members keep their bytes and order", `{ "b" : [1, 2], "intent":"x", "a":"\u00e9" }`, `{"b":[1, 2],"a":"\u00e9"}`, ""},
		{"duplicates of other keys stay for the validator", `{"a":1,"a":2,"intent":"x"}`, `{"a":1,"a":2}`, ""},
		{"no intent: unchanged", `{"command":"echo intent"}`, `{"command":"echo intent"}`, ""},
		{"intent as a value only: unchanged", `{"command":"intent"}`, `{"command":"intent"}`, ""},
		{"nested intent is not the common parameter", `{"steps":[{"intent":"x"}]}`, `{"steps":[{"intent":"x"}]}`, ""},
		{"other spelling is not the parameter", `{"Intent":"x"}`, `{"Intent":"x"}`, ""},
		{"not an object: unchanged", `["intent"]`, `["intent"]`, ""},
		{"invalid JSON: unchanged for the validator", `{"intent":"x"`, `{"intent":"x"`, ""},
		{"empty", ``, ``, ""},
		{"intent not a string", `{"intent":3}`, "", domain.CodeInvalidArgument},
		{"intent null", `{"intent":null,"a":1}`, "", domain.CodeInvalidArgument},
		{"intent twice", `{"intent":"a","intent":"b"}`, "", domain.CodeInvalidArgument},
	} {
		got, err := tools.SplitCommon(tc.in)
		if tc.code != "" {
			if domain.CodeOf(err) != tc.code {
				t.Errorf("%s: err %v, want %s", tc.name, err, tc.code)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// FuzzSplitCommon: arbitrary argument text never panics; a result without error is the input
// itself or a JSON object without a top-level intent, and its other members are unchanged.
func FuzzSplitCommon(f *testing.F) {
	for _, s := range []string{`{"intent":"x","a":1}`, `{"a":{"intent":1}}`, `{"intent":"a","intent":"b"}`, `["intent"]`, `{"intent":null}`, `{`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := tools.SplitCommon(in)
		if err != nil {
			if domain.CodeOf(err) != domain.CodeInvalidArgument {
				t.Fatalf("%q: %v", in, err)
			}
			return
		}
		if out == in {
			return
		}
		var before, after map[string]json.RawMessage
		if json.Unmarshal([]byte(out), &after) != nil || json.Unmarshal([]byte(in), &before) != nil {
			t.Fatalf("%q became %q, not a JSON object", in, out)
		}
		if _, ok := after[tools.ParamIntent]; ok {
			t.Fatalf("%q kept intent: %q", in, out)
		}
		delete(before, tools.ParamIntent)
		if len(before) != len(after) {
			t.Fatalf("%q lost members: %q", in, out)
		}
	})
}
