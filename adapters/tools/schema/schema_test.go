package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
)

const sampleText = `{
  "type": "object",
  "properties": {
    "mode": {"type": "string", "enum": ["one", "two"], "description": "which"},
    "name": {"type": "string", "minLength": 1},
    "count": {"type": "integer", "minimum": 0, "maximum": 9},
    "size": {"type": "integer"},
    "at": {"type": "integer", "minimum": 0},
    "steps": {"type": "array", "items": {
      "type": "object",
      "properties": {"title": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
      "required": ["title"],
      "additionalProperties": false
    }}
  },
  "required": ["mode"],
  "additionalProperties": false
}`

func sample(t *testing.T, rules Rules) *Schema {
	t.Helper()
	rules.Example = `{"mode": "one"}`
	return MustCompile("sample", Compact(sampleText), rules)
}

// refused asserts a *domain.Error with code on field, whose message holds msg.
func refused(t *testing.T, s *Schema, args, code, field, msg string) *domain.Error {
	t.Helper()
	_, err := s.Validate(json.RawMessage(args))
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("%s: got %v, want a *domain.Error", args, err)
	}
	if de.Code() != code || de.Field != field || !strings.Contains(de.Message, msg) || de.Fix == "" {
		t.Errorf("%s: got %s (field %q), want %s on %q saying %q", args, de, de.Field, code, field, msg)
	}
	return de
}

func TestRawIsWhatIsCompiled(t *testing.T) {
	raw := []byte(sampleText) // indented on purpose: Raw must not reformat
	s := MustCompile("sample", raw, Rules{})
	if !bytes.Equal(s.Raw(), raw) {
		t.Fatalf("Raw changed the bytes")
	}
	raw[0] = ' ' // the schema keeps its own copy
	if s.Raw()[0] != '{' {
		t.Fatal("Raw aliases the caller's bytes")
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, c := range []struct {
		text  string
		rules Rules
		want  string
	}{
		{`{"type": "array"}`, Rules{}, "must be an object"},
		{`{"type": "object", "minimum": "x"}`, Rules{}, "minimum"},
		{`{"type": "object"`, Rules{}, "schema of t"},
		{sampleText, Rules{Fields: map[string]Field{"nmae": {MaxBytes: 1}}}, `"nmae": no such property`},
		{sampleText, Rules{Fields: map[string]Field{"steps[].title": {MaxBytes: 1}}}, ""},
		{sampleText, Rules{Choice: &Choice{By: "name"}}, "not an enum"},
		{sampleText, Rules{Choice: &Choice{By: "mode", Takes: map[string][]string{"one": {}}}}, `"two" takes nothing`},
		{sampleText, Rules{Choice: &Choice{By: "mode", Takes: map[string][]string{"one": {"nope"}, "two": {}}}}, `unknown "nope"`},
	} {
		_, err := Compile("t", []byte(c.text), c.rules)
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.rules, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40s %+v: got %v, want %q", c.text, c.rules, err, c.want)
		}
	}
}

// The first fault in the text is the one reported, as a person reading the call finds it.
func TestFirstFaultInDocumentOrder(t *testing.T) {
	s := sample(t, Rules{})
	bad := domain.CodeInvalidArgument
	refused(t, s, `{"zz":1,"mode":7}`, bad, "zz", `unknown argument "zz"`)
	refused(t, s, `{"mode":7,"zz":1}`, bad, "mode", "must be a string, not a number")
	refused(t, s, `{"count":10}`, bad, "count", "is 10, outside 0..9")
	refused(t, s, `{"count":1,"name":""}`, bad, "name", "is empty")
	refused(t, s, `{"mode":"one","steps":[{"title":"a"},{"tags":["x",2]}]}`, bad, "steps[1].tags[1]", "must be a string, not a number")
	refused(t, s, `{"mode":"one","steps":[{"title":"a"},{"tags":[]}]}`, bad, "steps[1].title", "is required")
	de := refused(t, s, `{"mode":"one","steps":[{"title":"a","Title":"b"}]}`, bad, "steps[0].Title", `unknown field "Title"`)
	if !strings.Contains(de.Fix, "accepted fields here are title, tags") {
		t.Errorf("fix %q", de.Fix)
	}
	de = refused(t, s, `{"mode":"three"}`, bad, "mode", `is "three", not one of one, two`)
	if strings.Join(de.Valid, ",") != "one,two" || !strings.Contains(de.Fix, `send "mode" as one of one, two (which)`) {
		t.Errorf("valid %v fix %q", de.Valid, de.Fix)
	}
	refused(t, s, `{"mode":"one","mode":"two"}`, bad, "mode", "appears twice")
	refused(t, s, `{"mode":"one","steps":[{"title":"a","title":"a"}]}`, bad, "steps[0].title", "appears twice")
	refused(t, s, `{"mode":"one"} {}`, bad, "arguments", "data after the JSON object")
	refused(t, s, `{"mode":"one",}`, bad, "arguments", "not valid JSON")
}

func TestRules(t *testing.T) {
	s := sample(t, Rules{StrictText: true, Fields: map[string]Field{
		"mode":          {Code: domain.CodeInvalidAction},
		"name":          {MaxBytes: 4},
		"size":          {Numbers: Saturating},
		"at":            {Numbers: Integral},
		"steps[].title": {AllowNUL: true, MaxBytes: 2},
	}})
	refused(t, s, `{}`, domain.CodeInvalidAction, "mode", "is required")
	refused(t, s, `{"mode":1}`, domain.CodeInvalidAction, "mode", "must be a string")
	refused(t, s, `{"mode":"one","name":"héllo"}`, domain.CodeInvalidArgument, "name", "is 6 bytes, over the 4-byte limit")
	refused(t, s, `{"mode":"one","name":"a\u0000"}`, domain.CodeInvalidArgument, "name", "NUL")
	refused(t, s, "{\"mode\":\"one\",\"name\":\"\xff\"}", domain.CodeInvalidArgument, "name", "not valid UTF-8")
	refused(t, s, `{"mode":"one","name":"\udc00"}`, domain.CodeInvalidArgument, "name", "unpaired UTF-16 surrogate")
	refused(t, s, `{"mode":"one","steps":[{"title":"abc"}]}`, domain.CodeInvalidArgument, "steps[0].title", "over the 2-byte limit")
	refused(t, s, `{"mode":"one","count":1.0}`, domain.CodeInvalidArgument, "count", "without a fraction or exponent")
	refused(t, s, `{"mode":"one","at":1e300}`, domain.CodeInvalidArgument, "at", "outside the 64-bit whole numbers")
	for _, ok := range []string{`{"mode":"one","steps":[{"title":"\u0000"}],"name":"\ud83d\ude00"}`, `{"mode":"two","at":12.0,"size":-1e300}`} {
		if _, err := s.Validate(json.RawMessage(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	v, _ := s.Validate(json.RawMessage(`{"mode":"two","at":1.2e1,"size":1e300}`))
	if at, exact := Int64(v["at"]); at != 12 || !exact {
		t.Errorf("at = %d %v", at, exact)
	}
	if size, exact := Int64(v["size"]); size != 1<<63-1 || exact {
		t.Errorf("size = %d %v", size, exact)
	}
}

func TestNullAndEmpty(t *testing.T) {
	strict := sample(t, Rules{})
	refused(t, strict, ``, domain.CodeInvalidArgument, "arguments", "empty")
	refused(t, strict, `null`, domain.CodeInvalidArgument, "arguments", "not null")
	refused(t, strict, `{"mode":"one","name":null}`, domain.CodeInvalidArgument, "name", "not null")
	lenient := sample(t, Rules{EmptyIsObject: true, NullIsEmpty: true, NullIsAbsent: true})
	refused(t, lenient, `  `, domain.CodeInvalidArgument, "mode", "is required")
	refused(t, lenient, `null`, domain.CodeInvalidArgument, "mode", "is required")
	refused(t, lenient, `{"mode":null}`, domain.CodeInvalidArgument, "mode", "is required")
	refused(t, lenient, `{"mode":"one","name":null,"name":"x"}`, domain.CodeInvalidArgument, "name", "appears twice")
	refused(t, lenient, "{\"mode\":\"one\",\"steps\":[{\"title\":\"\xff\"}]}", domain.CodeInvalidArgument, "arguments", "not valid UTF-8")
	if v, err := lenient.Validate(json.RawMessage(`{"mode":"one","name":null,"steps":[{"title":"a","tags":null}]}`)); err != nil || len(v) != 2 {
		t.Errorf("nulls: %v %v", v, err)
	}
}

func TestChoice(t *testing.T) {
	s := sample(t, Rules{NullIsAbsent: true, Choice: &Choice{By: "mode",
		Takes: map[string][]string{"one": {}, "two": {"name", "count", "at"}},
		Needs: map[string]string{"two": "name"}}})
	de := refused(t, s, `{"mode":"one","count":1}`, domain.CodeInvalidArgument, "count", "count does not apply to mode one")
	if de.Fix != "remove it; mode one takes no other arguments" {
		t.Errorf("fix %q", de.Fix)
	}
	de = refused(t, s, `{"mode":"two","size":1,"name":"n"}`, domain.CodeInvalidArgument, "size", "does not apply to mode two")
	if de.Fix != "remove it; mode two takes name, count and at" {
		t.Errorf("fix %q", de.Fix)
	}
	refused(t, s, `{"mode":"two","name":"  "}`, domain.CodeInvalidArgument, "name", "name is required for mode two")
	if _, err := s.Validate(json.RawMessage(`{"mode":"two","name":"n","count":null}`)); err != nil {
		t.Error(err)
	}
}

// A schema beyond the subset the built-in tools use (as an MCP server may send) is validated
// whole, and its faults are typed errors too.
func TestFullDraft(t *testing.T) {
	s, err := Compile("mcp_sample", []byte(`{"type":"object","properties":{
		"id":{"type":"string","pattern":"^[a-z]+$"},
		"n":{"oneOf":[{"type":"integer"},{"type":"string","format":"date"}]}},
		"additionalProperties":false}`), Rules{Example: `{"id":"abc"}`})
	if err != nil {
		t.Fatal(err)
	}
	refused(t, s, `{"id":"ABC"}`, domain.CodeInvalidArgument, "id", "does not match pattern")
	refused(t, s, `{"n":true}`, domain.CodeInvalidArgument, "n", "oneOf")
	if _, err := s.Validate(json.RawMessage(`{"id":"abc","n":3}`)); err != nil {
		t.Error(err)
	}
}

func TestFix(t *testing.T) {
	s := sample(t, Rules{Fields: map[string]Field{"count": {Fix: "count the lines"}}})
	for path, want := range map[string]string{
		"mode":           `send "mode" as one of one, two (which)`,
		"count":          "count the lines",
		"at":             `send "at" as a whole number from 0 up, or leave it out`,
		"steps":          `send "steps" as an array of objects with the fields title, tags, or leave it out`,
		"steps[0].title": `send "title" as a string`,
		"nothing":        `send one JSON object such as {"mode": "one"}`,
	} {
		if got := s.Fix(path); got != want {
			t.Errorf("Fix(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	s := MustCompile("d", Compact(`{"type":"object","properties":{
		"rev":{"type":"integer","minimum":0},"name":{"type":"string"},"on":{"type":"boolean"},
		"list":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}}},
		"additionalProperties":false}`), Rules{NullIsAbsent: true})
	type item struct {
		ID   *string   `json:"id"`
		Tags *[]string `json:"tags"`
	}
	type args struct {
		Rev  *uint64 `json:"rev"`
		Name string  `json:"name"`
		On   bool    `json:"on"`
		List []item  `json:"list"`
		Skip string  `json:"-"`
	}
	for _, in := range []string{`{"rev":-0,"name":"a\ud83d\ude00","on":true,"list":[{"id":"x","tags":[]},{"tags":["a"]},{"id":null}]}`,
		`{"rev":18446744073709551615}`, `{}`, `{"name":null}`} {
		var got, want args
		if err := s.Decode(json.RawMessage(in), &got); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if err := json.Unmarshal([]byte(strings.Replace(in, "-0", "0", 1)), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", in, got, want)
		}
	}
	var small struct {
		Rev int8 `json:"rev"`
	}
	if err := s.Decode(json.RawMessage(`{"rev":300}`), &small); err == nil || !strings.Contains(err.Error(), "do not decode") {
		t.Errorf("overflow: %v", err)
	}
	var missing struct{}
	if err := s.Decode(json.RawMessage(`{"name":"x"}`), &missing); err == nil {
		t.Error("a member without a field passed")
	}
}

// A MustCompile'd declaration compiles its validator at first use (docs/tools.md, "Argument
// schemas"): a pattern the validator refuses does not stop the package's init, but
// CompileDeferred names it, and validating against it panics as a programming error.
func TestMustCompileDefersTheValidator(t *testing.T) {
	s := MustCompile("deferred_bad", []byte(`{"type":"object","properties":{"p":{"type":"string","pattern":"("}}}`), Rules{})
	err := CompileDeferred()
	if err == nil || !strings.Contains(err.Error(), "deferred_bad") {
		t.Fatalf("CompileDeferred = %v, want the bad schema named", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Validate against a schema that does not compile did not panic")
		}
	}()
	s.Validate(json.RawMessage(`{"p":"x"}`))
}

// Compile, used for schemas from outside (MCP servers), still refuses at once.
func TestCompileRefusesAtOnce(t *testing.T) {
	if _, err := Compile("bad", []byte(`{"type":"object","properties":{"p":{"type":"string","pattern":"("}}}`), Rules{}); err == nil {
		t.Fatal("Compile accepted a pattern the validator refuses")
	}
}
