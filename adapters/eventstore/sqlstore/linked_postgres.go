package sqlstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// Known heads on Postgres (docs/storage.md, "Known heads"). A batch of appends to streams
// whose heads the store knows is written by zuno_append_linked (migration
// postgres/eventlog/0008): the store links the events into the hash chain itself and the
// function only reserves positions and inserts, without reading heads. Knowledge that has gone stale (another
// process appended) cannot store a wrong event: the revision it would write is taken, the
// insert fails on the log's unique key, and the append runs through zuno_append instead.

// linkedSQL calls zuno_append_linked; it is prepared once per connection, as appendSQL is.
const linkedSQL = `SELECT zuno_append_linked($1, $2, $3, $4, $5, $6)`

// headsSQL reads streams' heads as committed, one index probe each: a stream's revision
// (NULL: no stream) and its hash ("" when written before the hash chain, as zuno_append reads
// it).
const headsSQL = `SELECT s.stream, h.stream_revision, COALESCE(h.metadata->>'hash', '')
	FROM unnest($1::text[]) AS s(stream)
	LEFT JOIN LATERAL (SELECT e.stream_revision, e.metadata FROM event_log AS e
		WHERE e.stream = s.stream ORDER BY e.stream_revision DESC LIMIT 1) AS h ON true`

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

// appendLinked writes batch through zuno_append_linked when each append's expectation holds
// at its stream's head: the head the store knows, none for a stream the batch's first append
// to it expects to be new, else the head read (one query for the batch). It reports whether
// it answered the batch; when it did not, zuno_append decides it: an expectation fails at
// the head (a conflict, or a retry of a stored append, which zuno_append tells apart), the
// heads could not be read, a caller has gone, or the linked insert collided with what is
// stored.
func (s *Store) appendLinked(ctx context.Context, batch []*appendRequest) ([]appendReply, bool, error) {
	plan, ok, tried := s.planLinked(ctx, batch)
	if !ok {
		if tried {
			s.linkedResult(storemetrics.LinkedFellBack, len(batch))
		}
		return nil, false, nil
	}
	first, err := s.insertLinked(ctx, plan)
	if err != nil {
		if retriable(err) {
			s.linkedResult(storemetrics.LinkedFellBack, len(batch))
			return nil, false, nil
		}
		for _, r := range batch {
			s.heads.forget(r.stream)
		}
		return nil, true, fmt.Errorf("append: %w", err)
	}
	replies := make([]appendReply, len(batch))
	pos := first
	for i, r := range batch {
		n := int64(len(r.evs))
		replies[i] = appendReply{outcome: storemetrics.OutcomeOK, result: events.AppendResult{
			FirstPosition: uint64(pos), LastPosition: uint64(pos + n - 1), NextRevision: uint64(plan.last[i])}}
		pos += n
	}
	for stream, h := range plan.heads {
		s.heads.set(stream, h)
	}
	if plan.read {
		s.linkedResult(storemetrics.LinkedAfterRead, len(batch))
	} else {
		s.linkedResult(storemetrics.LinkedWritten, len(batch))
	}
	s.committed(len(plan.ids))
	return replies, true, nil
}

// linkedPlan is a batch as zuno_append_linked takes it: each event's stream, revision and
// metadata with its link in the chain; each append's last revision, and each stream's head
// after the batch.
type linkedPlan struct {
	streams, ids, types, datas, metas []string
	revisions, last                   []int64
	heads                             map[string]streamHead
	read                              bool // a head was read for the batch
}

// planLinked numbers and links batch's events from their streams' heads. ok is false when
// the batch must go to zuno_append; tried says whether it was for an expectation that fails
// at a head (not for a caller gone or heads unread).
func (s *Store) planLinked(ctx context.Context, batch []*appendRequest) (p *linkedPlan, ok, tried bool) {
	for _, r := range batch {
		if r.ctx.Err() != nil {
			return nil, false, false // zuno_append answers it
		}
	}
	heads, read, err := s.headsOf(ctx, batch)
	if err != nil {
		return nil, false, false // zuno_append reads them again, and reports its error
	}
	p = &linkedPlan{heads: heads, read: read}
	for _, r := range batch {
		head := p.heads[r.stream]
		if !r.expected.Allows(head.revision) {
			return nil, false, true
		}
		p.add(r, head)
	}
	return p, true, true
}

// headsOf returns the head of each stream batch appends to: the one the store knows; none,
// when the batch's first append to the stream expects none (if it exists after all, revision
// 0 is taken and the linked insert fails); else the stored head. read says whether any was
// read.
func (s *Store) headsOf(ctx context.Context, batch []*appendRequest) (map[string]streamHead, bool, error) {
	heads := make(map[string]streamHead, len(batch))
	var unknown []string
	for _, r := range batch {
		if _, ok := heads[r.stream]; ok {
			continue
		}
		h, ok := s.heads.get(r.stream)
		if !ok {
			h = streamHead{revision: -1}
			if !r.expected.IsNoStream() {
				unknown = append(unknown, r.stream)
			}
		}
		heads[r.stream] = h
	}
	if len(unknown) == 0 {
		return heads, false, nil
	}
	rows, err := s.headsStmt.QueryContext(ctx, pq.Array(unknown))
	if err != nil {
		return nil, false, err
	}
	return heads, true, scanHeads(rows, heads)
}

// add numbers r's events on from head, links them, and moves r's stream's head past them.
func (p *linkedPlan) add(r *appendRequest, head streamHead) {
	first := uint64(head.revision + 1)
	sealed, metas := events.SealPrepared(head.hash, first, r.evs, r.prepared)
	for i, ev := range r.evs {
		p.streams = append(p.streams, r.stream)
		p.revisions = append(p.revisions, int64(first)+int64(i))
		p.ids = append(p.ids, ev.ID)
		p.types = append(p.types, ev.Type)
		p.datas = append(p.datas, string(ev.Data))
		p.metas = append(p.metas, string(metas[i]))
	}
	last := head.revision + int64(len(r.evs))
	p.last = append(p.last, last)
	p.heads[r.stream] = streamHead{revision: last, hash: sealed[len(sealed)-1].Metadata.Hash}
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

func (s *Store) linkedResult(result string, appends int) {
	s.metrics.LinkedAppends.WithLabelValues(s.name, result).Add(float64(appends))
}

// insertLinked runs zuno_append_linked for plan and returns the first position it reserved.
func (s *Store) insertLinked(ctx context.Context, p *linkedPlan) (int64, error) {
	var pos int64
	err := s.linkedStmt.QueryRowContext(ctx, pq.Array(p.streams), pq.Array(p.revisions),
		pq.Array(p.ids), pq.Array(p.types), pq.Array(p.datas), pq.Array(p.metas)).Scan(&pos)
	return pos, err
}
