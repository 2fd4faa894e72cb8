package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// On Postgres a batch is one call of zuno_append (migrations/postgres/eventlog), which decides
// and writes every append of the batch inside the database: one round trip per batch, where
// deciding in Go would cost one per statement while holding the append lock.

type pgRequest struct {
	Stream   string    `json:"stream"`
	Expect   string    `json:"expect"`
	Revision uint64    `json:"revision"`
	Events   []pgEvent `json:"events"`
}

type pgEvent struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Data     string `json:"data"` // JSON text carried as a string, so its bytes are kept exactly
	Metadata string `json:"metadata"`
	// Digest is events.BodyDigest; zuno_append links it into the stream's hash chain.
	Digest string `json:"digest"`
}

func expectation(e events.ExpectedRevision) (string, uint64) {
	switch {
	case e.IsNoStream():
		return "no_stream", 0
	case e.IsStreamExists():
		return "exists", 0
	}
	if rev, ok := e.Revision(); ok {
		return "exact", rev
	}
	return "any", 0
}

func (s *Store) commitPostgres(ctx context.Context, batch []*appendRequest) ([]appendReply, error) {
	replies := make([]appendReply, len(batch))
	reqs, index, err := pgRequests(batch, replies)
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return replies, nil
	}
	outs, err := s.runAppend(ctx, reqs)
	if err != nil {
		return nil, err
	}
	inserted := 0
	for _, o := range outs {
		i := index[o.idx]
		r := batch[i]
		switch o.kind {
		case "ok":
			replies[i] = appendReply{outcome: storemetrics.OutcomeOK, result: events.AppendResult{
				FirstPosition: uint64(*o.first), LastPosition: uint64(*o.last), NextRevision: uint64(*o.next)}}
			inserted += len(r.evs)
		case "wrong":
			replies[i] = wrongRevision(r, *o.actual)
		case "known":
			// Stored events never change, so comparing them after the commit is as good as inside.
			known, err := s.storedEvents(ctx, r.evs)
			if err != nil {
				return nil, err
			}
			replies[i] = retryReply(r, known)
		default:
			return nil, fmt.Errorf("append: unknown outcome %q", o.kind)
		}
	}
	if inserted > 0 {
		s.committed(inserted)
	}
	return replies, nil
}

// pgRequests encodes the batch's live requests for zuno_append, each event with the digest of
// its body (the chain's link is the function's to set); index[k] is the batch position of
// reqs[k]. A request whose caller has gone gets its error reply here.
func pgRequests(batch []*appendRequest, replies []appendReply) (reqs []pgRequest, index []int, err error) {
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			replies[i] = appendReply{outcome: storemetrics.OutcomeError, err: err}
			continue
		}
		expect, rev := expectation(r.expected)
		req := pgRequest{Stream: r.stream, Expect: expect, Revision: rev, Events: make([]pgEvent, len(r.evs))}
		for j, ev := range r.evs {
			ev.Metadata.Hash = "" // the chain's link is the store's to set
			md, err := json.Marshal(ev.Metadata)
			if err != nil {
				return nil, nil, fmt.Errorf("encode metadata of %s: %w", ev.ID, err)
			}
			digest, err := events.BodyDigest(r.stream, ev)
			if err != nil {
				return nil, nil, fmt.Errorf("hash event %s: %w", ev.ID, err)
			}
			req.Events[j] = pgEvent{ID: ev.ID, Type: ev.Type, Data: string(ev.Data), Metadata: string(md), Digest: digest}
		}
		reqs = append(reqs, req)
		index = append(index, i)
	}
	return reqs, index, nil
}

// pgOutcome is zuno_append's answer for one request.
type pgOutcome struct {
	idx                       int
	kind                      string
	actual, first, last, next *int64
}

// runAppend runs zuno_append over reqs in one statement (one transaction) and reads its
// answers, one per request.
func (s *Store) runAppend(ctx context.Context, reqs []pgRequest) ([]pgOutcome, error) {
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, err
	}
	rows, err := s.writer.QueryContext(ctx, `SELECT idx, outcome, actual, first_position, last_position, next_revision FROM zuno_append($1)`, string(body))
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
	if len(outs) != len(reqs) {
		return nil, fmt.Errorf("append: %d answers for %d requests", len(outs), len(reqs))
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
