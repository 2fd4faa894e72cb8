package schema

import (
	"fmt"
	"slices"
	"strings"
)

// Rules is what a tool's JSON Schema cannot say, kept beside it. The schema the model is
// shown stays in the subset every provider accepts; these rules refine it and never admit
// what the schema refuses.
type Rules struct {
	// Example is a complete, valid argument object, quoted in the fix of an error about the
	// object as a whole or an unknown argument.
	Example string
	// EmptyIsObject takes empty arguments as {}: some providers send nothing for a call
	// without arguments.
	EmptyIsObject bool
	// NullIsEmpty takes the arguments null as {}.
	NullIsEmpty bool
	// NullIsAbsent takes a member whose value is null, at any depth, as left out.
	NullIsAbsent bool
	// StrictText refuses, at their field, strings that encoding/json would silently repair
	// into U+FFFD (invalid UTF-8, unpaired UTF-16 surrogate escapes: a path that names
	// nothing) and strings holding U+0000 unless the field's AllowNUL says otherwise.
	// Without it, invalid UTF-8 anywhere refuses the arguments as a whole.
	StrictText bool
	// Fields refines properties by path: "name" for an argument, "steps[].title" for a
	// property of the objects of an array.
	Fields map[string]Field
	// Choice, when set, lets one property choose which others apply.
	Choice *Choice
}

// Field refines one property.
type Field struct {
	// Code is the error code of every refusal of this property; "" is invalid_argument.
	Code string
	// Fix replaces the generated fix (what to send) of this property.
	Fix string
	// AllowNUL lets a string hold U+0000 under StrictText (file content).
	AllowNUL bool
	// MaxBytes bounds a string's UTF-8 length (0: no bound). JSON Schema's maxLength counts
	// characters, so the bound lives here and the description states it.
	MaxBytes int
	// Numbers says which numbers an integer property takes.
	Numbers Numbers
}

// Numbers is how an integer property may be written.
type Numbers int

const (
	// Literal: an integer written without fraction or exponent ("12", not "12.0" or
	// "1.2e1") that fits 64 bits, as encoding/json decodes into a Go integer.
	Literal Numbers = iota
	// Integral: any integral number JSON Schema calls an integer ("12.0", "1.2e1") that
	// fits in int64; read it with Int64.
	Integral
	// Saturating: any integral number; one beyond int64 is taken as the nearest int64
	// (the tool clamps it anyway); read it with Int64.
	Saturating
)

// Choice is one property (By, an enum) choosing which of the other properties apply: a
// property that does nothing for the chosen value is the model's misunderstanding, and
// saying so is cheaper than letting it believe the argument took effect. Provider-accepted
// JSON Schema has no way to say this (no oneOf or if/then at the top level).
type Choice struct {
	By string
	// Takes lists, per value of By, the other properties it takes, in the order its usage
	// names them.
	Takes map[string][]string
	// Needs names, per value of By, the property it cannot do without; a blank string is
	// missing.
	Needs map[string]string
}

// usage says what value takes: "action output takes taskID, cursor and limit".
func (c *Choice) usage(value string) string {
	takes := c.Takes[value]
	if len(takes) == 0 {
		return fmt.Sprintf("%s %s takes no other arguments", c.By, value)
	}
	list := takes[0]
	if n := len(takes); n > 1 {
		list = strings.Join(takes[:n-1], ", ") + " and " + takes[n-1]
	}
	return fmt.Sprintf("%s %s takes %s", c.By, value, list)
}

// checkRules refuses rules that name what the schema does not have: a typo would silently
// switch a rule off.
func (s *Schema) checkRules() error {
	for path := range s.rules.Fields {
		if s.root.at(strings.Split(path, ".")) == nil {
			return fmt.Errorf("rule for %q: no such property", path)
		}
	}
	c := s.rules.Choice
	if c == nil {
		return nil
	}
	by := s.root.props[c.By]
	if by == nil || len(by.enum) == 0 {
		return fmt.Errorf("choice by %q: not an enum property", c.By)
	}
	for _, v := range by.enum {
		if _, ok := c.Takes[v]; !ok {
			return fmt.Errorf("choice by %q: %q takes nothing listed", c.By, v)
		}
		for _, p := range append(slices.Clone(c.Takes[v]), c.Needs[v]) {
			if _, ok := s.root.props[p]; !ok && p != "" {
				return fmt.Errorf("choice by %q: %q names unknown %q", c.By, v, p)
			}
		}
	}
	return nil
}
