package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// node is the part of a compiled schema the errors are written from: the validator says
// which keyword failed where, and the node says what the model should send instead. It is
// read from the same bytes the validator compiled.
type node struct {
	name      string // the property's name ("" for the root and array items)
	typ       string // "" when the schema does not give one type
	desc      string
	enum      []string
	min, max  json.Number
	minLength int
	// checkInteger: this package, not the compiled validator, checks that the node's value
	// is an integer within min and max (integers.go); minRat and maxRat are the bounds read
	// exactly, minInt and maxInt the same where they are int64s.
	checkInteger   bool
	minRat, maxRat *big.Rat
	minInt, maxInt *int64
	// props are the object's properties in the order the schema lists them.
	order    []string
	props    map[string]*node
	required map[string]bool
	items    *node
	// parent is the object or array the node sits in.
	parent *node
	// rule is the property's Rules.Fields entry, looked up once at Compile.
	rule Field
}

// attach gives every property below n its rule.
func (n *node) attach(fields map[string]Field) {
	if n.name != "" {
		n.rule = fields[n.rulePath()]
	}
	for _, name := range n.order {
		n.props[name].attach(fields)
	}
	if n.items != nil {
		n.items.attach(fields)
	}
}

type rawNode struct {
	Type        any             `json:"type"`
	Description string          `json:"description"`
	Enum        []any           `json:"enum"`
	Minimum     json.Number     `json:"minimum"`
	Maximum     json.Number     `json:"maximum"`
	MinLength   int             `json:"minLength"`
	Properties  json.RawMessage `json:"properties"`
	Required    []string        `json:"required"`
	Items       json.RawMessage `json:"items"`
}

func readNode(raw []byte) (*node, error) {
	var r rawNode
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	n := &node{desc: r.Description, min: r.Minimum, max: r.Maximum, minLength: r.MinLength,
		props: map[string]*node{}, required: map[string]bool{}}
	if t, ok := r.Type.(string); ok {
		n.typ = t
	}
	if err := n.readBounds(); err != nil {
		return nil, err
	}
	for _, v := range r.Enum {
		if s, ok := v.(string); ok {
			n.enum = append(n.enum, s)
		}
	}
	for _, name := range r.Required {
		n.required[name] = true
	}
	if len(r.Properties) > 0 {
		if err := n.readProps(r.Properties); err != nil {
			return nil, err
		}
	}
	if len(r.Items) > 0 {
		items, err := readNode(r.Items)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		items.parent = n
		n.items = items
	}
	return n, nil
}

// readProps reads the properties object in its written order (a map would lose it, and the
// accepted names are listed to the model in that order).
func (n *node) readProps(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var sub json.RawMessage
		if err := dec.Decode(&sub); err != nil {
			return err
		}
		p, err := readNode(sub)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		p.name, p.parent = name, n
		n.order = append(n.order, name)
		n.props[name] = p
	}
	return nil
}

func (n *node) collectNames(into map[string]string) {
	for _, name := range n.order {
		into[name] = name
		n.props[name].collectNames(into)
	}
	if n.items != nil {
		n.items.collectNames(into)
	}
}

// at finds the node of a property path split at dots; "[...]" suffixes step into items.
func (n *node) at(path []string) *node {
	cur := n
	for _, seg := range path {
		name, rest, _ := strings.Cut(seg, "[")
		cur = cur.props[name]
		for ; cur != nil && rest != ""; _, rest, _ = strings.Cut(rest, "[") {
			cur = cur.items
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// property is the nearest node that is a named property: what a refusal of an array's
// element is about ("items[0]" is fixed by sending items right).
func (n *node) property() *node {
	for cur := n; cur != nil; cur = cur.parent {
		if cur.name != "" {
			return cur
		}
	}
	return nil
}

// rulePath is the node's key in Rules.Fields: "steps[].title".
func (n *node) rulePath() string {
	var parts []string
	for cur := n; cur != nil && cur.parent != nil; cur = cur.parent {
		if cur.name != "" {
			parts = append(parts, cur.name)
		}
		if cur.parent.items == cur {
			parts = append(parts, "[]")
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] != "[]" && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(parts[i])
	}
	return b.String()
}

// optional reports whether the model may leave the property out.
func (n *node) optional() bool {
	return n.parent == nil || !n.parent.required[n.name]
}
