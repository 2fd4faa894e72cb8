package projections

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The statements the row images of combine.go follow, taken apart: which row each names and
// what it sets.

// combineShape is a statement the combiner can follow.
type combineShape struct {
	table    string
	insert   bool
	columns  []string  // an INSERT's columns
	values   []operand // an INSERT's values, one per column
	conflict int
	set      []assignTo // an upsert's DO UPDATE SET, or an UPDATE's SET
	column   string     // the column a read returns
	keyOf    []operand  // the value of each key column
	args     int        // placeholders
}

const (
	conflictNone = iota
	conflictNothing
	conflictUpdate
)

type assignTo struct {
	column string
	value  operand
}

// operand is a value in a statement: a placeholder, a constant, excluded.<column> of an
// upsert, or the column's own value plus an integer.
type operand struct {
	kind     int
	arg      int
	constant any
	column   string
	add      int64
}

const (
	operandArg = iota
	operandConstant
	operandExcluded
	operandSelfPlus
)

// value is the operand's value; excluded is the upsert's row (nil for an UPDATE), im the
// image being changed (nil while it is created).
func (o operand) value(args []any, excluded *combineShape, exArgs []any) any {
	switch o.kind {
	case operandArg:
		return args[o.arg]
	case operandConstant:
		return o.constant
	case operandExcluded:
		for i, col := range excluded.columns {
			if col == o.column {
				return excluded.values[i].value(exArgs, nil, nil)
			}
		}
	}
	return nil
}

// key is the row's key as text, false when a key value is NULL or the arguments do not fit.
func (s *combineShape) key(args []any) (string, bool) {
	if len(args) != s.args {
		return "", false
	}
	var b strings.Builder
	for _, o := range s.keyOf {
		v := o.value(args, nil, nil)
		switch v := v.(type) {
		case nil:
			return "", false
		case []byte:
			b.Write(v)
		case string:
			b.WriteString(v)
		default:
			fmt.Fprint(&b, v)
		}
		b.WriteByte(0)
	}
	return b.String(), true
}

// apply changes im as the statement would change its row; false, leaving im as it was, when
// it cannot tell how. Each column is set once and an expression reads only its own column,
// so setting them one after another is setting them together, as SQL does.
func (s *combineShape) apply(im *rowImage, args []any) bool {
	for _, a := range s.set {
		if a.value.kind == operandSelfPlus {
			v, held := im.get(a.column)
			if _, isInt := asInt64(v); !held || !isInt {
				return false
			}
		}
	}
	for _, a := range s.set {
		var v any
		switch a.value.kind {
		case operandSelfPlus:
			old, _ := im.get(a.column)
			n, _ := asInt64(old)
			v = n + a.value.add
		case operandExcluded:
			v = a.value.value(nil, s, args)
		default:
			v = a.value.value(args, nil, nil)
		}
		im.set(a.column, kept(v))
	}
	return true
}

// kept is v as an image keeps it: a projector's byte slice is copied, as the database copies
// it when the statement runs, so that the caller may reuse it.
func kept(v any) any {
	switch b := v.(type) {
	case []byte:
		return append([]byte(nil), b...)
	case json.RawMessage:
		return append(json.RawMessage(nil), b...)
	}
	return v
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	}
	return 0, false
}

// parse returns the shape of query, nil when the combiner cannot follow it.
func (c *combiner) parse(query string) *combineShape {
	q := strings.TrimSpace(query)
	switch {
	case hasPrefixFold(q, "INSERT INTO "):
		return c.parseInsert(q)
	case hasPrefixFold(q, "UPDATE "):
		return c.parseUpdate(q)
	}
	return nil
}

// parseInsert follows "INSERT INTO t (columns) VALUES (values)" with an optional ON CONFLICT
// (the primary key) DO NOTHING or DO UPDATE SET column = excluded.<listed column> | constant
// | column + integer, none of them a key column.
func (c *combiner) parseInsert(q string) *combineShape {
	ct := c.tables[firstWord(q[len("INSERT INTO "):])]
	if ct == nil {
		return nil
	}
	open, close := strings.IndexByte(q, '('), strings.IndexByte(q, ')')
	if open < 0 || close < open {
		return nil
	}
	s := &combineShape{table: ct.name, insert: true, columns: splitList(q[open+1 : close])}
	rest := strings.TrimLeft(q[close+1:], " \t\r\n")
	if !hasPrefixFold(rest, "VALUES") {
		return nil
	}
	rest = strings.TrimLeft(rest[len("VALUES"):], " \t\r\n")
	end := closing(rest)
	if end < 0 {
		return nil
	}
	items, ok := splitTopLevel(rest[1:end], ",")
	if !ok || len(items) != len(s.columns) {
		return nil
	}
	for _, item := range items {
		o, ok := parseOperand(item, "", &s.args)
		if !ok || o.kind != operandArg && o.kind != operandConstant {
			return nil
		}
		s.values = append(s.values, o)
	}
	for _, col := range s.columns {
		if !ct.columns[col] {
			return nil
		}
	}
	if !s.parseConflict(strings.TrimSpace(rest[end+1:]), ct) {
		return nil
	}
	for _, k := range ct.key {
		i := indexOf(s.columns, k)
		if i < 0 {
			return nil // the key would take its default: not a row the combiner can name
		}
		s.keyOf = append(s.keyOf, s.values[i])
	}
	return s
}

func (s *combineShape) parseConflict(tail string, ct *combineTable) bool {
	if tail == "" {
		return true
	}
	if !hasPrefixFold(tail, "ON CONFLICT") {
		return false
	}
	rest := strings.TrimLeft(tail[len("ON CONFLICT"):], " \t\r\n")
	end := closing(rest)
	if end < 0 {
		return false
	}
	target := splitList(rest[1:end])
	if len(target) != len(ct.key) || !containsAll(target, ct.key) {
		return false
	}
	action := strings.TrimSpace(rest[end+1:])
	switch {
	case strings.EqualFold(action, "DO NOTHING"):
		s.conflict = conflictNothing
		return true
	case hasPrefixFold(action, "DO UPDATE SET "):
		s.conflict = conflictUpdate
		var none int
		return s.parseSet(action[len("DO UPDATE SET "):], ct, &none) && none == 0
	}
	return false
}

// parseSet takes "column = operand, ..." that sets no key column.
func (s *combineShape) parseSet(list string, ct *combineTable, args *int) bool {
	items, ok := splitTopLevel(list, ",")
	if !ok {
		return false
	}
	for _, item := range items {
		column, expr, ok := assignment(item)
		if !ok || !ct.columns[column] || indexOf(ct.key, column) >= 0 {
			return false
		}
		for _, earlier := range s.set {
			if earlier.column == column {
				return false // set twice: SQL would read the old value both times
			}
		}
		o, ok := parseOperand(expr, column, args)
		if !ok || o.kind == operandExcluded && (!s.insert || indexOf(s.columns, o.column) < 0) {
			return false
		}
		s.set = append(s.set, assignTo{column: column, value: o})
	}
	return true
}

// parseUpdate follows "UPDATE t SET column = operand, ... WHERE k1 = ? AND ..." whose
// conditions are exactly the primary key's columns.
func (c *combiner) parseUpdate(q string) *combineShape {
	table, items, conds, ok := updateClauses(q)
	ct := c.tables[table]
	if !ok || ct == nil {
		return nil
	}
	s := &combineShape{table: table}
	if !s.parseSet(strings.Join(items, ", "), ct, &s.args) {
		return nil
	}
	if !s.parseKeyConditions(conds, ct) {
		return nil
	}
	return s
}

// parseKeyConditions takes "k = ?" conditions, one for each key column and no other.
func (s *combineShape) parseKeyConditions(conds []string, ct *combineTable) bool {
	keyOf := map[string]operand{}
	for _, cond := range conds {
		column, value, ok := strings.Cut(cond, "=")
		column, value = strings.TrimSpace(column), strings.TrimSpace(value)
		if !ok || value != "?" || indexOf(ct.key, column) < 0 {
			return false
		}
		if _, twice := keyOf[column]; twice {
			return false
		}
		keyOf[column] = operand{kind: operandArg, arg: s.args}
		s.args++
	}
	if len(keyOf) != len(ct.key) {
		return false
	}
	for _, k := range ct.key {
		s.keyOf = append(s.keyOf, keyOf[k])
	}
	return true
}

// parseOperand takes "?", a constant ('text' without quotes inside, an integer, NULL),
// "excluded.<column>", or "<self> + <integer>" (self being the column assigned; "" where
// there is none). args counts the placeholders.
func parseOperand(expr, self string, args *int) (operand, bool) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "?":
		*args++
		return operand{kind: operandArg, arg: *args - 1}, true
	case strings.EqualFold(expr, "NULL"):
		return operand{kind: operandConstant}, true
	case len(expr) >= 2 && expr[0] == '\'' && expr[len(expr)-1] == '\'' && !strings.ContainsRune(expr[1:len(expr)-1], '\''):
		return operand{kind: operandConstant, constant: expr[1 : len(expr)-1]}, true
	case hasPrefixFold(expr, "excluded."):
		col := expr[len("excluded."):]
		return operand{kind: operandExcluded, column: col}, col != "" && firstWord(col) == col
	}
	if n, err := strconv.ParseInt(expr, 10, 64); err == nil {
		return operand{kind: operandConstant, constant: n}, true
	}
	if self != "" {
		if rest, ok := strings.CutPrefix(expr, self); ok {
			rest = strings.TrimSpace(rest)
			sign := int64(1)
			switch {
			case strings.HasPrefix(rest, "+"):
			case strings.HasPrefix(rest, "-"):
				sign = -1
			default:
				return operand{}, false
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(rest[1:]), 10, 64); err == nil && n >= 0 {
				return operand{kind: operandSelfPlus, column: self, add: sign * n}, true
			}
		}
	}
	return operand{}, false
}

// closing returns the index of the parenthesis that closes the one s begins with, outside
// quotes; -1 when s does not begin with one or it is not closed.
func closing(s string) int {
	if !strings.HasPrefix(s, "(") {
		return -1
	}
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
