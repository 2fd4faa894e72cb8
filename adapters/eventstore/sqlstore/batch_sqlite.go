package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// sqliteBatcher decides a batch in Go, inside one BEGIN IMMEDIATE transaction on the writer's
// single connection, with statements prepared once: SQLite runs in process, so the cost of an
// append is statement work, not round trips.
type sqliteBatcher struct {
	lastPosition, storedByID, revisions, insert *sqlx.Stmt
}

func newSQLiteBatcher(ctx context.Context, db *sqlx.DB) (*sqliteBatcher, error) {
	b := &sqliteBatcher{}
	for _, p := range []struct {
		stmt  **sqlx.Stmt
		query string
	}{
		{&b.lastPosition, `SELECT COALESCE(MAX(position), 0) FROM event_log`},
		// Id lists and stream lists travel as one JSON array, so each statement is prepared once.
		{&b.storedByID, `SELECT ` + columns + ` FROM event_log WHERE event_id IN (SELECT value FROM json_each(?))`},
		// One index probe per stream; a GROUP BY over an IN list would scan.
		// The head's hash is the link the stream's next event chains to (events.Seal).
		{&b.revisions, `SELECT j.value, h.stream_revision, json_extract(h.metadata, '$.hash') FROM json_each(?) j
			LEFT JOIN event_log h ON h.stream = j.value
			 AND h.stream_revision = (SELECT MAX(stream_revision) FROM event_log e WHERE e.stream = j.value)`},
		{&b.insert, `INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`},
	} {
		stmt, err := db.PreparexContext(ctx, p.query)
		if err != nil {
			b.close()
			return nil, fmt.Errorf("prepare %q: %w", p.query, err)
		}
		*p.stmt = stmt
	}
	return b, nil
}

func (b *sqliteBatcher) close() error {
	for _, s := range []*sqlx.Stmt{b.lastPosition, b.storedByID, b.revisions, b.insert} {
		if s != nil {
			s.Close()
		}
	}
	return nil
}

func (s *Store) commitSQLite(b *sqliteBatcher) func(context.Context, []*appendRequest) ([]appendReply, error) {
	return func(ctx context.Context, batch []*appendRequest) ([]appendReply, error) {
		tx, err := s.writer.BeginTxx(ctx, nil) // BEGIN IMMEDIATE: the writer DSN says so
		if err != nil {
			return nil, fmt.Errorf("begin append transaction: %w", err)
		}
		defer tx.Rollback()
		var last uint64
		if err := tx.StmtxContext(ctx, b.lastPosition).GetContext(ctx, &last); err != nil {
			return nil, fmt.Errorf("read last position: %w", err)
		}
		ids, streams := batchKeys(batch)
		idList, _ := json.Marshal(ids)
		rows, err := tx.StmtxContext(ctx, b.storedByID).QueryContext(ctx, string(idList))
		if err != nil {
			return nil, fmt.Errorf("look up event ids: %w", err)
		}
		recs, err := scanRecords(rows)
		if err != nil {
			return nil, fmt.Errorf("look up event ids: %w", err)
		}
		stored := make(map[string]events.Recorded, len(recs))
		for _, r := range recs {
			stored[r.ID] = r
		}
		heads, err := b.streamHeads(ctx, tx, streams)
		if err != nil {
			return nil, err
		}
		replies := make([]appendReply, len(batch))
		inserted := 0
		insert := tx.StmtxContext(ctx, b.insert)
		for i, r := range batch {
			if err := r.ctx.Err(); err != nil {
				replies[i] = appendReply{outcome: storemetrics.OutcomeError, err: err}
				continue
			}
			if known := knownEvents(r.evs, stored); len(known) > 0 {
				replies[i] = retryReply(r, known)
				continue
			}
			head := heads[r.stream]
			current := head.revision
			if !r.expected.Allows(current) {
				replies[i] = wrongRevision(r, current)
				continue
			}
			sealed, err := events.Seal(r.stream, head.hash, uint64(current+1), r.evs)
			if err != nil {
				return nil, fmt.Errorf("hash events of %s: %w", r.stream, err)
			}
			res := events.AppendResult{FirstPosition: last + 1}
			for _, ev := range sealed {
				md, err := json.Marshal(ev.Metadata)
				if err != nil {
					return nil, fmt.Errorf("encode metadata of %s: %w", ev.ID, err)
				}
				current++
				last++
				if _, err := insert.ExecContext(ctx, int64(last), ev.ID, r.stream, current, ev.Type, string(ev.Data), string(md)); err != nil {
					return nil, fmt.Errorf("insert event %s: %w", ev.ID, err)
				}
				// A retry later in the same batch must see it.
				stored[ev.ID] = events.Recorded{Event: ev, Stream: r.stream, StreamRevision: uint64(current), Position: last}
				inserted++
			}
			heads[r.stream] = streamHead{revision: current, hash: sealed[len(sealed)-1].Metadata.Hash}
			res.NextRevision, res.LastPosition = uint64(current), last
			replies[i] = appendReply{result: res, outcome: storemetrics.OutcomeOK}
		}
		if inserted == 0 {
			return replies, nil
		}
		if err := tx.Commit(); err != nil {
			return nil, fmt.Errorf("commit appends: %w", err)
		}
		s.committed(inserted)
		return replies, nil
	}
}

// streamHead is where a stream ends: its last revision (-1: no stream) and that event's hash.
type streamHead struct {
	revision int64
	hash     string
}

func (b *sqliteBatcher) streamHeads(ctx context.Context, tx *sqlx.Tx, streams []string) (map[string]streamHead, error) {
	list, _ := json.Marshal(streams)
	rows, err := tx.StmtxContext(ctx, b.revisions).QueryContext(ctx, string(list))
	if err != nil {
		return nil, fmt.Errorf("read stream revisions: %w", err)
	}
	defer rows.Close()
	out := make(map[string]streamHead, len(streams))
	for _, st := range streams {
		out[st] = streamHead{revision: -1}
	}
	for rows.Next() {
		var stream string
		var rev *int64
		var hash *string
		if err := rows.Scan(&stream, &rev, &hash); err != nil {
			return nil, err
		}
		if rev != nil {
			out[stream] = streamHead{revision: *rev, hash: deref(hash)}
		}
	}
	return out, rows.Err()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// batchKeys lists the batch's event ids and its distinct streams.
func batchKeys(batch []*appendRequest) (ids, streams []string) {
	seen := map[string]bool{}
	for _, r := range batch {
		if !seen[r.stream] {
			seen[r.stream] = true
			streams = append(streams, r.stream)
		}
		for _, ev := range r.evs {
			ids = append(ids, ev.ID)
		}
	}
	return ids, streams
}

func knownEvents(evs []events.Event, stored map[string]events.Recorded) []events.Recorded {
	var known []events.Recorded
	for _, ev := range evs {
		if r, ok := stored[ev.ID]; ok {
			known = append(known, r)
		}
	}
	return known
}

// retryReply answers an append some of whose ids are stored: the original result for an
// exact retry, else the conflict.
func retryReply(r *appendRequest, known []events.Recorded) appendReply {
	res, err := events.MatchRetry(r.stream, r.evs, known)
	if err != nil {
		return appendReply{outcome: storemetrics.OutcomeConflict, err: err}
	}
	return appendReply{result: res, outcome: storemetrics.OutcomeDuplicate}
}

func wrongRevision(r *appendRequest, current int64) appendReply {
	return appendReply{outcome: storemetrics.OutcomeConflict,
		err: &events.WrongExpectedRevisionError{Stream: r.stream, Expected: r.expected, Actual: current}}
}
