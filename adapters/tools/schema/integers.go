package schema

import (
	"encoding/json"
	"math/big"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Integer properties are checked here, not by the compiled validator (docs/tools.md, "Argument
// schemas"). The validator decides "type": "integer", "minimum" and "maximum" by printing each
// number and reading it into a math/big rational, several times per number: for a call with
// bounded integers (read, bg) that was the larger part of validating it. Where the schema's
// tree of properties and items holds a node that is exactly {"type": "integer", ...}, the
// document compiled for the validator says "number" there and drops that node's minimum and
// maximum; the node (read from the same bytes) keeps them, and integerFaults applies them with
// the validator's own meaning: an integer is a number with no fractional part (12.0 and
// 1.2e1 are integers), compared exactly. A schema's other keywords, and integer nodes
// anywhere else (inside anyOf, $defs), stay with the validator. FuzzIntegersAsValidator
// holds the two to the same answers.

// relaxIntegers rewrites doc, the decoded schema, as described above, along the nodes of n.
func relaxIntegers(n *node, doc any) {
	m, ok := doc.(map[string]any)
	if !ok || n == nil {
		return
	}
	if n.typ == "integer" && m["type"] == "integer" {
		m["type"] = "number"
		delete(m, "minimum")
		delete(m, "maximum")
		n.checkInteger = true
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for name, p := range n.props {
			relaxIntegers(p, props[name])
		}
	}
	if n.items != nil {
		relaxIntegers(n.items, m["items"])
	}
}

// integerFaults appends the faults of the integer properties of v (an instance read with
// positions in pos) the validator no longer sees, as it would have reported them.
func integerFaults(n *node, v any, loc []string, pos map[string]int, out []failure) []failure {
	if n == nil {
		return out
	}
	switch v := v.(type) {
	case map[string]any:
		for name, p := range n.props {
			if pv, ok := v[name]; ok {
				out = integerFaults(p, pv, append(loc[:len(loc):len(loc)], name), pos, out)
			}
		}
	case []any:
		for i, item := range v {
			out = integerFaults(n.items, item, append(loc[:len(loc):len(loc)], strconv.Itoa(i)), pos, out)
		}
	case json.Number:
		if !n.checkInteger {
			return out
		}
		if k := integerFault(n, v); k != nil {
			rank := 1
			if _, wrongType := k.(*kind.Type); wrongType {
				rank = 0
			}
			out = append(out, failure{loc: loc, kind: k, at: pos[pointer(loc)], rank: rank})
		}
	}
	return out
}

// integersHold reports whether every integer property of v is whole and within its bounds:
// the check of an instance the validator admitted, before any positions are known.
func integersHold(n *node, v any) bool {
	if n == nil {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		for name, p := range n.props {
			if pv, ok := v[name]; ok && !integersHold(p, pv) {
				return false
			}
		}
	case []any:
		for _, item := range v {
			if !integersHold(n.items, item) {
				return false
			}
		}
	case json.Number:
		return !n.checkInteger || integerFault(n, v) == nil
	}
	return true
}

// integerFault is what the validator reports for v at n: a wrong type, or a bound crossed.
func integerFault(n *node, v json.Number) jsonschema.ErrorKind {
	if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		switch {
		case n.minInt != nil && i < *n.minInt:
			return &kind.Minimum{Got: big.NewRat(i, 1), Want: n.minRat}
		case n.maxInt != nil && i > *n.maxInt:
			return &kind.Maximum{Got: big.NewRat(i, 1), Want: n.maxRat}
		case n.minInt == nil && n.minRat != nil && n.minRat.Cmp(big.NewRat(i, 1)) > 0:
			return &kind.Minimum{Got: big.NewRat(i, 1), Want: n.minRat}
		case n.maxInt == nil && n.maxRat != nil && n.maxRat.Cmp(big.NewRat(i, 1)) < 0:
			return &kind.Maximum{Got: big.NewRat(i, 1), Want: n.maxRat}
		}
		return nil
	}
	r, ok := new(big.Rat).SetString(string(v))
	switch {
	case !ok || !r.IsInt():
		return &kind.Type{Got: "number", Want: []string{"integer"}}
	case n.minRat != nil && r.Cmp(n.minRat) < 0:
		return &kind.Minimum{Got: r, Want: n.minRat}
	case n.maxRat != nil && r.Cmp(n.maxRat) > 0:
		return &kind.Maximum{Got: r, Want: n.maxRat}
	}
	return nil
}

// readBounds keeps n's minimum and maximum exactly, and as int64 where they are one.
func (n *node) readBounds() error {
	for _, b := range []struct {
		text json.Number
		rat  **big.Rat
		i    **int64
	}{{n.min, &n.minRat, &n.minInt}, {n.max, &n.maxRat, &n.maxInt}} {
		if b.text == "" {
			continue
		}
		r, ok := new(big.Rat).SetString(string(b.text))
		if !ok {
			return errBound(b.text)
		}
		*b.rat = r
		if i, err := strconv.ParseInt(string(b.text), 10, 64); err == nil {
			*b.i = &i
		}
	}
	return nil
}

type errBound json.Number

func (e errBound) Error() string { return "bound " + string(e) + " is not a number" }
