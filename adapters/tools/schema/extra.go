package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// checkExtra applies the Rules JSON Schema cannot say to a value the validator admitted.
func (s *Schema) checkExtra(obj map[string]any) error {
	return s.extraObject(s.root, obj, nil)
}

func (s *Schema) extraObject(n *node, obj map[string]any, loc []string) error {
	if len(obj) == 0 {
		return nil
	}
	at := append(loc, "")
	for _, name := range n.order {
		v, ok := obj[name]
		if !ok {
			continue
		}
		at[len(at)-1] = name
		if err := s.extraValue(n.props[name], v, at); err != nil {
			return err
		}
	}
	return nil
}

func (s *Schema) extraValue(n *node, v any, loc []string) error {
	if n == nil {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		return s.extraObject(n, v, loc)
	case []any:
		if n.items == nil {
			return nil
		}
		for i, item := range v {
			if err := s.extraValue(n.items, item, append(loc, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case string:
		return s.extraString(n, v, loc)
	case json.Number:
		return s.extraNumber(n, v, loc)
	}
	return nil
}

func (s *Schema) extraString(n *node, v string, loc []string) error {
	f := s.field(n)
	if s.rules.StrictText && !f.AllowNUL && strings.IndexByte(v, 0) >= 0 {
		return s.refuse(n, pathString(loc), "contains a NUL character")
	}
	if f.MaxBytes > 0 && len(v) > f.MaxBytes {
		return s.refuse(n, pathString(loc), "is %d bytes, over the %d-byte limit", len(v), f.MaxBytes)
	}
	return nil
}

func (s *Schema) extraNumber(n *node, v json.Number, loc []string) error {
	if n.typ != "integer" {
		return nil
	}
	switch s.field(n).Numbers {
	case Literal:
		if !isLiteral(string(v)) {
			return s.refuse(n, pathString(loc), "must be a whole number written without a fraction or exponent, not %s", v)
		}
		if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
			if _, err := strconv.ParseUint(string(v), 10, 64); err != nil {
				return s.refuse(n, pathString(loc), "is %s, outside the 64-bit whole numbers", v)
			}
		}
	case Integral:
		if _, exact := Int64(v); !exact {
			return s.refuse(n, pathString(loc), "is %s, outside the 64-bit whole numbers", v)
		}
	}
	return nil
}

// field is the rule of the property n is (or is an element of).
func (s *Schema) field(n *node) Field {
	if p := n.property(); p != nil {
		return p.rule
	}
	return Field{}
}

// isLiteral reports whether s is an integer written as one: an optional minus and digits.
func isLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Int64 reads an integer property of Args (a json.Number the validator admitted as an
// integer): exact is false when it lies outside int64 and was saturated to the nearest end.
func Int64(v any) (n int64, exact bool) {
	num, _ := v.(json.Number)
	if i, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return i, true
	}
	f, _ := strconv.ParseFloat(string(num), 64)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, false
	case f <= math.MinInt64:
		return math.MinInt64, false
	}
	return int64(f), true
}

// checkChoice refuses a property that does not apply to the chosen value, and a chosen value
// without the property it needs.
func (s *Schema) checkChoice(obj map[string]any) error {
	c := s.rules.Choice
	if c == nil {
		return nil
	}
	value, _ := obj[c.By].(string)
	if name := s.inapplicable(obj, value); name != "" {
		return domain.Invalid(name, fmt.Sprintf("%s does not apply to %s %s", name, c.By, value),
			"remove it; "+c.usage(value))
	}
	need := c.Needs[value]
	if need == "" {
		return nil
	}
	if v, _ := obj[need].(string); strings.TrimSpace(v) == "" {
		return domain.Invalid(need, fmt.Sprintf("%s is required for %s %s", need, c.By, value),
			s.fix(s.root.props[need]))
	}
	return nil
}

// inapplicable is the first property, in the schema's order, that value does not take.
func (s *Schema) inapplicable(obj map[string]any, value string) string {
	c := s.rules.Choice
	for _, name := range s.root.order {
		if _, ok := obj[name]; !ok || name == c.By {
			continue
		}
		if !contains(c.Takes[value], name) {
			return name
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
