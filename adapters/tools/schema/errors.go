package schema

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/zuno-run/zuno/domain"
)

// failure is one failed keyword at one place, ready to be ordered: the model is told about
// the first fault in its own text, as a person reading the call would find it.
type failure struct {
	loc  []string // instance location of the value at fault (of the member, for unknown and missing ones)
	kind jsonschema.ErrorKind
	name string // the unknown or missing member
	at   int    // offset in the arguments
	rank int    // among failures at one offset: a wrong type before anything else
}

// refusal turns the validator's error, and the faults of integer properties it leaves to
// this package (integers.go; err is nil when those are the only ones), into the
// model-readable refusal of the first fault.
func (s *Schema) refusal(data []byte, err error) error {
	var ve *jsonschema.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return s.whole("arguments do not validate: " + err.Error())
	}
	r := reader{data: data, nullAbsent: s.rules.NullIsAbsent, rec: true, pos: map[string]int{}}
	inst := r.value()
	var all []failure
	if ve != nil {
		for _, leaf := range leaves(ve, nil) {
			all = append(all, failures(leaf, r.pos)...)
		}
	}
	all = integerFaults(s.root, inst, []string{}, r.pos, all)
	if len(all) == 0 {
		return s.whole("arguments do not validate")
	}
	first := slices.MinFunc(all, func(a, b failure) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.rank, b.rank))
	})
	return s.explain(first, inst)
}

// leaves are the failures without causes: the keywords that failed. The alternatives of a
// oneOf or anyOf are not faults one by one; the keyword is.
func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch ve.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		return append(out, ve)
	}
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}

func failures(leaf *jsonschema.ValidationError, pos map[string]int) []failure {
	loc := leaf.InstanceLocation
	ptr := pointer(loc)
	switch k := leaf.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		var out []failure
		for _, name := range k.Properties {
			out = append(out, failure{loc: loc, kind: k, name: name, at: pos[ptr+"/"+name]})
		}
		return out
	case *kind.Required:
		var out []failure
		for i, name := range k.Missing {
			out = append(out, failure{loc: loc, kind: k, name: name, at: pos[ptr+"/}"], rank: 2 + i})
		}
		return out
	case *kind.Type:
		return []failure{{loc: loc, kind: k, at: pos[ptr]}}
	}
	return []failure{{loc: loc, kind: leaf.ErrorKind, at: pos[ptr], rank: 1}}
}

// explain writes the refusal of f: the message starts with the field's path, the fix says
// what to send.
func (s *Schema) explain(f failure, inst any) *domain.Error {
	n, v := s.root, inst
	for _, seg := range f.loc {
		n, v = step(n, v, seg)
	}
	switch k := f.kind.(type) {
	case *kind.AdditionalProperties:
		return s.unknown(n, f.loc, f.name)
	case *kind.Required:
		p := n.props[f.name]
		return s.refuse(p, pathString(append(slices.Clone(f.loc), f.name)), "is required")
	case *kind.Type:
		want := typeWord(n)
		if n == nil || n.typ == "" {
			want = strings.Join(k.Want, " or ")
		}
		return s.refuse(n, pathString(f.loc), "must be %s, not %s", want, describe(v))
	case *kind.Enum:
		e := s.refuse(n, pathString(f.loc), "is %s, not one of %s", show(v), strings.Join(n.enum, ", "))
		e.Valid = slices.Clone(n.enum)
		return e
	case *kind.Minimum, *kind.Maximum:
		return s.refuse(n, pathString(f.loc), "is %s, %s", show(v), bounds(n))
	case *kind.MinLength:
		if k.Want == 1 {
			return s.refuse(n, pathString(f.loc), "is empty")
		}
		return s.refuse(n, pathString(f.loc), "is shorter than %d characters", k.Want)
	default:
		return s.refuse(n, pathString(f.loc), "%s", k.LocalizedString(message.NewPrinter(language.English)))
	}
}

// step goes one segment down the schema and the instance together.
func step(n *node, v any, seg string) (*node, any) {
	var next *node
	if n != nil {
		next = n.props[seg]
		if n.items != nil {
			next = n.items
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return next, v[seg]
	case []any:
		var i int
		if _, err := fmt.Sscan(seg, &i); err == nil && i >= 0 && i < len(v) {
			return next, v[i]
		}
	}
	return next, nil
}

// unknown refuses a member the schema does not list.
func (s *Schema) unknown(obj *node, loc []string, name string) *domain.Error {
	at := append(slices.Clone(loc), name)
	if name == "" {
		at[len(at)-1] = "arguments" // an empty key names nothing the model could fix by name
	}
	var fix string
	switch {
	case obj == nil:
		fix = fmt.Sprintf("remove %q", name)
	case len(obj.order) == 0:
		fix = "send {}: this tool takes no arguments"
	case len(loc) == 0:
		fix = fmt.Sprintf("remove %q; the accepted arguments are %s (names are case-sensitive), e.g. %s",
			name, strings.Join(obj.order, ", "), s.rules.Example)
	default:
		fix = fmt.Sprintf("remove %q; the accepted fields here are %s (names are case-sensitive)",
			name, strings.Join(obj.order, ", "))
	}
	what := "argument"
	if len(loc) > 0 {
		what = "field"
	}
	e := domain.Invalid(pathString(at), fmt.Sprintf("unknown %s %q", what, name), fix)
	if obj != nil {
		e.Valid = slices.Clone(obj.order)
	}
	return e
}

// refuse is the refusal of the value at path, whose schema is n: the code and fix are its
// property's (an element of an array is fixed by sending the array right).
func (s *Schema) refuse(n *node, path, format string, args ...any) *domain.Error {
	code, fix := domain.CodeInvalidArgument, "send one JSON object such as "+s.rules.Example
	var enum []string
	if p := n.property(); p != nil {
		fix = s.fix(p)
		if c := p.rule.Code; c != "" {
			code = c
		}
		enum = p.enum
	}
	e := domain.NewError(code, path+" "+fmt.Sprintf(format, args...), fix)
	e.Field = path
	if len(enum) > 0 {
		e.Valid = slices.Clone(enum)
	}
	return e
}

// fix says what to send for the property p.
func (s *Schema) fix(p *node) string {
	if f := p.rule.Fix; f != "" {
		return f
	}
	out := fmt.Sprintf("send %q as %s", p.name, expected(p))
	if p.desc != "" {
		out += " (" + p.desc + ")"
	}
	if p.optional() {
		out += ", or leave it out"
	}
	return out
}

// typeWord names n's JSON type in the words of a message: "a string", "a whole number".
func typeWord(n *node) string {
	if n != nil && n.typ == "string" {
		return "a string"
	}
	return expected(n)
}

// expected names what n takes, in the words of a fix.
func expected(n *node) string {
	if n == nil {
		return "a JSON value"
	}
	switch n.typ {
	case "integer":
		switch {
		case n.min != "" && n.max != "":
			return fmt.Sprintf("a whole number from %s to %s", n.min, n.max)
		case n.min != "":
			return fmt.Sprintf("a whole number from %s up", n.min)
		}
		return "a whole number"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "object":
		return "an object"
	case "array":
		return "an array of " + plural(n.items)
	case "string":
		switch {
		case len(n.enum) > 0:
			return "one of " + strings.Join(n.enum, ", ")
		case n.minLength > 0:
			return "a non-empty string"
		}
		return "a string"
	}
	return "a JSON value"
}

func plural(items *node) string {
	if items == nil {
		return "values"
	}
	switch items.typ {
	case "object":
		return "objects with the fields " + strings.Join(items.order, ", ")
	case "string":
		return "strings"
	case "integer":
		return "whole numbers"
	}
	return "values"
}

func bounds(n *node) string {
	switch {
	case n.min != "" && n.max != "":
		return fmt.Sprintf("outside %s..%s", n.min, n.max)
	case n.min != "":
		return "below " + string(n.min)
	}
	return "above " + string(n.max)
}

// describe names a value's JSON type: "a string", "null".
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	}
	return "an object"
}

// show quotes a string value and writes any other as JSON.
func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
