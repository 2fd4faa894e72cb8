package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/zuno-run/zuno/domain"
)

// integersText has integer nodes of every shape integers.go relaxes (plain, bounded by
// integers, bounded by a fraction and an exponent, negative, in items, in objects in items)
// and one it leaves to the validator (inside anyOf).
const integersText = `{
  "type": "object",
  "properties": {
    "plain": {"type": "integer"},
    "count": {"type": "integer", "minimum": 0, "maximum": 9},
    "frac": {"type": "integer", "minimum": 0.5, "maximum": 1e2},
    "neg": {"type": "integer", "minimum": -9223372036854775808, "maximum": -3},
    "huge": {"type": "integer", "maximum": 1e30},
    "list": {"type": "array", "items": {"type": "integer", "minimum": 1}},
    "rows": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}}},
    "either": {"anyOf": [{"type": "integer", "minimum": 3}, {"type": "string"}]},
    "name": {"type": "string"}
  },
  "additionalProperties": false
}`

// asWritten compiles integersText taking every integral number, as JSON Schema does (the
// Rules' stricter Numbers are tested in TestRules).
func asWritten(t testing.TB) *Schema {
	t.Helper()
	fields := map[string]Field{}
	for _, f := range []string{"plain", "count", "frac", "neg", "huge", "list", "rows[].n"} {
		fields[f] = Field{Numbers: Saturating}
	}
	return MustCompile("ints", Compact(integersText), Rules{Example: `{"count": 1}`, Fields: fields})
}

// oracle is the validator compiling integersText as written: what Zuno's relaxed schema
// and integers.go together must agree with.
func oracle(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(integersText))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("zuno:oracle.json", doc); err != nil {
		t.Fatal(err)
	}
	return c.MustCompile("zuno:oracle.json")
}

// agree checks one instance: both accept it, or both refuse it at the same place.
func agree(t *testing.T, s *Schema, want *jsonschema.Schema, args string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil || !json.Valid([]byte(args)) {
		return // not an instance; the reader's refusals are tested elsewhere
	}
	if _, ok := inst.(map[string]any); !ok {
		return
	}
	_, got := s.Validate(json.RawMessage(args))
	wantErr := want.Validate(inst)
	if (got == nil) != (wantErr == nil) {
		t.Fatalf("%s: Zuno says %v, the validator on the schema as written says %v", args, got, wantErr)
	}
	if got == nil {
		return
	}
	var de *domain.Error
	if !errors.As(got, &de) {
		t.Fatalf("%s: %v is not a *domain.Error", args, got)
	}
	if duplicateKey(args) {
		return
	}
	var ve *jsonschema.ValidationError
	errors.As(wantErr, &ve)
	places := map[string]bool{}
	for _, leaf := range leaves(ve, nil) {
		faultPlaces(leaf, places)
	}
	if !places[de.Field] && !(de.Field == "arguments" && places[""]) {
		t.Fatalf("%s: Zuno refuses %q (%s), the validator at %v", args, de.Field, de.Message, places)
	}
}

// faultPlaces are the fields a refusal of the validator's leaf may name: the value at
// fault, or the unknown or missing member of an object.
func faultPlaces(leaf *jsonschema.ValidationError, into map[string]bool) {
	loc := leaf.InstanceLocation
	into[pathString(loc)] = true
	var names []string
	switch k := leaf.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		names = k.Properties
	case *kind.Required:
		names = k.Missing
	}
	for _, name := range names {
		into[pathString(append(loc[:len(loc):len(loc)], name))] = true
	}
}

func duplicateKey(args string) bool {
	_, err := (&Schema{}).read([]byte(args))
	return err != nil
}

func TestIntegersAsValidator(t *testing.T) {
	s := asWritten(t)
	want := oracle(t)
	for _, args := range []string{
		`{}`, `{"plain":0}`, `{"plain":-0}`, `{"plain":1.5}`, `{"plain":12.0}`, `{"plain":1.2e1}`, `{"plain":1.25e1}`,
		`{"plain":1e400}`, `{"plain":"1"}`, `{"plain":null}`, `{"plain":true}`, `{"plain":[1]}`,
		`{"count":0}`, `{"count":9}`, `{"count":10}`, `{"count":-1}`, `{"count":9.0}`, `{"count":9.5}`, `{"count":-0.0}`,
		`{"count":9223372036854775807}`, `{"count":9223372036854775808}`, `{"count":-9223372036854775809}`,
		`{"frac":0}`, `{"frac":1}`, `{"frac":100}`, `{"frac":101}`, `{"frac":1e2}`, `{"frac":0.5}`,
		`{"neg":-3}`, `{"neg":-2}`, `{"neg":-9223372036854775808}`, `{"neg":-9223372036854775809}`, `{"neg":-1e19}`,
		`{"huge":999999999999999999999999999999}`, `{"huge":1e30}`, `{"huge":1000000000000000000000000000001}`,
		`{"list":[1,2,3]}`, `{"list":[1,0,3]}`, `{"list":[1,2.5]}`, `{"list":["a",0]}`, `{"list":[]}`,
		`{"rows":[{"n":5},{"n":6}]}`, `{"rows":[{"n":4.5}]}`, `{"rows":[{"n":1},{"m":9}]}`,
		`{"either":3}`, `{"either":2}`, `{"either":3.5}`, `{"either":"x"}`,
		`{"count":10,"name":5}`, `{"name":5,"count":10}`, `{"count":10,"plain":0.5}`, `{"plain":0.5,"count":10}`,
		`{"count":1,"extra":true}`, `{"extra":true,"count":11}`,
	} {
		agree(t, s, want, args)
	}
}

// The first fault in the text is reported, whether the validator or integers.go found it.
func TestIntegerFaultsInTextOrder(t *testing.T) {
	s := asWritten(t)
	bad := domain.CodeInvalidArgument
	refused(t, s, `{"count":10,"name":5}`, bad, "count", "is 10, outside 0..9")
	refused(t, s, `{"name":5,"count":10}`, bad, "name", "must be a string, not a number")
	refused(t, s, `{"plain":0.5,"count":10}`, bad, "plain", "must be a whole number, not a number")
	refused(t, s, `{"extra":true,"count":11}`, bad, "extra", `unknown argument "extra"`)
	refused(t, s, `{"count":11,"extra":true}`, bad, "count", "outside 0..9")
	refused(t, s, `{"list":[1,0]}`, bad, "list[1]", "is 0, below 1")
	refused(t, s, `{"rows":[{"n":1},{"n":6}]}`, bad, "rows[1].n", "is 6, above 5")
	refused(t, s, `{"count":9.5}`, bad, "count", "must be a whole number from 0 to 9, not a number")
	refused(t, s, `{"count":1e400}`, bad, "count", "outside 0..9")
}

// FuzzIntegersAsValidator: any number written into any integer place is accepted or
// refused as the validator on the schema as written decides, at the same place.
func FuzzIntegersAsValidator(f *testing.F) {
	for _, seed := range []string{"0", "-0", "1.5", "12.0", "1e400", "-1e400", "9223372036854775808", "0.5", "1e2", "-3", "1E+1", "5e-1"} {
		f.Add(seed, uint8(0))
	}
	s := asWritten(f)
	want := oracle(f)
	places := []string{`{"plain":%s}`, `{"count":%s}`, `{"frac":%s}`, `{"neg":%s}`, `{"huge":%s}`, `{"list":[1,%s]}`,
		`{"rows":[{"n":%s}]}`, `{"either":%s}`, `{"count":%s,"name":1}`}
	f.Fuzz(func(t *testing.T, num string, at uint8) {
		if len(num) > 40 || !json.Valid([]byte(num)) || bytes.ContainsAny([]byte(num), "\"[]{}tfn, \t\r\n") {
			return
		}
		agree(t, s, want, strings.Replace(places[int(at)%len(places)], "%s", num, 1))
	})
}
