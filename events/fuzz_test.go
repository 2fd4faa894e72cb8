package events

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// FuzzDecode feeds stored events of any type and data to the registry: decoding never panics,
// and every failure is one of the two typed errors, naming the type and position.
func FuzzDecode(f *testing.F) {
	reg := NewRegistry(AllPayloads()...)
	f.Add("session.created.1", []byte(`{"sessionId":"s","title":"t","agent":"build"}`))
	f.Add("work.todo.updated.1", []byte(`{"items":[{"id":"a","dependencies":null}]}`))
	f.Add("work.plan.created.1", []byte(`{"steps":[1,2]}`))
	f.Add("nope.1", []byte(`{}`))
	f.Add("session.created.1", []byte(`{"title":`))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		rec := Recorded{Event: Event{ID: DeriveID("f", 0), Type: typ, Data: data}, Stream: "s", Position: 7}
		p, err := reg.Decode(rec)
		var unknown *UnknownEventTypeError
		var malformed *MalformedEventError
		switch {
		case err == nil:
			if p == nil || p.EventType() != typ {
				t.Fatalf("decoded %T for type %q", p, typ)
			}
		case errors.As(err, &unknown):
			if unknown.Type != typ || unknown.Position != 7 || reg.Known(typ) {
				t.Fatalf("unknown-type error %+v for %q", unknown, typ)
			}
		case errors.As(err, &malformed):
			if malformed.Type != typ || malformed.Position != 7 {
				t.Fatalf("malformed error %+v", malformed)
			}
		default:
			t.Fatalf("untyped error %T: %v", err, err)
		}
	})
}

// FuzzValidateAppend: validation never panics and refuses with *InvalidAppendError only.
func FuzzValidateAppend(f *testing.F) {
	f.Add("session-1", DeriveID("c", 0), "session.created.1", []byte(`{}`))
	f.Add("", "x", "bad", []byte(`{`))
	f.Fuzz(func(t *testing.T, stream, id, typ string, data []byte) {
		err := ValidateAppend(stream, []Event{{ID: id, Type: typ, Data: data}})
		var invalid *InvalidAppendError
		if err != nil && !errors.As(err, &invalid) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		if err == nil && (stream == "" || !ValidTypeName(typ) || !jsonValid(data) || !canonicalUUID(id)) {
			t.Fatalf("accepted stream %q id %q type %q data %q", stream, id, typ, data)
		}
	})
}

// typeNameOracle is the grammar ValidTypeName implements, as a regular expression.
var typeNameOracle = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+\.[1-9][0-9]*$`)

// FuzzValidTypeName: the byte loop accepts exactly what the grammar's expression does.
func FuzzValidTypeName(f *testing.F) {
	for _, name := range []string{"session.created.1", "a.b.10", "a.b.0", "a.1", "a..b.1", "A.b.1", "a.b.1\n",
		"a_1.b_.22", ".a.b.1", "a.b.1.", "a.b.01", "a.b.c", "", "é.b.1"} {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidTypeName(name), typeNameOracle.MatchString(name); got != want {
			t.Fatalf("ValidTypeName(%q) = %v, the grammar says %v", name, got, want)
		}
	})
}

// FuzzCanonicalUUID: accepted exactly when the uuid package parses the id and writes it back
// unchanged.
func FuzzCanonicalUUID(f *testing.F) {
	for _, id := range []string{DeriveID("c", 0), strings.ToUpper(DeriveID("c", 0)), "{" + DeriveID("c", 0) + "}",
		strings.ReplaceAll(DeriveID("c", 0), "-", ""), "urn:uuid:" + DeriveID("c", 0), "", "g" + DeriveID("c", 0)[1:]} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		u, err := uuid.Parse(id)
		if got, want := canonicalUUID(id), err == nil && u.String() == id; got != want {
			t.Fatalf("canonicalUUID(%q) = %v, want %v", id, got, want)
		}
	})
}
