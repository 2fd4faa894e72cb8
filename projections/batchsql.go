package projections

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"
)

// The statements batch.go holds back are taken apart here: a single-row INSERT becomes a
// multi-row INSERT, and an UPDATE of one row by its key an UPDATE ... FROM (VALUES ...) of many
// rows. Each knows which of its arguments name the row it touches, so that statements on
// different rows can share a round trip (docs/storage.md, "Read models and projections").

// tableSchema is what batching needs to know of a read-model table: its primary key, which
// names the row a statement touches, and its columns' types, which an UPDATE's VALUES list
// casts its arguments to (Postgres types an untyped VALUES column as text).
type tableSchema struct {
	key   []string // the primary key's columns, sorted by name
	types map[string]string
}

// readSchemas reads the primary keys and column types of the read-model tables on Postgres.
func readSchemas(ctx context.Context, tx *sqlx.Tx) (map[string]*tableSchema, error) {
	rows, err := tx.QueryxContext(ctx, `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
			COALESCE(a.attnum = ANY(i.indkey), false)
		FROM pg_class c
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
		WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, fmt.Errorf("read read-model keys: %w", err)
	}
	defer rows.Close()
	schemas := map[string]*tableSchema{}
	for rows.Next() {
		var table, column, typ string
		var inKey bool
		if err := rows.Scan(&table, &column, &typ, &inKey); err != nil {
			return nil, err
		}
		s := schemas[table]
		if s == nil {
			s = &tableSchema{types: map[string]string{}}
			schemas[table] = s
		}
		s.types[column] = typ
		if inKey {
			s.key = append(s.key, column)
		}
	}
	for _, s := range schemas {
		sort.Strings(s.key)
	}
	return schemas, rows.Err()
}

// batchShape is a statement that writes one row, taken apart so that it can be repeated for
// n rows: head, then n times row, then tail.
type batchShape struct {
	table  string
	head   string // "INSERT INTO t (a, b, c) VALUES " or "UPDATE t SET a = v.p1 FROM (VALUES "
	row    string // "(?, ?, 0)" or "(CAST(? AS text), CAST(? AS text))"
	tail   string // " ON CONFLICT (a) DO ..." or ") AS v (p1, p2) WHERE t.id = v.p2"
	perRow int    // placeholders in row
	// keyArgs are the arguments holding the table's key (in tableSchema.key's order): two
	// rows with different keys touch different rows of the table.
	keyArgs []int
	// multi caches the statement for 2^i rows.
	multi [9]string
}

// statement returns the statement for 2^exp rows.
func (s *batchShape) statement(exp int) string {
	if s.multi[exp] == "" {
		var b strings.Builder
		b.WriteString(s.head)
		for i := range 1 << exp {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s.row)
		}
		b.WriteString(s.tail)
		s.multi[exp] = b.String()
	}
	return s.multi[exp]
}

// parseBatch returns the shape of query, or nil when it is neither a single-row INSERT nor a
// one-row UPDATE that batching can take apart safely (it then runs as it is).
func parseBatch(query string, schemas map[string]*tableSchema) *batchShape {
	q := strings.TrimSpace(query)
	switch {
	case hasPrefixFold(q, "INSERT INTO "):
		return parseInsert(q, schemas[firstWord(q[len("INSERT INTO "):])])
	case hasPrefixFold(q, "UPDATE "):
		return parseUpdate(q, schemas[firstWord(q[len("UPDATE "):])])
	}
	return nil
}

// parseInsert takes apart an INSERT whose placeholders are all in its single VALUES row and
// whose row is named by its key: every key column takes a placeholder, and an ON CONFLICT
// targets columns that include the key and never sets a key column.
func parseInsert(q string, schema *tableSchema) *batchShape {
	if schema == nil || len(schema.key) == 0 {
		return nil
	}
	table := firstWord(q[len("INSERT INTO "):])
	open := strings.IndexByte(q, '(')
	values := strings.IndexByte(q, ')')
	if table == "" || open < 0 || values < open {
		return nil
	}
	columns := splitList(q[open+1 : values])
	rest := q[values+1:]
	v := indexFold(rest, "VALUES")
	if v < 0 || strings.TrimSpace(rest[:v]) != "" {
		return nil
	}
	rowStart := values + 1 + v + len("VALUES")
	for rowStart < len(q) && isSpace(q[rowStart]) {
		rowStart++
	}
	if rowStart >= len(q) || q[rowStart] != '(' {
		return nil
	}
	rowEnd := strings.IndexByte(q[rowStart:], ')')
	if rowEnd < 0 {
		return nil
	}
	rowEnd += rowStart + 1
	row, tail := q[rowStart:rowEnd], q[rowEnd:]
	exprs := splitList(row[1 : len(row)-1])
	// Nested parentheses, quotes or placeholders outside the row would make the split above
	// or the argument count wrong: such a statement is not batched.
	if strings.ContainsAny(row[1:len(row)-1], "()'\"") || strings.Contains(tail, "?") ||
		len(exprs) != len(columns) || indexFold(tail, "RETURNING") >= 0 {
		return nil
	}
	if !conflictKeepsKey(tail, schema.key) {
		return nil
	}
	s := &batchShape{table: table, head: q[:rowStart], row: row, tail: tail, perRow: strings.Count(row, "?")}
	for _, k := range schema.key {
		arg, found := argOfColumn(columns, exprs, k)
		if !found || arg < 0 {
			return nil
		}
		s.keyArgs = append(s.keyArgs, arg)
	}
	return s
}

// conflictKeepsKey reports whether an INSERT's tail touches only the row its key names: no
// ON CONFLICT, or one whose target includes every key column and whose DO UPDATE sets none.
func conflictKeepsKey(tail string, key []string) bool {
	at := indexFold(tail, "ON CONFLICT")
	if at < 0 {
		return strings.TrimSpace(tail) == ""
	}
	rest := strings.TrimLeft(tail[at+len("ON CONFLICT"):], " \t\r\n")
	if !strings.HasPrefix(rest, "(") {
		return false
	}
	end := strings.IndexByte(rest, ')')
	if end < 0 || !containsAll(splitList(rest[1:end]), key) {
		return false
	}
	action := strings.TrimSpace(rest[end+1:])
	switch {
	case strings.EqualFold(action, "DO NOTHING"):
		return true
	case hasPrefixFold(action, "DO UPDATE SET "):
		items, ok := splitTopLevel(action[len("DO UPDATE SET "):], ",")
		if !ok {
			return false
		}
		for _, item := range items {
			column, _, ok := assignment(item)
			if !ok || containsAll(key, []string{column}) {
				return false
			}
		}
		return true
	}
	return false
}

// parseUpdate takes apart "UPDATE t SET c = ?, d = <expression without placeholders>, ...
// WHERE k1 = ? AND k2 = ?" whose conditions name every key column and whose SET changes none.
// n such updates become one
//
//	UPDATE t SET c = v.p1, d = ... FROM (VALUES (CAST(? AS type), ...), ...) AS v (p1, ...)
//	WHERE t.k1 = v.p2 AND ...
//
// where each VALUES row updates the row its key names (batch.go puts no two rows with the
// same key in one statement). The casts type the VALUES columns as the table's.
func parseUpdate(q string, schema *tableSchema) *batchShape {
	table, items, conds, ok := updateClauses(q)
	if !ok || schema == nil || len(schema.key) == 0 {
		return nil
	}
	var set, where, casts, names []string
	param := func(column string) (string, bool) {
		typ, known := schema.types[column]
		if !known {
			return "", false
		}
		name := fmt.Sprintf("p%d", len(names)+1)
		names = append(names, name)
		casts = append(casts, "CAST(? AS "+typ+")")
		return "v." + name, true
	}
	for _, item := range items {
		column, expr, ok := assignment(item)
		if !ok || containsAll(schema.key, []string{column}) {
			return nil
		}
		switch {
		case expr == "?":
			if expr, ok = param(column); !ok {
				return nil
			}
		case strings.Contains(expr, "?"):
			return nil
		}
		set = append(set, column+" = "+expr)
	}
	argOf := map[string]int{}
	for _, cond := range conds {
		column, value, ok := strings.Cut(cond, "=")
		column, value = strings.TrimSpace(column), strings.TrimSpace(value)
		if !ok || value != "?" || firstWord(column) != column || column == "" {
			return nil
		}
		argOf[column] = len(names)
		ref, ok := param(column)
		if !ok {
			return nil
		}
		where = append(where, table+"."+column+" = "+ref)
	}
	s := &batchShape{table: table, perRow: len(names),
		head: "UPDATE " + table + " SET " + strings.Join(set, ", ") + " FROM (VALUES ",
		row:  "(" + strings.Join(casts, ", ") + ")",
		tail: ") AS v (" + strings.Join(names, ", ") + ") WHERE " + strings.Join(where, " AND ")}
	for _, k := range schema.key {
		arg, found := argOf[k]
		if !found {
			return nil
		}
		s.keyArgs = append(s.keyArgs, arg)
	}
	return s
}

// updateClauses splits "UPDATE table SET items WHERE conditions" into the table, the SET
// items and the conditions joined by AND; false for anything else (a subquery among them).
func updateClauses(q string) (table string, items, conds []string, ok bool) {
	after := strings.TrimLeft(q[len("UPDATE "):], " \t\r\n")
	table = firstWord(after)
	rest := strings.TrimLeft(after[len(table):], " \t\r\n")
	if table == "" || !hasPrefixFold(rest, "SET ") || indexFold(q, "SELECT") >= 0 {
		return "", nil, nil, false
	}
	parts, ok := splitTopLevel(rest[len("SET "):], "WHERE")
	if !ok || len(parts) != 2 {
		return "", nil, nil, false
	}
	items, ok = splitTopLevel(parts[0], ",")
	if !ok {
		return "", nil, nil, false
	}
	conds, ok = splitTopLevel(parts[1], "AND")
	return table, items, conds, ok
}

// assignment splits "column = expression".
func assignment(item string) (column, expr string, ok bool) {
	column, expr, ok = strings.Cut(item, "=")
	column, expr = strings.TrimSpace(column), strings.TrimSpace(expr)
	return column, expr, ok && column != "" && firstWord(column) == column && expr != ""
}

// splitTopLevel splits s at each sep outside parentheses and quotes, trimming the parts; a
// sep that is a keyword ("AND") matches case-insensitively between white space. It fails on
// unbalanced parentheses or quotes.
func splitTopLevel(s, sep string) ([]string, bool) {
	keyword := sep != ","
	var parts []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
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
			if depth < 0 {
				return nil, false
			}
		case depth == 0 && separatorAt(s, i, sep, keyword):
			parts = append(parts, strings.TrimSpace(s[start:i]))
			i += len(sep) - 1
			start = i + 1
		}
	}
	if depth != 0 || quote != 0 {
		return nil, false
	}
	return append(parts, strings.TrimSpace(s[start:])), true
}

// separatorAt reports whether sep starts at s[i]; a keyword must have white space on both
// sides.
func separatorAt(s string, i int, sep string, keyword bool) bool {
	if len(s)-i < len(sep) || !strings.EqualFold(s[i:i+len(sep)], sep) {
		return false
	}
	if !keyword {
		return true
	}
	end := i + len(sep)
	return i > 0 && isSpace(s[i-1]) && end < len(s) && isSpace(s[end])
}

// containsAll reports whether every item of want is in have.
func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// argOfColumn returns the index of the argument that column takes, -1 when its value is a
// constant in the statement, and false when the statement does not name column.
func argOfColumn(columns, exprs []string, column string) (int, bool) {
	arg := 0
	for i, c := range columns {
		if c == column {
			if exprs[i] != "?" {
				return -1, true
			}
			return arg, true
		}
		arg += strings.Count(exprs[i], "?")
	}
	return 0, false
}
