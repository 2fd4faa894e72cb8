package projections

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
)

// Row images: a rebuild on the embedded SQLite writes each read-model row once (docs/storage.md,
// "Read models and projections"). A projector writes a row as its events come: a session row
// is inserted, then updated by every message, title and turn; a plan is upserted by every
// change. In a rebuild only the row as it is after the log counts, and its tables start
// empty, so the transaction keeps each row it can follow as an image in memory, applies the
// projector's statements to the image instead of the database, and inserts the image once.
// What the rebuild stores is unchanged; the tests compare live and rebuilt read models row
// by row.
//
// The image of a row is exact because the rebuild knows every way a row can reach its
// tables: they were emptied in the same transaction, and every statement on them passes
// through Tx.Exec. A statement it can follow (an INSERT of one row named by the primary
// key, with or without an ON CONFLICT on that key, and an UPDATE of one row by its key, whose
// values are placeholders, constants, excluded.<column> or <the same column> + <integer>)
// changes the image; a key with no image and never written is no row at all, so an UPDATE
// of it does nothing, as it would in SQL. Anything else is left to the database, after the
// images it could see are written:
//
//   - a statement it cannot follow on a table, or a read of it (Tx.get), writes that table's
//     images first; one that could add rows it cannot name (an INSERT it cannot take apart)
//     also ends the images for that table for the rest of the rebuild;
//   - a statement on a key already written runs as it is, against the row in the database;
//   - a statement whose effect on the image cannot be computed (a + 1 on a column the image
//     does not hold, or that is not an integer) writes that row's image, then runs;
//   - a plain INSERT of a key that has an image writes the table's images, then runs, and
//     fails on the key as it would have.
//
// Tables with a unique constraint other than the primary key, or with triggers, are not
// followed: writing a row later could change which statement such a constraint refuses.

// maxImages and maxImageBytes bound the images one table keeps (the bytes counted are those
// of the text and byte values set, each time one is set); more are written to the database,
// so a rebuild's memory does not grow with the log or with its largest rows.
const (
	maxImages     = 8192
	maxImageBytes = 16 << 20
)

type combiner struct {
	tables map[string]*combineTable // the tables the rebuild emptied and can follow
	shapes map[string]*combineShape // per query; nil when the statement cannot be followed
	reads  map[string]*combineShape // per query read through Tx.get; nil when not answered from images
	args   []any                    // writeRows' arguments, kept between statements
	seed   maphash.Seed
}

type combineTable struct {
	name    string
	key     []string // the primary key's columns
	columns map[string]bool
	// defaults are the columns whose default is a constant: an image holds them from the
	// start, so that "n = n + 1" on a row inserted without n follows it.
	defaults  []assignTo
	images    map[string]*rowImage
	noColumns *columnList         // the root of the table's column lists
	order     []string            // image keys, in the order they were created (rowid order)
	written   map[uint64]struct{} // hashes of the keys written: a collision only sends a statement to the database
	stopped   bool                // the table is no longer followed
	bytes     int                 // the bytes set in the images since they were last written
}

// rowImage is a row not yet in the database: the columns its statements set, in the order
// first set; the others take their defaults when it is inserted.
type rowImage struct {
	columns  *columnList
	values   []any
	position uint64 // the log position of the last event that changed it, for errors
}

// columnList is a list of columns an image holds, shared by the images that hold the same
// columns in the same order, with the INSERT that writes them.
type columnList struct {
	names   []string
	inserts map[int]string         // the INSERT of n rows
	next    map[string]*columnList // this list with one more column
}

// insertOf is the INSERT of n rows of these columns.
func (l *columnList) insertOf(table string, n int) string {
	if q, ok := l.inserts[n]; ok {
		return q
	}
	row := "(?" + strings.Repeat(", ?", len(l.names)-1) + ")"
	q := "INSERT INTO " + table + " (" + strings.Join(l.names, ", ") + ") VALUES " + row + strings.Repeat(", "+row, n-1)
	l.inserts[n] = q
	return q
}

func (l *columnList) with(column string) *columnList {
	if n := l.next[column]; n != nil {
		return n
	}
	names := append(append([]string(nil), l.names...), column)
	n := &columnList{names: names, next: map[string]*columnList{}, inserts: map[int]string{}}
	l.next[column] = n
	return n
}

func (im *rowImage) get(column string) (any, bool) {
	if i := indexOf(im.columns.names, column); i >= 0 {
		return im.values[i], true
	}
	return nil, false
}

func (im *rowImage) set(column string, v any) {
	if i := indexOf(im.columns.names, column); i >= 0 {
		im.values[i] = v
		return
	}
	im.columns = im.columns.with(column)
	im.values = append(im.values, v)
}

// newCombiner reads the keys and columns of the emptied tables.
func newCombiner(ctx context.Context, t *Tx, tables []string) (*combiner, error) {
	c := &combiner{tables: map[string]*combineTable{}, shapes: map[string]*combineShape{}, reads: map[string]*combineShape{}, seed: maphash.MakeSeed()}
	for _, name := range tables {
		ct, err := followable(ctx, t, name)
		if err != nil {
			return nil, err
		}
		if ct != nil {
			c.tables[name] = ct
		}
	}
	return c, nil
}

// followable returns the table's key and columns, or nil when its rows cannot be followed.
func followable(ctx context.Context, t *Tx, name string) (*combineTable, error) {
	var others int
	if err := t.tx.GetContext(ctx, &others, `SELECT (SELECT COUNT(*) FROM pragma_index_list(?) WHERE "unique" AND origin <> 'pk')
		+ (SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?)`, name, name); err != nil {
		return nil, fmt.Errorf("read the constraints of %s: %w", name, err)
	}
	var cols []struct {
		Name    string  `db:"name"`
		PK      int     `db:"pk"`
		Default *string `db:"dflt_value"`
	}
	if err := t.tx.SelectContext(ctx, &cols, `SELECT name, pk, dflt_value FROM pragma_table_info(?) ORDER BY pk`, name); err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", name, err)
	}
	ct := &combineTable{name: name, columns: map[string]bool{}, images: map[string]*rowImage{}, written: map[uint64]struct{}{},
		noColumns: &columnList{next: map[string]*columnList{}, inserts: map[int]string{}}}
	for _, col := range cols {
		ct.columns[col.Name] = true
		if col.Default != nil {
			var none int
			if d, ok := parseOperand(*col.Default, "", &none); ok && d.kind == operandConstant {
				ct.defaults = append(ct.defaults, assignTo{column: col.Name, value: d})
			}
		}
		if col.PK > 0 {
			ct.key = append(ct.key, col.Name)
		}
	}
	if others > 0 || len(ct.key) == 0 {
		return nil, nil
	}
	return ct, nil
}

// exec applies a statement to the images; false means the caller runs it on the database
// (the images it could see are written by then).
func (c *combiner) exec(ctx context.Context, t *Tx, query string, args []any) (bool, error) {
	shape, parsed := c.shapes[query]
	if !parsed {
		shape = c.parse(query)
		c.shapes[query] = shape
	}
	if shape == nil {
		return false, c.unfollowed(ctx, t, query)
	}
	ct := c.tables[shape.table]
	if ct == nil || ct.stopped {
		return false, nil
	}
	key, ok := shape.key(args)
	if !ok {
		return false, nil // a NULL in the key (never one row in SQLite) or a wrong argument count
	}
	im := ct.images[key]
	if im == nil {
		if _, done := ct.written[c.hash(key)]; done {
			return false, nil
		}
		if !shape.insert {
			return true, nil // no such row: the UPDATE changes nothing
		}
		im = &rowImage{columns: ct.noColumns, values: make([]any, 0, len(shape.columns)+len(ct.defaults))}
		for _, d := range ct.defaults {
			if indexOf(shape.columns, d.column) < 0 {
				im.set(d.column, d.value.constant)
			}
		}
		for i, col := range shape.columns {
			im.set(col, kept(shape.values[i].value(args, nil, nil)))
		}
		im.position = t.position
		ct.images[key] = im
		ct.order = append(ct.order, key)
		return true, c.bound(ctx, t, ct, args)
	}
	switch {
	case shape.insert && shape.conflict == conflictNone:
		return false, c.writeTable(ctx, t, ct) // the database refuses the key, as it would have
	case shape.insert && shape.conflict == conflictNothing:
		return true, nil
	}
	if !shape.apply(im, args) {
		// Written with the rows created before it, so that rowids keep their order.
		return false, c.writeTable(ctx, t, ct)
	}
	im.position = t.position
	return true, c.bound(ctx, t, ct, args)
}

// bound counts the bytes a statement set and writes the table's images once they hold too
// many rows or bytes.
func (c *combiner) bound(ctx context.Context, t *Tx, ct *combineTable, args []any) error {
	for _, a := range args {
		switch v := a.(type) {
		case string:
			ct.bytes += len(v)
		case []byte:
			ct.bytes += len(v)
		case json.RawMessage:
			ct.bytes += len(v)
		}
	}
	if len(ct.images) >= maxImages || ct.bytes >= maxImageBytes {
		return c.writeTable(ctx, t, ct)
	}
	return nil
}

// unfollowed writes the images a statement the combiner cannot follow could see.
func (c *combiner) unfollowed(ctx context.Context, t *Tx, query string) error {
	table := statementTable(query)
	q := strings.TrimSpace(query)
	addsRows := !hasPrefixFold(q, "UPDATE ") && !hasPrefixFold(q, "DELETE ") && !hasPrefixFold(q, "SELECT ")
	for name, ct := range c.tables {
		if table != "" && name != table {
			continue
		}
		if err := c.writeTable(ctx, t, ct); err != nil {
			return err
		}
		ct.stopped = ct.stopped || addsRows
	}
	return nil
}

// read answers "SELECT column FROM t WHERE <every key column> = ?" into a *string from the
// images where it can (true); otherwise it writes the images the query could see and leaves
// the query to the caller (false). A key with no image that was never written is no row.
func (c *combiner) read(ctx context.Context, t *Tx, dest any, query string, args []any) (bool, error) {
	shape, parsed := c.reads[query]
	if !parsed {
		shape = c.parseRead(query)
		c.reads[query] = shape
	}
	if shape == nil {
		return false, c.before(ctx, t, query)
	}
	ct := c.tables[shape.table]
	key, ok := shape.key(args)
	switch {
	case ct == nil || ct.stopped:
		return false, nil // no images
	case !ok:
		return false, c.writeTable(ctx, t, ct)
	}
	im := ct.images[key]
	if im == nil {
		if _, done := ct.written[c.hash(key)]; done {
			return false, nil // the row is in the database, and no image can change what it reads
		}
		return true, sql.ErrNoRows
	}
	v, held := im.get(shape.column)
	text, isText := v.(string)
	out, toText := dest.(*string)
	if !held || !isText || !toText {
		return false, c.writeTable(ctx, t, ct)
	}
	*out = text
	return true, nil
}

// parseRead returns the shape of "SELECT column FROM t WHERE k1 = ? AND ..." naming every key
// column of a followed table once, nil for any other query.
func (c *combiner) parseRead(query string) *combineShape {
	q := strings.TrimSpace(query)
	if !hasPrefixFold(q, "SELECT ") {
		return nil
	}
	column := firstWord(q[len("SELECT "):])
	rest := strings.TrimLeft(q[len("SELECT "):], " \t\r\n")[len(column):]
	rest = strings.TrimLeft(rest, " \t\r\n")
	if column == "" || !hasPrefixFold(rest, "FROM ") {
		return nil
	}
	table := firstWord(rest[len("FROM "):])
	ct := c.tables[table]
	rest = strings.TrimLeft(strings.TrimLeft(rest[len("FROM "):], " \t\r\n")[len(table):], " \t\r\n")
	if ct == nil || !ct.columns[column] || !hasPrefixFold(rest, "WHERE ") {
		return nil
	}
	conds, ok := splitTopLevel(rest[len("WHERE "):], "AND")
	if !ok {
		return nil
	}
	s := &combineShape{table: table, column: column}
	if !s.parseKeyConditions(conds, ct) {
		return nil
	}
	return s
}

// before writes the images a read of query could see (Tx.get).
func (c *combiner) before(ctx context.Context, t *Tx, query string) error {
	table := statementTable(query)
	for name, ct := range c.tables {
		if table == "" || name == table {
			if err := c.writeTable(ctx, t, ct); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeAll writes every image.
func (c *combiner) writeAll(ctx context.Context, t *Tx) error {
	return c.before(ctx, t, "")
}

// writeTable inserts the table's images in the order they were created, as the statements
// would have inserted their rows.
func (c *combiner) writeTable(ctx context.Context, t *Tx, ct *combineTable) error {
	for i := 0; i < len(ct.order); {
		columns := ct.images[ct.order[i]].columns
		n := 1
		for n < rowsPerInsert && i+n < len(ct.order) && ct.images[ct.order[i+n]].columns == columns {
			n++
		}
		if err := c.writeRows(ctx, t, ct, columns, ct.order[i:i+n]); err != nil {
			return err
		}
		i += n
	}
	ct.order = ct.order[:0]
	ct.bytes = 0
	return nil
}

// rowsPerInsert is how many images of the same columns one INSERT writes: a statement costs
// database/sql and the driver about a microsecond and a half whatever its size.
const rowsPerInsert = 32

// writeRows inserts the images of keys, which hold the same columns, in one statement.
func (c *combiner) writeRows(ctx context.Context, t *Tx, ct *combineTable, columns *columnList, keys []string) error {
	args := c.args[:0]
	first, last := ^uint64(0), uint64(0)
	for _, key := range keys {
		im := ct.images[key]
		args = append(args, im.values...)
		first, last = min(first, im.position), max(last, im.position)
		delete(ct.images, key)
		ct.written[c.hash(key)] = struct{}{}
	}
	c.args = args[:0]
	stmt, err := t.prepared(ctx, columns.insertOf(ct.name, len(keys)))
	if err != nil {
		return err
	}
	if _, err := stmt.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("write %d rows of %s from the events at positions %d to %d: %w", len(keys), ct.name, first, last, err)
	}
	clear(args)
	return nil
}

func (c *combiner) hash(key string) uint64 { return maphash.String(c.seed, key) }
