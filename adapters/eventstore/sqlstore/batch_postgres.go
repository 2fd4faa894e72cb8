package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// On Postgres a batch is one call of zuno_append (migrations/postgres/eventlog/0005, 0006), which
// decides and writes every append of the batch inside the database: one round trip per batch.
// Several batches commit at once (docs/storage.md, "Concurrent appends").

// pgBatch is a batch as zuno_append takes it: parallel arrays, one entry per request in the
// first four, one per event in the others.
type pgBatch struct {
	streams, expects               []string
	revisions                      []int64
	counts                         []int32
	ids, types, datas, metas, digs []string
}

// expectation is e as zuno_append takes it. An exact revision past the int64 range is no
// stream's: it is sent as -2, which no head is (a stream's head is -1 or more).
func expectation(e events.ExpectedRevision) (string, int64) {
	switch {
	case e.IsNoStream():
		return "no_stream", 0
	case e.IsStreamExists():
		return "exists", 0
	}
	if rev, ok := e.Revision(); ok {
		if rev > math.MaxInt64 {
			return "exact", -2
		}
		return "exact", int64(rev)
	}
	return "any", 0
}

func (s *Store) commitPostgres(ctx context.Context, batch []*appendRequest) ([]appendReply, error) {
	if replies, done, err := s.appendLinked(ctx, batch); done {
		return replies, err
	}
	replies := make([]appendReply, len(batch))
	reqs, index := pgRequests(batch, replies)
	if len(reqs.streams) == 0 {
		return replies, nil
	}
	outs, probed, err := s.runAppend(ctx, reqs)
	if err != nil {
		for _, r := range batch {
			s.heads.forget(r.stream) // whether the batch committed is not known
		}
		return nil, err
	}
	inserted := 0
	for _, o := range outs {
		i := index[o.idx]
		r := batch[i]
		if o.kind != "ok" {
			s.heads.forget(r.stream)
		}
		switch o.kind {
		case "ok":
			replies[i] = appendReply{outcome: storemetrics.OutcomeOK, result: events.AppendResult{
				FirstPosition: uint64(*o.first), LastPosition: uint64(*o.last), NextRevision: uint64(*o.next)}}
			inserted += len(r.evs)
			s.learnHead(r, *o.next)
		case "wrong":
			// A retry of a stored append is known, not wrong: without the probe, ask now.
			reply, err := s.wrongOrKnown(ctx, r, *o.actual, probed)
			if err != nil {
				return nil, err
			}
			replies[i] = reply
		case "known":
			reply, err := s.knownReply(ctx, r)
			if err != nil {
				return nil, err
			}
			replies[i] = reply
		default:
			return nil, fmt.Errorf("append: unknown outcome %q", o.kind)
		}
	}
	if inserted > 0 {
		s.committed(inserted)
	}
	return replies, nil
}

// knownReply answers an append whose events are stored. Stored events never change, so
// comparing them after the commit is as good as inside.
func (s *Store) knownReply(ctx context.Context, r *appendRequest) (appendReply, error) {
	known, err := s.storedEvents(ctx, r.evs)
	if err != nil {
		return appendReply{}, err
	}
	return retryReply(r, known), nil
}

// wrongOrKnown answers an append zuno_append found at the wrong revision: known when its events
// are stored (zuno_append did not look unless probed), else wrong_expected_revision.
func (s *Store) wrongOrKnown(ctx context.Context, r *appendRequest, actual int64, probed bool) (appendReply, error) {
	if !probed {
		known, err := s.storedEvents(ctx, r.evs)
		if err != nil {
			return appendReply{}, err
		}
		if len(known) > 0 {
			return retryReply(r, known), nil
		}
	}
	return wrongRevision(r, actual), nil
}

// pgRequests encodes the batch's live requests for zuno_append, each event with the digest of
// its body (the chain's link is the function's to set); index[k] is the batch position of
// request k. A request whose caller has gone gets its error reply here.
func pgRequests(batch []*appendRequest, replies []appendReply) (b pgBatch, index []int) {
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			replies[i] = appendReply{outcome: storemetrics.OutcomeError, err: err}
			continue
		}
		expect, rev := expectation(r.expected)
		b.streams = append(b.streams, r.stream)
		b.expects = append(b.expects, expect)
		b.revisions = append(b.revisions, rev)
		b.counts = append(b.counts, int32(len(r.evs)))
		for k, ev := range r.evs {
			b.ids = append(b.ids, ev.ID)
			b.types = append(b.types, ev.Type)
			b.datas = append(b.datas, string(ev.Data))
			b.metas = append(b.metas, string(r.prepared[k].Metadata))
			b.digs = append(b.digs, r.prepared[k].Body)
		}
		index = append(index, i)
	}
	return b, index
}

// pgOutcome is zuno_append's answer for one request.
type pgOutcome struct {
	idx                       int
	kind                      string
	actual, first, last, next *int64
}

// maxSerializationRetries bounds the retries of a batch that collided with another append
// (retriable). Each collision means the other append committed, so appends as a whole always
// progress; a short random pause before each retry keeps appenders from colliding in step
// when several processes write one stream.
const maxSerializationRetries = 64

// runAppend runs zuno_append over b in one statement (one transaction) and reads its answers,
// one per request; a batch that collided with another append is run again. The first run
// leaves out the idempotency probe (migration postgres/eventlog/0006): an event id already
// stored then fails the insert on its unique key, and the run again probes. probed says
// whether the answers are the probing run's.
func (s *Store) runAppend(ctx context.Context, b pgBatch) (outs []pgOutcome, probed bool, err error) {
	for attempt := 0; ; attempt++ {
		probed = attempt > 0
		outs, err = s.appendOnce(ctx, b, probed)
		if err == nil || !retriable(err) || attempt >= maxSerializationRetries {
			return outs, probed, err
		}
		time.Sleep(time.Duration(rand.Int64N(int64(min(attempt+1, 10)) * int64(100*time.Microsecond))))
	}
}

// retriable reports a transaction the database rolled back for its timing, not its content:
// another append wrote one of its streams past its reserved positions (40001), decided the
// same revision or stored the same event id at the same time (23505; run again, the batch
// sees that append's events), or a deadlock between such appends (40P01).
func retriable(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && (pqErr.Code == "40001" || pqErr.Code == "23505" || pqErr.Code == "40P01")
}

// appendSQL calls zuno_append; it is prepared once per connection (appendStmt), so a batch is
// one round trip with no parsing or planning.
const appendSQL = `SELECT idx, outcome, actual, first_position, last_position, next_revision
	FROM zuno_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func (s *Store) appendOnce(ctx context.Context, b pgBatch, probe bool) ([]pgOutcome, error) {
	rows, err := s.appendStmt.QueryContext(ctx,
		pq.Array(b.streams), pq.Array(b.expects), pq.Array(b.revisions), pq.Array(b.counts),
		pq.Array(b.ids), pq.Array(b.types), pq.Array(b.datas), pq.Array(b.metas), pq.Array(b.digs), probe)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	defer rows.Close()
	var outs []pgOutcome
	for rows.Next() {
		var o pgOutcome
		if err := rows.Scan(&o.idx, &o.kind, &o.actual, &o.first, &o.last, &o.next); err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("append: %w", err) // the statement, and so the batch, rolled back
	}
	if len(outs) != len(b.streams) {
		return nil, fmt.Errorf("append: %d answers for %d requests", len(outs), len(b.streams))
	}
	return outs, nil
}

// storedEvents reads the stored events among evs, by id.
func (s *Store) storedEvents(ctx context.Context, evs []events.Event) ([]events.Recorded, error) {
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	list, _ := json.Marshal(ids)
	return s.query(ctx, s.reader, `SELECT `+columns+` FROM event_log
		WHERE event_id = ANY(ARRAY(SELECT value::uuid FROM json_array_elements_text($1::json)))`, string(list))
}
