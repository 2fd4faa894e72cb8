package projections

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Batched writes on Postgres (docs/storage.md, "Read models and projections"). A projector
// writes one row at a time with Tx.Exec; the transaction holds back its single-row INSERTs
// and its UPDATEs of one row by key (batchsql.go) and writes them many per statement, so that
// a batch or a rebuild costs one round trip per few hundred rows instead of one per row.
// What the projector writes is unchanged: statements reach each table in an order that gives
// the same result as running them one by one:
//
//   - every held statement names the one row it touches by the table's primary key, so
//     statements on different keys commute: they may share a round trip in any order;
//   - statements on the same key run in the order they came, each in a later generation than
//     the one before it (Postgres also refuses an upsert or an UPDATE ... FROM that meets one
//     row twice);
//   - per table, held statements are written before any other statement on that table runs
//     (an UPDATE that names no single row, a SELECT through get, a DELETE), and before
//     commit;
//   - tables are independent: a projector reads and writes only the tables it owns.

// maxBatchRows bounds the rows of one multi-row statement: 256 rows of the widest read model
// (19 columns) stay far below both dialects' limit on parameters (SQLite 32,766, Postgres
// 65,535), and larger statements gained nothing measurable.
const maxBatchRows = 256

// heldTable is what a table holds: generations[i] holds each key's i-th statement since the
// table's last write, grouped by shape.
type heldTable struct {
	generations []generation
	lastOfKey   map[string]int // the generation of each key's last statement
}

// generation is statements on distinct keys, one rowGroup per shape, written in the order
// the shapes first came (any order would do; this one makes failures repeat alike).
type generation struct {
	shapes []*batchShape
	groups map[*batchShape]*rowGroup
}

type rowGroup struct {
	args      []any    // the rows' arguments, one after another
	positions []uint64 // the log position each row came from, for errors
}

// key is the primary key of a row's arguments, as text. Two statements on one row must get
// the same key, whatever Go types the projectors passed for it (an int and an int64, a string
// and its bytes): the key is the values' text. Two rows whose keys collide (a NULL and the
// text "<nil>") only go into successive statements, which is always safe.
func key(s *batchShape, args []any) string {
	var b strings.Builder
	for _, i := range s.keyArgs {
		if v, ok := args[i].([]byte); ok {
			b.Write(v)
		} else {
			fmt.Fprint(&b, args[i])
		}
		b.WriteByte(0)
	}
	return b.String()
}

// hold adds a statement's row; it reports whether a statement is now full.
func (h *heldTable) hold(s *batchShape, args []any, position uint64) bool {
	k := key(s, args)
	gen := 0
	if last, ok := h.lastOfKey[k]; ok {
		gen = last + 1
	}
	h.lastOfKey[k] = gen
	if gen == len(h.generations) {
		h.generations = append(h.generations, generation{groups: map[*batchShape]*rowGroup{}})
	}
	g := &h.generations[gen]
	rows := g.groups[s]
	if rows == nil {
		rows = &rowGroup{}
		g.groups[s] = rows
		g.shapes = append(g.shapes, s)
	}
	rows.args = append(rows.args, args...)
	rows.positions = append(rows.positions, position)
	return len(rows.positions) >= maxBatchRows
}

// hold keeps a statement's row for a later multi-row statement.
func (t *Tx) hold(ctx context.Context, shape *batchShape, args []any) error {
	if len(args) != shape.perRow {
		return fmt.Errorf("%s: %d arguments for %d placeholders", shape.head, len(args), shape.perRow)
	}
	h := t.held[shape.table]
	if h == nil {
		h = &heldTable{lastOfKey: map[string]int{}}
		t.held[shape.table] = h
	}
	if h.hold(shape, args, t.position) {
		return t.flushTable(ctx, shape.table)
	}
	return nil
}

// flushBefore writes the statements held for the table query reads or writes, before it runs.
// Where nothing is held (always on SQLite, which writes each row as it comes) the query is not
// parsed for its table: a rebuild runs one statement per row.
func (t *Tx) flushBefore(ctx context.Context, query string) error {
	if len(t.held) == 0 {
		return nil
	}
	return t.flushTable(ctx, statementTable(query))
}

// flushTable writes the statements held for table; "" writes every table's.
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
		for _, s := range g.shapes {
			if err := t.writeRows(ctx, s, g.groups[s]); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush writes every held statement.
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
// transaction prepares at most nine statements per shape.
func (t *Tx) writeRows(ctx context.Context, s *batchShape, g *rowGroup) error {
	n := len(g.positions)
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
