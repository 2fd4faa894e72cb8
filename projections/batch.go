package projections

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Batched writes on Postgres (docs/storage.md, "Read models and projections"). A projector
// writes one row at a time with Tx.Exec; the transaction holds the rows of an INSERT back
// and writes them as multi-row INSERTs, so that a batch or a rebuild costs one round trip
// per few hundred rows instead of one per row. What the projector writes is
// unchanged: rows reach each table in an order that gives the same result as writing them
// one by one:
//
//   - per table, held rows are written before any other statement on that table runs (an
//     UPDATE, a SELECT through get, another INSERT statement), and before commit;
//   - rows of one statement with the same conflict key (its ON CONFLICT columns) are written
//     in the order they came, each in a later statement than the one before it; rows with
//     different keys touch different rows, so they may share a statement in any order;
//   - tables are independent: a projector reads and writes only the tables it owns.

// maxBatchRows bounds the rows of one multi-row statement: 256 rows of the widest read model
// (19 columns) stay far below both dialects' limit on parameters (SQLite 32,766, Postgres
// 65,535), and larger statements gained nothing measurable.
const maxBatchRows = 256

// insertShape is an INSERT statement with a single VALUES row of '?' placeholders, taken
// apart so that it can be repeated for n rows.
type insertShape struct {
	table   string
	head    string // "INSERT INTO t (a, b, c) VALUES "
	row     string // "(?, ?, 0)"
	tail    string // " ON CONFLICT (a) DO ..." or ""
	perRow  int    // placeholders in row
	keyArgs []int  // the conflict key's arguments; nil when the statement has no ON CONFLICT
	// multi caches the statement for 2^i rows.
	multi [9]string
}

// parseInsert returns the shape of query, or nil when it is not a single-row INSERT whose
// placeholders are all in its VALUES row (anything else runs as it is, unbatched).
func parseInsert(query string) *insertShape {
	q := strings.TrimSpace(query)
	if !hasPrefixFold(q, "INSERT INTO ") {
		return nil
	}
	table := firstWord(q[len("INSERT INTO "):])
	open := strings.IndexByte(q, '(')
	values := indexFold(q, ")")
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
	s := &insertShape{table: table, head: q[:rowStart], row: row, tail: tail, perRow: strings.Count(row, "?")}
	keys, ok := conflictColumns(tail)
	if !ok {
		return nil
	}
	if keys != nil {
		s.keyArgs = []int{}
		for _, k := range keys {
			arg, found := argOfColumn(columns, exprs, k)
			if !found {
				return nil
			}
			if arg >= 0 {
				s.keyArgs = append(s.keyArgs, arg)
			}
		}
	}
	return s
}

// conflictColumns returns the columns of tail's "ON CONFLICT (…)", nil when it has none, and
// false when it has one without a column list.
func conflictColumns(tail string) ([]string, bool) {
	at := indexFold(tail, "ON CONFLICT")
	if at < 0 {
		return nil, true
	}
	rest := strings.TrimLeft(tail[at+len("ON CONFLICT"):], " \t\r\n")
	if !strings.HasPrefix(rest, "(") {
		return nil, false
	}
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return nil, false
	}
	return splitList(rest[1:end]), true
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

// statement returns the INSERT for 2^exp rows.
func (s *insertShape) statement(exp int) string {
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

// key is the conflict key of a row's arguments.
func (s *insertShape) key(args []any) string {
	var b strings.Builder
	for _, i := range s.keyArgs {
		switch v := args[i].(type) {
		case string:
			b.WriteString(strconv.Quote(v))
		case nil:
			b.WriteString("NULL")
		default:
			fmt.Fprintf(&b, "%T:%v", v, v)
		}
		b.WriteByte(',')
	}
	return b.String()
}

// heldRows are the rows of one INSERT statement held for one table, in statements that
// run in order: generations[i] holds each key's i-th row since the table's last write.
type heldRows struct {
	shape       *insertShape
	generations []rowGroup
	lastOfKey   map[string]int // the generation of each key's last row
}

type rowGroup struct {
	args      []any    // the rows' arguments, one after another
	positions []uint64 // the log position each row came from, for errors
}

func (g *rowGroup) rows(perRow int) int {
	if perRow == 0 {
		return len(g.positions)
	}
	return len(g.args) / perRow
}

// hold adds a row; it reports whether a statement is now full.
func (h *heldRows) hold(args []any, position uint64) bool {
	gen := 0
	if h.shape.keyArgs != nil {
		key := h.shape.key(args)
		if last, ok := h.lastOfKey[key]; ok {
			gen = last + 1
		}
		h.lastOfKey[key] = gen
	}
	if gen == len(h.generations) {
		h.generations = append(h.generations, rowGroup{})
	}
	g := &h.generations[gen]
	g.args = append(g.args, args...)
	g.positions = append(g.positions, position)
	return len(g.positions) >= maxBatchRows
}

// hold keeps an INSERT's row for a later multi-row statement. A different statement on the
// same table first writes what that table holds, so that statements keep their order.
func (t *Tx) hold(ctx context.Context, shape *insertShape, args []any) error {
	if len(args) != shape.perRow {
		return fmt.Errorf("%s: %d arguments for %d placeholders", shape.head, len(args), shape.perRow)
	}
	h := t.held[shape.table]
	if h != nil && h.shape != shape {
		if err := t.flushTable(ctx, shape.table); err != nil {
			return err
		}
		h = nil
	}
	if h == nil {
		h = &heldRows{shape: shape, lastOfKey: map[string]int{}}
		t.held[shape.table] = h
	}
	if h.hold(args, t.position) {
		return t.flushTable(ctx, shape.table)
	}
	return nil
}

// flushTable writes the rows held for table; "" writes every table's.
func (t *Tx) flushTable(ctx context.Context, table string) error {
	if table == "" {
		return t.flush(ctx)
	}
	h := t.held[table]
	if h == nil {
		return nil
	}
	delete(t.held, table)
	for _, g := range h.generations {
		if err := t.writeRows(ctx, h.shape, g); err != nil {
			return err
		}
	}
	return nil
}

// flush writes every held row.
func (t *Tx) flush(ctx context.Context) error {
	tables := make([]string, 0, len(t.held))
	for table := range t.held {
		tables = append(tables, table)
	}
	sort.Strings(tables) // a failure names the same table on every run
	for _, table := range tables {
		if err := t.flushTable(ctx, table); err != nil {
			return err
		}
	}
	return nil
}

// writeRows writes g's rows in statements of a power of two rows each, so that a
// transaction prepares at most nine statements per INSERT.
func (t *Tx) writeRows(ctx context.Context, s *insertShape, g rowGroup) error {
	n := g.rows(s.perRow)
	done := 0
	for exp := len(s.multi) - 1; exp >= 0; exp-- {
		for size := 1 << exp; n-done >= size; done += size {
			stmt, err := t.prepared(ctx, s.statement(exp))
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, g.args[done*s.perRow:(done+size)*s.perRow]...); err != nil {
				return fmt.Errorf("write %d rows into %s from the events at positions %d to %d: %w",
					size, s.table, g.positions[done], g.positions[done+size-1], err)
			}
		}
	}
	return nil
}

// statementTable is the table a statement other than a batched INSERT reads or writes, or ""
// when it cannot tell (then every table's held rows are written first).
func statementTable(query string) string {
	q := strings.TrimSpace(query)
	switch {
	case hasPrefixFold(q, "UPDATE "):
		return firstWord(q[len("UPDATE "):])
	case hasPrefixFold(q, "DELETE FROM "):
		return firstWord(q[len("DELETE FROM "):])
	case hasPrefixFold(q, "INSERT INTO "):
		return firstWord(q[len("INSERT INTO "):])
	case hasPrefixFold(q, "SELECT "):
		// A query with a subquery, a join or a CTE could read more than one table.
		from := indexFold(q, " FROM ")
		if from < 0 || strings.Count(strings.ToUpper(q), "SELECT") != 1 || indexFold(q, " JOIN ") >= 0 {
			return ""
		}
		rest := q[from+len(" FROM "):]
		table := firstWord(rest)
		if after := strings.TrimSpace(rest[len(table):]); after != "" && !hasPrefixFold(after, "WHERE ") {
			return ""
		}
		return table
	}
	return ""
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func indexFold(s, sub string) int { return strings.Index(strings.ToUpper(s), strings.ToUpper(sub)) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// firstWord is s's leading identifier.
func firstWord(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	end := 0
	for end < len(s) && (s[end] == '_' || s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z' ||
		s[end] >= '0' && s[end] <= '9') {
		end++
	}
	return s[:end]
}

// splitList splits "a, b,c" into its trimmed items.
func splitList(s string) []string {
	items := strings.Split(s, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items
}
