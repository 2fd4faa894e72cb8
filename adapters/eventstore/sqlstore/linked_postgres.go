package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// Known heads on Postgres (docs/storage.md, "Known heads"). A lone append to a stream whose
// head the store knows is written by zuno_append_linked (migration postgres/eventlog/0008):
// the store links the events into the hash chain itself and the function only reserves
// positions and inserts, without reading the head. Knowledge that has gone stale (another
// process appended) cannot store a wrong event: the revision it would write is taken, the
// insert fails on the log's unique key, and the append runs through zuno_append instead.

// linkedSQL calls zuno_append_linked; it is prepared once per connection, as appendSQL is.
const linkedSQL = `SELECT zuno_append_linked($1, $2, $3, $4, $5, $6)`

// headSQL reads a stream's head as committed: its revision and its hash ("" when written before
// the hash chain, as zuno_append reads it).
const headSQL = `SELECT stream_revision, COALESCE(metadata->>'hash', '') FROM event_log
	WHERE stream = $1 ORDER BY stream_revision DESC LIMIT 1`

// pgKnownHeads remembers the heads of the streams this process appended to on Postgres, each
// from an acknowledged append of this store or a read of committed events: a head that was
// true once, and may only have been passed since. At most maxKnownStreams are kept (past that,
// all are forgotten). A stream's appends are written by one lane at a time, so only a map
// shared by the lanes needs the lock.
type pgKnownHeads struct {
	mu    sync.Mutex
	heads map[string]streamHead
}

func (k *pgKnownHeads) get(stream string) (streamHead, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	h, ok := k.heads[stream]
	return h, ok
}

func (k *pgKnownHeads) set(stream string, h streamHead) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.heads == nil || len(k.heads) >= maxKnownStreams {
		k.heads = map[string]streamHead{}
	}
	k.heads[stream] = h
}

func (k *pgKnownHeads) forget(stream string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.heads, stream)
}

// appendLinked writes r, the only append of its batch, through zuno_append_linked when the
// store knows (or reads) its stream's head and r's expectation holds there. It reports whether
// it answered r; when it did not, zuno_append decides r: its expectation fails at the known
// head (a conflict, or a retry of a stored append, which zuno_append tells apart), the head
// could not be read, or the linked insert collided with what is stored.
func (s *Store) appendLinked(ctx context.Context, r *appendRequest) (appendReply, bool, error) {
	if r.ctx.Err() != nil {
		return appendReply{}, false, nil
	}
	head, known := s.heads.get(r.stream)
	if !known {
		var err error
		if head, err = s.readHead(ctx, r.stream, r.expected); err != nil {
			return appendReply{}, false, nil // zuno_append reads it again, and reports its error
		}
	}
	if !r.expected.Allows(head.revision) {
		s.linkedResult(storemetrics.LinkedFellBack)
		return appendReply{}, false, nil
	}
	first := uint64(head.revision + 1)
	sealed, metas := events.SealPrepared(head.hash, first, r.evs, r.prepared)
	pos, err := s.insertLinked(ctx, r, first, metas)
	if err != nil {
		s.heads.forget(r.stream)
		if retriable(err) {
			s.linkedResult(storemetrics.LinkedFellBack)
			return appendReply{}, false, nil
		}
		return appendReply{}, true, fmt.Errorf("append: %w", err)
	}
	if known || r.expected.IsNoStream() {
		s.linkedResult(storemetrics.LinkedWritten)
	} else {
		s.linkedResult(storemetrics.LinkedAfterRead)
	}
	n := int64(len(r.evs))
	s.heads.set(r.stream, streamHead{revision: head.revision + n, hash: sealed[n-1].Metadata.Hash})
	s.committed(len(r.evs))
	return appendReply{outcome: storemetrics.OutcomeOK, result: events.AppendResult{
		FirstPosition: uint64(pos), LastPosition: uint64(pos + n - 1), NextRevision: uint64(head.revision + n)}}, true, nil
}

// learnHead records the head zuno_append left on r's stream, having written r's events up to
// revision last: the store links them as zuno_append did when it knows the head they followed
// (or they began the stream), and forgets the stream otherwise. A stream's revision names one
// event forever, so a known head at the revision they followed is the head they followed.
func (s *Store) learnHead(r *appendRequest, last int64) {
	from := last - int64(len(r.evs))
	prev := ""
	if from >= 0 {
		h, ok := s.heads.get(r.stream)
		if !ok || h.revision != from {
			s.heads.forget(r.stream)
			return
		}
		prev = h.hash
	}
	for i, p := range r.prepared {
		prev = events.Link(prev, uint64(from+1)+uint64(i), p.Body)
	}
	s.heads.set(r.stream, streamHead{revision: last, hash: prev})
}

func (s *Store) linkedResult(result string) {
	s.metrics.LinkedAppends.WithLabelValues(s.name, result).Inc()
}

// readHead reads stream's head. An append that expects no stream needs no read: if the stream
// exists after all, revision 0 is taken and the linked insert fails.
func (s *Store) readHead(ctx context.Context, stream string, expected events.ExpectedRevision) (streamHead, error) {
	if expected.IsNoStream() {
		return streamHead{revision: -1}, nil
	}
	h := streamHead{revision: -1}
	err := s.headStmt.QueryRowContext(ctx, stream).Scan(&h.revision, &h.hash)
	if errors.Is(err, sql.ErrNoRows) {
		return streamHead{revision: -1}, nil
	}
	return h, err
}

// insertLinked runs zuno_append_linked for r's events, linked as metas, from revision first.
func (s *Store) insertLinked(ctx context.Context, r *appendRequest, first uint64, metas [][]byte) (int64, error) {
	ids := make([]string, len(r.evs))
	types := make([]string, len(r.evs))
	datas := make([]string, len(r.evs))
	mds := make([]string, len(r.evs))
	for i, ev := range r.evs {
		ids[i], types[i], datas[i], mds[i] = ev.ID, ev.Type, string(ev.Data), string(metas[i])
	}
	var pos int64
	err := s.linkedStmt.QueryRowContext(ctx, r.stream, int64(first),
		pq.Array(ids), pq.Array(types), pq.Array(datas), pq.Array(mds)).Scan(&pos)
	return pos, err
}
