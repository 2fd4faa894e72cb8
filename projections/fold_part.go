package projections

import (
	"context"

	"github.com/zuno-run/zuno/events"
)

var partColumns = []string{"id", "session_id", "turn_id", "request_id", "type", "data", "position", "ordinal",
	"time_created", "time_updated"}

func partValues(r *partRow, args []any) []any {
	return append(args, r.id, r.sessionID, r.turnID, r.requestID, r.typ, r.data, r.position, int64(r.ordinal), r.created, r.updated)
}

// partRefused: the data column is JSON, which writes a NUL as an escape; ordinal is an
// INTEGER.
func partRefused(r partRow) bool {
	return pastInt32(int64(r.ordinal)) || anyNUL(r.id, r.sessionID, r.typ, r.created, r.updated) || hasNUL(r.turnID, r.requestID)
}

// partFold is Parts' rebuild-only mode (fold.go): Parts' rules (applyPart) on rows held in
// memory. A tool part is written up to five times (pending, asking, blocked or running,
// settled), and each change read the row first.
type partFold struct{ rows *rowFold[rowKey, partRow] }

func (Parts) fold() fold {
	rows := newRowFold[rowKey](`part`, partColumns, partValues, partRefused)
	rows.size = func(r *partRow) int { return len(r.data) }
	return &partFold{rows: rows}
}

func (f *partFold) flush(ctx context.Context, tx *Tx) error { return f.rows.flush(ctx, tx) }

func (f *partFold) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	return applyPart(ctx, tx, f, ev, p)
}

// upsert is partStatements.upsert on a held row.
func (f *partFold) upsert(ctx context.Context, tx *Tx, r partRow) error {
	k := rowKey{r.sessionID, r.id}
	if f.rows.unheldable(&r) {
		if err := f.rows.flush(ctx, tx); err != nil {
			return err
		}
		if err := (partStatements{}).upsert(ctx, tx, r); err != nil {
			return err
		}
		f.rows.wrote(k)
		return nil
	}
	switch held, state := f.rows.row(k); state {
	case rowAbsent:
		return f.rows.create(ctx, tx, k, r)
	case rowHeld:
		delta := len(r.data) - len(held.data)
		held.turnID, held.requestID, held.typ, held.data, held.updated = r.turnID, r.requestID, r.typ, r.data, r.updated
		return f.rows.resized(ctx, tx, delta)
	}
	return partStatements{}.upsert(ctx, tx, r)
}

// data is partStatements.data of a held row.
func (f *partFold) data(ctx context.Context, tx *Tx, sessionID, id string) (string, bool, error) {
	switch held, state := f.rows.row(rowKey{sessionID, id}); state {
	case rowAbsent:
		return "", false, nil
	case rowHeld:
		return held.data, true, nil
	}
	return partStatements{}.data(ctx, tx, sessionID, id)
}
