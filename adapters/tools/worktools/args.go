package worktools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
)

// kind is a JSON type an argument may have.
type kind int

const (
	kString kind = iota
	// kRevision is a revision: a whole number from 0 up.
	kRevision
	// kStrings is an array of strings (dependencies).
	kStrings
	// kObjects is an array of objects whose fields are elem (steps, patches, items).
	kObjects
)

// field is one argument. The JSON Schema the model is shown and the decoder that checks a
// call are both generated from one table, so what is offered and what is accepted cannot
// drift apart.
type field struct {
	name     string
	kind     kind
	required bool
	enum     []string
	// code is the error code of a missing or unknown enum value; "" is invalid_argument.
	code string
	// elem is the fields of each object of a kObjects array.
	elem []field
	desc string
}

// shape is a tool's argument object.
type shape struct {
	fields []field
	// example is a complete, valid argument object, quoted in the fixes.
	example string
}

func find(fields []field, name string) *field {
	for i := range fields {
		if fields[i].name == name {
			return &fields[i]
		}
	}
	return nil
}

func names(fields []field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

// schema renders the JSON Schema of the argument object.
func (s shape) schema() json.RawMessage {
	b, err := json.Marshal(objectSchema(s.fields))
	if err != nil {
		panic(err) // maps of strings, slices and bools always marshal
	}
	return b
}

// orderedObject marshals its keys in order, so the schema reads in the table's order (a map
// would sort them).
type orderedObject []kv

type kv struct {
	key   string
	value any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func objectSchema(fields []field) orderedObject {
	props := orderedObject{}
	required := []string{}
	for _, f := range fields {
		props = append(props, kv{f.name, fieldSchema(f)})
		if f.required {
			required = append(required, f.name)
		}
	}
	return orderedObject{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}}
}

func fieldSchema(f field) orderedObject {
	var s orderedObject
	switch f.kind {
	case kRevision:
		s = orderedObject{{"type", "integer"}, {"minimum", 0}}
	case kStrings:
		s = orderedObject{{"type", "array"}, {"items", orderedObject{{"type", "string"}}}}
	case kObjects:
		s = orderedObject{{"type", "array"}, {"items", objectSchema(f.elem)}}
	default:
		s = orderedObject{{"type", "string"}}
		if len(f.enum) > 0 {
			s = append(s, kv{"enum", f.enum})
		}
	}
	if f.desc != "" {
		s = append(s, kv{"description", f.desc})
	}
	return s
}

// decode checks args against the shape and unmarshals them into dst, whose json tags are the
// field names. The checks are stricter than encoding/json, which would take "Action" for
// "action", keep the last of two equal keys, and ignore unknown ones: a model whose argument
// is silently dropped believes its change was made. JSON null means absent, as an omitted
// field; empty arguments are the empty object, which some providers send for a call without
// arguments.
func (s shape) decode(args json.RawMessage, dst any) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	if !utf8.Valid(trimmed) {
		return s.whole("arguments are not valid UTF-8")
	}
	members, err := readObject(trimmed)
	if err != nil {
		return s.whole(err.Error())
	}
	if err := checkMembers(members, s.fields, "", s.example); err != nil {
		return err
	}
	if err := json.Unmarshal(trimmed, dst); err != nil {
		// The checks above admit only what dst decodes; this keeps a table/struct mismatch
		// from passing unnoticed.
		return s.whole("arguments do not decode: " + err.Error())
	}
	return nil
}

func (s shape) whole(msg string) *domain.Error {
	return domain.Invalid("arguments", msg, "send one JSON object such as "+s.example)
}

type member struct {
	key string
	raw json.RawMessage
}

// readObject splits one JSON object into its members, in order, and refuses anything else:
// another JSON type, broken JSON, or data after the object.
func readObject(data []byte) ([]member, error) {
	if data[0] != '{' {
		return nil, fmt.Errorf("arguments must be a JSON object, not %s", jsonKind(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("arguments are not valid JSON: an object key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON (at %q): %v", key, err)
		}
		out = append(out, member{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("arguments have data after the JSON object")
	}
	return out, nil
}

func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch c := raw[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return "something else"
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// checkMembers checks one object's members against fields; path is where the object sits
// ("" for the arguments, "steps[2]" for a step).
func checkMembers(members []member, fields []field, path, example string) error {
	seen := map[string]bool{}
	for _, m := range members {
		f := find(fields, m.key)
		if f == nil {
			where := join(path, m.key)
			if m.key == "" {
				where = join(path, "arguments") // an empty key names nothing the model could fix by name
			}
			var fix string
			switch {
			case len(fields) == 0:
				fix = "send {}: this tool takes no arguments"
			case path == "":
				fix = fmt.Sprintf("remove %q; the accepted fields are %s (names are case-sensitive), e.g. %s",
					m.key, strings.Join(names(fields), ", "), example)
			default:
				fix = fmt.Sprintf("remove %q; the accepted fields here are %s (names are case-sensitive)",
					m.key, strings.Join(names(fields), ", "))
			}
			e := domain.Invalid(where, fmt.Sprintf("unknown field %q", m.key), fix)
			e.Valid = names(fields)
			return e
		}
		if seen[m.key] {
			return domain.Invalid(join(path, m.key), "appears twice", fmt.Sprintf("send %q once", m.key))
		}
		seen[m.key] = true
		if string(m.raw) == "null" {
			continue
		}
		if err := f.check(m.raw, join(path, m.key), example); err != nil {
			return err
		}
	}
	for _, f := range fields {
		if f.required && !present(members, f.name) {
			return f.refuse(join(path, f.name), "is missing")
		}
	}
	return nil
}

// present reports whether name was given with a value other than null.
func present(members []member, name string) bool {
	for _, m := range members {
		if m.key == name && string(m.raw) != "null" {
			return true
		}
	}
	return false
}

// refuse is f's error at path: the message starts with the field, so domain.Error does not
// repeat it.
func (f field) refuse(path, format string, args ...any) *domain.Error {
	code := f.code
	if code == "" {
		code = domain.CodeInvalidArgument
	}
	e := domain.NewError(code, path+" "+fmt.Sprintf(format, args...), f.fix())
	e.Field = path
	if len(f.enum) > 0 {
		e.Valid = slices.Clone(f.enum)
	}
	return e
}

// fix says what to send for f.
func (f field) fix() string {
	var what string
	switch f.kind {
	case kRevision:
		what = "a whole number from 0 up"
	case kStrings:
		what = "an array of strings"
	case kObjects:
		what = fmt.Sprintf("an array of objects with the fields %s", strings.Join(names(f.elem), ", "))
	default:
		what = "a string"
		if len(f.enum) > 0 {
			what = "one of " + strings.Join(f.enum, ", ")
		}
	}
	s := fmt.Sprintf("send %s as %s", f.name, what)
	if f.desc != "" {
		s += " (" + f.desc + ")"
	}
	if !f.required {
		s += ", or leave it out"
	}
	return s
}

// check validates one non-null value of f at path.
func (f field) check(raw json.RawMessage, path, example string) error {
	switch f.kind {
	case kRevision:
		if _, err := strconv.ParseUint(string(raw), 10, 64); err != nil {
			if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
				return f.refuse(path, "is %s, not a whole number from 0 up", raw)
			}
			return f.refuse(path, "must be a whole number, not %s", jsonKind(raw))
		}
	case kStrings:
		var list []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
			return f.refuse(path, "must be an array of strings, not %s", jsonKind(raw))
		}
		for i, v := range list {
			if len(v) == 0 || v[0] != '"' {
				return f.refuse(fmt.Sprintf("%s[%d]", path, i), "must be a string, not %s", jsonKind(v))
			}
		}
	case kObjects:
		var list []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
			return f.refuse(path, "must be an array of objects, not %s", jsonKind(raw))
		}
		for i, v := range list {
			at := fmt.Sprintf("%s[%d]", path, i)
			members, err := readObject(v)
			if err != nil {
				return f.refuse(at, "must be an object, not %s", jsonKind(v))
			}
			if err := checkMembers(members, f.elem, at, example); err != nil {
				return err
			}
		}
	default:
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return f.refuse(path, "must be a string, not %s", jsonKind(raw))
		}
		if len(f.enum) > 0 && !slices.Contains(f.enum, s) {
			return f.refuse(path, "is %q, not one of %s", s, strings.Join(f.enum, ", "))
		}
	}
	return nil
}
