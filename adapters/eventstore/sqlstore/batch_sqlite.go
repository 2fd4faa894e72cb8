package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// sqliteBatcher decides a batch in Go, inside one BEGIN IMMEDIATE transaction on the writer's
// single connection, with statements prepared once: SQLite runs in process, so the cost of an
// append is statement work, not round trips.
type sqliteBatcher struct {
	dataVersion, lastPosition, storedByID, revisions, insert, undo *sqlx.Stmt
	known                                                          knownHeads
	cur                                                            *sqliteBatch // the batch being written, if any
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
		// Read only for an append the log refuses or whose expected revision fails (decide).
		{&b.storedByID, `SELECT ` + columns + ` FROM event_log WHERE event_id IN (SELECT value FROM json_each(?))`},
		// One index probe per stream; a GROUP BY over an IN list would scan.
		// The head's hash is the link the stream's next event chains to (events.Seal).
		{&b.revisions, `SELECT j.value, h.stream_revision, json_extract(h.metadata, '$.hash') FROM json_each(?) j
			LEFT JOIN event_log h ON h.stream = j.value
			 AND h.stream_revision = (SELECT MAX(stream_revision) FROM event_log e WHERE e.stream = j.value)`},
		{&b.insert, `INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`},
		// Takes back the events of an append refused at a later event (insertAppend).
		{&b.undo, `DELETE FROM event_log WHERE position >= ?`},
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
	for _, s := range []*sqlx.Stmt{b.dataVersion, b.lastPosition, b.storedByID, b.revisions, b.insert, b.undo} {
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

// sqliteBatch is a batch being written, in one transaction: what it has decided so far. The
// writer writes a batch's appends as they come (lane.fill gives it each part before it waits
// for more), so that the statements run while the appenders answered by the last commit are
// still coming back, then commits.
type sqliteBatch struct {
	tx       *sqlx.Tx
	insert   *sqlx.Stmt
	undo     *sqlx.Stmt
	last     uint64                     // the log's last position, in the transaction
	heads    map[string]streamHead      // the batch's streams' heads, in the transaction
	stored   map[string]events.Recorded // the events the batch inserted, by id
	replies  []appendReply              // one per append decided, in batch order
	inserted int                        // events inserted
	err      error                      // the first failure: the batch is rolled back
}

// write decides and writes part, the next appends of the batch being written, beginning one
// when none is. After a failure it writes nothing more: commitSQLite reports it.
func (b *sqliteBatcher) write(ctx context.Context, writer *sqlx.DB, part []*appendRequest) {
	if b.cur == nil {
		b.cur = &sqliteBatch{heads: map[string]streamHead{}, stored: map[string]events.Recorded{}}
		b.cur.err = b.begin(ctx, writer, b.cur)
	}
	if b.cur.err == nil && len(part) > 0 {
		b.cur.err = b.decide(ctx, b.cur, part)
	}
}

// begin opens the batch's transaction and finds where the log ends.
func (b *sqliteBatcher) begin(ctx context.Context, writer *sqlx.DB, c *sqliteBatch) error {
	tx, err := writer.BeginTxx(ctx, nil) // BEGIN IMMEDIATE: the writer DSN says so
	if err != nil {
		return fmt.Errorf("begin append transaction: %w", err)
	}
	c.tx, c.insert, c.undo = tx, tx.StmtxContext(ctx, b.insert), tx.StmtxContext(ctx, b.undo)
	var version int64
	if err := tx.StmtxContext(ctx, b.dataVersion).GetContext(ctx, &version); err != nil {
		return fmt.Errorf("read data version: %w", err)
	}
	if !b.known.valid || b.known.version != version {
		b.known = knownHeads{version: version, heads: map[string]streamHead{}}
		if err := tx.StmtxContext(ctx, b.lastPosition).GetContext(ctx, &b.known.last); err != nil {
			return fmt.Errorf("read last position: %w", err)
		}
		b.known.valid = true
	}
	c.last = b.known.last
	return nil
}

// decide decides each append of part on its own and inserts the events of those that hold.
// Event ids are not looked up first: the log's unique index on them refuses an id already
// stored, and only then, or when an append's expected revision does not hold (it may be a
// retry of one that did), are its events read (lookUp). Looking up every batch's ids cost a
// query per part, a tenth of the writer's time.
func (b *sqliteBatcher) decide(ctx context.Context, c *sqliteBatch, part []*appendRequest) error {
	if err := b.readHeads(ctx, c, part); err != nil {
		return err
	}
	for _, r := range part {
		reply, err := b.decideOne(ctx, c, r)
		if err != nil {
			return err
		}
		c.replies = append(c.replies, reply)
	}
	return nil
}

func (b *sqliteBatcher) decideOne(ctx context.Context, c *sqliteBatch, r *appendRequest) (appendReply, error) {
	if err := r.ctx.Err(); err != nil {
		return appendReply{outcome: storemetrics.OutcomeError, err: err}, nil
	}
	if known := knownEvents(r.evs, c.stored); len(known) > 0 { // written earlier in this batch
		return retryReply(r, known), nil
	}
	head := c.heads[r.stream]
	if !r.expected.Allows(head.revision) {
		known, err := b.lookUp(ctx, c, r.evs)
		switch {
		case err != nil:
			return appendReply{}, err
		case len(known) > 0:
			return retryReply(r, known), nil
		}
		return wrongRevision(r, head.revision), nil
	}
	res, newHead, err := c.insertAppend(ctx, r, head)
	if isConstraint(err) {
		known, lookErr := b.lookUp(ctx, c, r.evs)
		if lookErr != nil {
			return appendReply{}, lookErr
		}
		if len(known) > 0 {
			return retryReply(r, known), nil
		}
	}
	if err != nil {
		return appendReply{}, err
	}
	c.heads[r.stream], c.last = newHead, res.LastPosition
	c.inserted += len(r.evs)
	return appendReply{result: res, outcome: storemetrics.OutcomeOK}, nil
}

// isConstraint says a statement was refused by a constraint of the table (SQLITE_CONSTRAINT).
func isConstraint(err error) bool {
	var liteErr *sqlite.Error
	return errors.As(err, &liteErr) && liteErr.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// readHeads adds the heads of part's streams the batch has not met yet: from knownHeads, else
// from the database.
func (b *sqliteBatcher) readHeads(ctx context.Context, c *sqliteBatch, part []*appendRequest) error {
	var unknown []string
	for _, r := range part {
		if _, ok := c.heads[r.stream]; ok {
			continue
		}
		if h, ok := b.known.heads[r.stream]; ok {
			c.heads[r.stream] = h
		} else {
			c.heads[r.stream] = streamHead{revision: -1} // until read below
			unknown = append(unknown, r.stream)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	read, err := b.streamHeads(ctx, c.tx, unknown)
	for st, h := range read {
		c.heads[st] = h
	}
	return err
}

// ended records where a batch left the log, once it has committed (or wrote nothing).
func (b *sqliteBatcher) ended(c *sqliteBatch) {
	if len(b.known.heads)+len(c.heads) > maxKnownStreams {
		clear(b.known.heads)
	}
	b.known.last = c.last
	for st, h := range c.heads {
		b.known.heads[st] = h
	}
}

// commitSQLite writes what of the batch is not written yet (write) and commits it.
func (s *Store) commitSQLite(b *sqliteBatcher) func(context.Context, []*appendRequest) ([]appendReply, error) {
	return func(ctx context.Context, batch []*appendRequest) ([]appendReply, error) {
		written := 0
		if b.cur != nil {
			written = len(b.cur.replies)
		}
		b.write(ctx, s.writer, batch[written:])
		c := b.cur
		b.cur = nil
		if c.tx != nil {
			defer c.tx.Rollback()
		}
		err := c.err
		if err == nil && c.inserted > 0 {
			if err = c.tx.Commit(); err != nil {
				err = fmt.Errorf("commit appends: %w", err)
			}
		}
		if err != nil {
			b.known.valid = false // whatever the failed batch read or wrote may not be so
			return nil, err
		}
		b.ended(c)
		if c.inserted > 0 {
			s.committed(c.inserted)
		}
		return c.replies, nil
	}
}

// insertAppend seals and inserts one append's events after head, the first at the log's
// next position, and adds them to the batch's (a retry later in the batch must see them). It
// returns the append's result and the stream's new head.
func (c *sqliteBatch) insertAppend(ctx context.Context, r *appendRequest, head streamHead) (events.AppendResult, streamHead, error) {
	rev, last := uint64(head.revision+1), c.last
	sealed, metadata := events.SealPrepared(head.hash, rev, r.evs, r.prepared)
	res := events.AppendResult{FirstPosition: last + 1}
	for i, ev := range sealed {
		last++
		if _, err := c.insert.ExecContext(ctx, int64(last), ev.ID, r.stream, int64(rev), ev.Type, string(ev.Data), string(metadata[i])); err != nil {
			err = fmt.Errorf("insert event %s: %w", ev.ID, err)
			if i > 0 { // the refused statement wrote nothing; the append's events before it did
				if _, undoErr := c.undo.ExecContext(ctx, int64(res.FirstPosition)); undoErr != nil {
					return events.AppendResult{}, head, fmt.Errorf("%w (taking back %s's events: %v)", err, r.stream, undoErr)
				}
				for _, done := range sealed[:i] {
					delete(c.stored, done.ID)
				}
			}
			return events.AppendResult{}, head, err
		}
		c.stored[ev.ID] = events.Recorded{Event: ev, Stream: r.stream, StreamRevision: rev, Position: last}
		rev++
	}
	res.NextRevision, res.LastPosition = rev-1, last
	return res, streamHead{revision: int64(rev - 1), hash: sealed[len(sealed)-1].Metadata.Hash}, nil
}

// lookUp returns the stored events among evs.
func (b *sqliteBatcher) lookUp(ctx context.Context, c *sqliteBatch, evs []events.Event) ([]events.Recorded, error) {
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	idList, _ := json.Marshal(ids)
	rows, err := c.tx.StmtxContext(ctx, b.storedByID).QueryContext(ctx, string(idList))
	if err != nil {
		return nil, fmt.Errorf("look up event ids: %w", err)
	}
	known, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("look up event ids: %w", err)
	}
	return known, nil
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
	out := make(map[string]streamHead, len(streams))
	for _, st := range streams {
		out[st] = streamHead{revision: -1}
	}
	return out, scanHeads(rows, out)
}

// scanHeads reads rows of (stream, revision, hash), a NULL revision being no stream, into
// heads, and closes rows. A stream with no row keeps the head it had in heads.
func scanHeads(rows *sql.Rows, heads map[string]streamHead) error {
	defer rows.Close()
	for rows.Next() {
		var stream string
		var rev sql.NullInt64
		var hash sql.NullString
		if err := rows.Scan(&stream, &rev, &hash); err != nil {
			return err
		}
		if rev.Valid {
			heads[stream] = streamHead{revision: rev.Int64, hash: hash.String}
		}
	}
	return rows.Err()
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
