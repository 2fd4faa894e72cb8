package projections

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/zuno-run/zuno/events"
)

// Folding rows during a rebuild (docs/storage.md, "Read models and projections"). A rebuild
// starts from empty tables in a transaction of its own, and a projector such as session writes
// each row several times (created, titled, a message, a turn...). A projector that folds gives
// the rebuild, instead of its statements, a fold: the projector's own rules applied to its rows
// held in memory, each row written once, many to an INSERT. What the fold cannot decide from
// the rows it holds (an event on a row already written, or one that a statement would refuse)
// it leaves to the projector's statements, after writing what it holds, so the table gets what
// running the statements one by one gives. The live path (catching up) runs the statements.

// folding is a projector that can fold its rows during a rebuild.
type folding interface {
	Projector
	// fold returns a fresh fold for one rebuild.
	fold() fold
}

// fold is a projector's rebuild-only mode: Apply as the projector's, then flush, which
// writes every row still held.
type fold interface {
	Apply(ctx context.Context, tx *Tx, ev events.Recorded, payload events.Payload) error
	flush(ctx context.Context, tx *Tx) error
}

// foldLimit bounds the rows a fold holds per table, and foldBytes the bytes of their large
// values (a part's data holds a tool's output): past either, the oldest half is written. A
// log's sessions overlap in time but few stay open for long, so a written row is rarely
// touched again (that costs its statement, as catching up does) and memory stays bounded
// whatever the log's length.
var (
	foldLimit = 8192
	foldBytes = 32 << 20
)

// foldInsertRows is how many rows one of a fold's INSERTs writes on SQLite (Postgres batches
// single-row INSERTs itself, batch.go).
const foldInsertRows = 32

// rowState is where a row of a fold's table is.
type rowState int

const (
	// rowAbsent: no event of the rebuild created it, so the table, emptied when the rebuild
	// began and written only by its projector, does not hold it.
	rowAbsent rowState = iota
	// rowHeld: held in memory, not written yet.
	rowHeld
	// rowWritten: in the table; only the projector's statements change it now.
	rowWritten
)

// rowFold holds the rows of one table that a fold has created and not written yet, in the
// order they were created: written in that order, they get the rowids (SQLite's order of a
// scan without ORDER BY) the statements give them.
type rowFold[K comparable, R any] struct {
	table   string
	columns []string
	// values appends a row's column values to args, in columns' order, typed as the
	// projector's statements bind them (a stored value's type follows the bound value's).
	values func(r *R, args []any) []any
	// size is the length of a row's large values, or nil where the table has none.
	size func(*R) int
	// refused reports whether a row holds a value Postgres refuses (unheldable). It takes the
	// row by value: a pointer given to a function value escapes, and every event's new row
	// would be allocated on the heap even where it only updates a held one.
	refused func(R) bool
	// finish, where set, computes what a row holds unencoded (a plan's steps) before the row
	// is written: a row changed many times is encoded once.
	finish func(*R) error

	// rows holds each key the fold has seen: its held row, or written (a row the table holds,
	// which only the statements change now). One map, so that finding where a row is costs one
	// lookup, and writing a held row replaces its entry instead of moving its key to another map.
	rows    map[K]*R
	written *R  // the entry of a written row
	order   []K // held keys, oldest first
	bytes   int // the held rows' size

	inserts map[int]string // INSERT statements by their number of rows
}

func newRowFold[K comparable, R any](table string, columns []string, values func(*R, []any) []any, refused func(R) bool) *rowFold[K, R] {
	// Room for foldLimit rows from the start: a rebuild of a log of any size holds that many,
	// and growing the map there rehashes every key on the way.
	return &rowFold[K, R]{table: table, columns: columns, values: values, refused: refused, rows: make(map[K]*R, foldLimit),
		written: new(R), inserts: map[int]string{}}
}

func (f *rowFold[K, R]) sizeOf(r *R) int {
	if f.size == nil {
		return 0
	}
	return f.size(r)
}

// unheldable reports whether r holds a value a fold leaves to the statements: a text with a
// NUL character, which Postgres's TEXT refuses, or a number past 32 bits in a column Postgres
// declares INTEGER (SQLite stores both). Held and then replaced
// before it is written, such a value would be in a row the statements never wrote, and the
// rebuild would succeed where catching up fails; so the fold writes what it holds and hands the
// event to its statement, which refuses it, in its own words, at that event (or, on SQLite,
// stores it, as catching up does).
func (f *rowFold[K, R]) unheldable(r *R) bool { return f.refused(*r) }

// hasNUL reports whether a text value holds a NUL character: strings, and NULL-or-text values.
func hasNUL(values ...any) bool {
	for _, v := range values {
		if s, ok := v.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
	return false
}

// pastInt32 reports whether a value of an INTEGER column is outside its 32 bits.
func pastInt32(values ...int64) bool {
	for _, v := range values {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return true
		}
	}
	return false
}

// anyNUL is hasNUL of strings, without converting each to an interface (a rebuild checks
// every row it holds).
func anyNUL(values ...string) bool {
	for _, s := range values {
		if strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
	return false
}

// wrote records that a statement wrote k's row: the events after go to the statements.
func (f *rowFold[K, R]) wrote(k K) { f.rows[k] = f.written }

// row returns k's row if held, and where the row is.
func (f *rowFold[K, R]) row(k K) (*R, rowState) {
	switch r, ok := f.rows[k]; {
	case !ok:
		return nil, rowAbsent
	case r == f.written:
		return nil, rowWritten
	default:
		return r, rowHeld
	}
}

// create holds a new row under k, which must be absent; past foldLimit the oldest half of
// the held rows is written.
func (f *rowFold[K, R]) create(ctx context.Context, tx *Tx, k K, r R) error {
	f.rows[k] = &r
	f.order = append(f.order, k)
	return f.resized(ctx, tx, f.sizeOf(&r))
}

// resized records that the held rows grew by delta bytes (a held row changed, or one was
// created); past foldLimit or foldBytes, the oldest half of the held rows is written.
func (f *rowFold[K, R]) resized(ctx context.Context, tx *Tx, delta int) error {
	f.bytes += delta
	if len(f.order) <= foldLimit && f.bytes <= foldBytes {
		return nil
	}
	return f.write(ctx, tx, (len(f.order)+1)/2)
}

// flush writes every held row.
func (f *rowFold[K, R]) flush(ctx context.Context, tx *Tx) error {
	return f.write(ctx, tx, len(f.order))
}

// write writes the n oldest held rows, in the order they were created, and marks them written.
// On Postgres each row is one INSERT, which the transaction batches (batch.go); on SQLite
// foldInsertRows rows go to an INSERT, each shape prepared once per transaction.
func (f *rowFold[K, R]) write(ctx context.Context, tx *Tx, n int) error {
	per := 1
	if tx.schemas == nil {
		per = foldInsertRows
	}
	args := make([]any, 0, per*len(f.columns))
	for done := 0; done < n; {
		rows := per
		if n-done < per {
			rows = 1
		}
		args = args[:0]
		for _, k := range f.order[done : done+rows] {
			r := f.rows[k]
			if f.finish != nil {
				if err := f.finish(r); err != nil {
					return err
				}
			}
			args = f.values(r, args)
			f.bytes -= f.sizeOf(r)
			f.rows[k] = f.written
		}
		if err := tx.Exec(ctx, f.insert(rows), args...); err != nil {
			return fmt.Errorf("write %d folded rows into %s: %w", rows, f.table, err)
		}
		done += rows
	}
	f.order = append(f.order[:0], f.order[n:]...)
	return nil
}

// insert is INSERT INTO the table (columns) VALUES (?, ...) with n rows.
func (f *rowFold[K, R]) insert(n int) string {
	if q, ok := f.inserts[n]; ok {
		return q
	}
	row := "(" + strings.Repeat("?, ", len(f.columns)-1) + "?)"
	rows := make([]string, n)
	for i := range rows {
		rows[i] = row
	}
	q := "INSERT INTO " + f.table + " (" + strings.Join(f.columns, ", ") + ") VALUES " + strings.Join(rows, ", ")
	f.inserts[n] = q
	return q
}
