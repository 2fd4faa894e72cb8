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
	dataVersion, lastPosition, storedByID, revisions, insert *sqlx.Stmt
	known                                                    knownHeads
}

func newSQLiteBatcher(ctx context.Context, db *sqlx.DB) (*sqliteBatcher, error) {
	b := &sqliteBatcher{}
	for _, p := range []struct {
		stmt  **sqlx.Stmt
		query string
	}{
		// Changes when another connection commits to the file (knownHeads).
		{&b.dataVersion, `PRAGMA data_version`},
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
	for _, s := range []*sqlx.Stmt{b.dataVersion, b.lastPosition, b.storedByID, b.revisions, b.insert} {
		if s != nil {
			s.Close()
		}
	}
	return nil
}

// knownHeads is where the log ended after this connection's last batch: its last position and
// the heads of the streams it read or wrote. It stays true while no other connection commits to
// the file, which SQLite tells by PRAGMA data_version (unchanged by this connection's own
// commits); then a batch reads only the heads of streams it has not seen, not every stream's
// head and the log's end (each a query per batch, the head's hash read out of the metadata
// JSON). Another process appending, or the read models' connections writing to the same
// file, make the next batch read them all again.
type knownHeads struct {
	valid   bool
	version int64
	last    uint64
	heads   map[string]streamHead
}

// maxKnownStreams bounds the streams knownHeads remembers; past it, it forgets them all.
const maxKnownStreams = 4096

// begin returns the log's last position and the known heads of streams, under the write lock,
// reading from the database what is not known.
func (b *sqliteBatcher) begin(ctx context.Context, tx *sqlx.Tx, streams []string) (uint64, map[string]streamHead, error) {
	var version int64
	if err := tx.StmtxContext(ctx, b.dataVersion).GetContext(ctx, &version); err != nil {
		return 0, nil, fmt.Errorf("read data version: %w", err)
	}
	if !b.known.valid || b.known.version != version {
		b.known = knownHeads{version: version, heads: map[string]streamHead{}}
		if err := tx.StmtxContext(ctx, b.lastPosition).GetContext(ctx, &b.known.last); err != nil {
			return 0, nil, fmt.Errorf("read last position: %w", err)
		}
		b.known.valid = true
	}
	heads := make(map[string]streamHead, len(streams))
	var unknown []string
	for _, st := range streams {
		if h, ok := b.known.heads[st]; ok {
			heads[st] = h
		} else {
			unknown = append(unknown, st)
		}
	}
	if len(unknown) > 0 {
		read, err := b.streamHeads(ctx, tx, unknown)
		if err != nil {
			return 0, nil, err
		}
		for st, h := range read {
			heads[st] = h
		}
	}
	return b.known.last, heads, nil
}

// ended records where a batch left the log, once it has committed (or wrote nothing).
func (b *sqliteBatcher) ended(last uint64, heads map[string]streamHead) {
	if len(b.known.heads)+len(heads) > maxKnownStreams {
		clear(b.known.heads)
	}
	b.known.last = last
	for st, h := range heads {
		b.known.heads[st] = h
	}
}

func (s *Store) commitSQLite(b *sqliteBatcher) func(context.Context, []*appendRequest) ([]appendReply, error) {
	return func(ctx context.Context, batch []*appendRequest) (replies []appendReply, err error) {
		defer func() {
			if err != nil { // whatever the failed batch read or wrote may not be so
				b.known.valid = false
			}
		}()
		tx, err := s.writer.BeginTxx(ctx, nil) // BEGIN IMMEDIATE: the writer DSN says so
		if err != nil {
			return nil, fmt.Errorf("begin append transaction: %w", err)
		}
		defer tx.Rollback()
		ids, streams := batchKeys(batch)
		last, heads, err := b.begin(ctx, tx, streams)
		if err != nil {
			return nil, err
		}
		stored, err := b.storedEvents(ctx, tx, ids)
		if err != nil {
			return nil, err
		}
		replies = make([]appendReply, len(batch))
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
			if !r.expected.Allows(head.revision) {
				replies[i] = wrongRevision(r, head.revision)
				continue
			}
			res, newHead, err := insertAppend(ctx, insert, r, head, last, stored)
			if err != nil {
				return nil, err
			}
			heads[r.stream], last = newHead, res.LastPosition
			inserted += len(r.evs)
			replies[i] = appendReply{result: res, outcome: storemetrics.OutcomeOK}
		}
		if inserted > 0 {
			if err := tx.Commit(); err != nil {
				return nil, fmt.Errorf("commit appends: %w", err)
			}
			s.committed(inserted)
		}
		b.ended(last, heads)
		return replies, nil
	}
}

// insertAppend seals and inserts one append's events after head, the first at position
// last+1, and adds them to stored (a retry later in the same batch must see them). It returns
// the append's result and the stream's new head.
func insertAppend(ctx context.Context, insert *sqlx.Stmt, r *appendRequest, head streamHead, last uint64,
	stored map[string]events.Recorded) (events.AppendResult, streamHead, error) {
	rev := uint64(head.revision + 1)
	sealed, metadata, err := events.SealEncoded(r.stream, head.hash, rev, r.evs)
	if err != nil {
		return events.AppendResult{}, head, fmt.Errorf("hash events of %s: %w", r.stream, err)
	}
	res := events.AppendResult{FirstPosition: last + 1}
	for i, ev := range sealed {
		last++
		if _, err := insert.ExecContext(ctx, int64(last), ev.ID, r.stream, int64(rev), ev.Type, string(ev.Data), string(metadata[i])); err != nil {
			return events.AppendResult{}, head, fmt.Errorf("insert event %s: %w", ev.ID, err)
		}
		stored[ev.ID] = events.Recorded{Event: ev, Stream: r.stream, StreamRevision: rev, Position: last}
		rev++
	}
	res.NextRevision, res.LastPosition = rev-1, last
	return res, streamHead{revision: int64(rev - 1), hash: sealed[len(sealed)-1].Metadata.Hash}, nil
}

// storedEvents returns the stored events among ids, by id.
func (b *sqliteBatcher) storedEvents(ctx context.Context, tx *sqlx.Tx, ids []string) (map[string]events.Recorded, error) {
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
	return stored, nil
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
