package esdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// Append writes evs to the end of stream if expected holds, atomically.
//
// Idempotency does not rest on the server's de-duplication, which is best effort with "any" and
// compares ids only, not content. Before writing, and again after a wrong-expected-revision
// answer (a concurrent copy of the same append may have won), the stream's last
// len(evs)+window events are searched for the append's ids and events.MatchRetry decides. The
// limit: EventStoreDB has no index by event id, so an id stored in another stream, or deeper in
// this stream than the window, is not found, and such an append is written again unless the
// server recognises it itself (only a retry naming the original expected revision). Prompt
// re-delivery keeps retries inside the window (idempotencyWindow, 64 events).
func (s *Store) Append(caller context.Context, stream string, expected events.ExpectedRevision, evs ...events.Event) (res events.AppendResult, err error) {
	if m := s.metrics; m != nil {
		// A re-append answered with the original result counts as ok here: telling it from a
		// first append would need a second read of the stream.
		defer func(started time.Time) { m.ObserveAppend("esdb", started, len(evs), outcomeOf(err), err) }(time.Now())
	}
	if err := events.ValidateAppend(stream, evs); err != nil {
		return events.AppendResult{}, err
	}
	if strings.HasPrefix(stream, "$") {
		return events.AppendResult{}, &events.InvalidAppendError{Stream: stream,
			Reason: "EventStoreDB reserves stream names starting with $ for itself"}
	}
	if _, err := toEventData(stream, evs); err != nil {
		return events.AppendResult{}, err
	}

	ctx, done, err := s.begin(caller)
	if err != nil {
		return events.AppendResult{}, err
	}
	defer done()
	res, err = s.append(ctx, stream, expected, evs)
	if err != nil && ctx.Err() != nil {
		return events.AppendResult{}, s.interrupted(caller, ctx)
	}
	return res, err
}

// chainAttempts bounds how often an append whose condition still holds is re-linked to a
// head that moved while it was being hashed.
const chainAttempts = 16

// append links evs to the stream's head (events.Seal) and writes them expecting exactly that
// head, so that two concurrent appends can never both chain to it: the server refuses the
// later one, which is re-linked to the new head when the caller's own condition still allows
// (docs/storage.md, "Hash chain").
func (s *Store) append(ctx context.Context, stream string, expected events.ExpectedRevision, evs []events.Event) (events.AppendResult, error) {
	for range chainAttempts {
		stored, head, err := s.storedCopies(ctx, stream, evs)
		if err != nil {
			return events.AppendResult{}, err
		}
		if len(stored) > 0 {
			return events.MatchRetry(stream, evs, stored)
		}
		current, prev, at := int64(-1), "", esdb.ExpectedRevision(esdb.NoStream{})
		if head != nil {
			current, prev, at = int64(head.StreamRevision), head.Metadata.Hash, esdb.Revision(head.StreamRevision)
		}
		if !expected.Allows(current) {
			return events.AppendResult{}, &events.WrongExpectedRevisionError{Stream: stream, Expected: expected, Actual: current}
		}
		sealed, err := events.Seal(stream, prev, uint64(current+1), evs)
		if err != nil {
			return events.AppendResult{}, err
		}
		proposed, err := toEventData(stream, sealed)
		if err != nil {
			return events.AppendResult{}, err
		}
		wr, err := s.client.AppendToStream(ctx, stream, esdb.AppendToStreamOptions{ExpectedRevision: at}, proposed...)
		if isCode(err, esdb.ErrorCodeWrongExpectedVersion) {
			if _, exact := expected.Revision(); exact || expected.IsNoStream() {
				return s.refused(ctx, stream, expected, evs)
			}
			continue // the head moved: link to the new one
		}
		if err != nil {
			return events.AppendResult{}, fmt.Errorf("esdb: append to stream %q: %w", stream, err)
		}
		return s.readBack(ctx, stream, evs, wr)
	}
	return events.AppendResult{}, fmt.Errorf("esdb: append to stream %q: its head moved %d times while linking the hash chain; retry", stream, chainAttempts)
}

// readBack answers a successful write from the events as stored.
func (s *Store) readBack(ctx context.Context, stream string, evs []events.Event, wr *esdb.WriteResult) (events.AppendResult, error) {
	// The write result names the last revision but only one position, so the appended events
	// are read back for both positions. Matching them against evs also catches the server
	// acknowledging an earlier append with the same ids but other content as a duplicate.
	n := uint64(len(evs))
	if wr.NextExpectedVersion+1 < n {
		return events.AppendResult{}, fmt.Errorf("esdb: append to stream %q: server reports revision %d after appending %d events",
			stream, wr.NextExpectedVersion, n)
	}
	written, err := s.streamEvents(ctx, stream, esdb.Forwards, esdb.Revision(wr.NextExpectedVersion+1-n), n)
	if err == nil && uint64(len(written)) != n {
		err = fmt.Errorf("read %d of %d events", len(written), n)
	}
	if err != nil {
		return events.AppendResult{}, fmt.Errorf("esdb: append to stream %q succeeded but reading it back failed: %w", stream, err)
	}
	return events.MatchRetry(stream, evs, written)
}

// refused explains a wrong-expected-version answer: an identical append that got there first,
// or a stream that is not where the caller thought.
func (s *Store) refused(ctx context.Context, stream string, expected events.ExpectedRevision, evs []events.Event) (events.AppendResult, error) {
	stored, _, err := s.storedCopies(ctx, stream, evs)
	if err != nil {
		return events.AppendResult{}, err
	}
	if len(stored) > 0 {
		return events.MatchRetry(stream, evs, stored)
	}
	// The client's error carries the current revision only inside its message text.
	last, err := s.streamEvents(ctx, stream, esdb.Backwards, esdb.End{}, 1)
	if err != nil {
		return events.AppendResult{}, err
	}
	actual := int64(-1)
	if len(last) > 0 {
		actual = int64(last[0].StreamRevision)
	}
	return events.AppendResult{}, &events.WrongExpectedRevisionError{Stream: stream, Expected: expected, Actual: actual}
}

// storedCopies returns the stored events, among the stream's recent ones, whose ids are in
// evs, and the stream's last event (nil when the stream does not exist).
func (s *Store) storedCopies(ctx context.Context, stream string, evs []events.Event) ([]events.Recorded, *events.Recorded, error) {
	index := make(map[string]int, len(evs))
	for i, ev := range evs {
		index[ev.ID] = i
	}
	recent, err := s.streamEvents(ctx, stream, esdb.Backwards, esdb.End{}, uint64(len(evs)+idempotencyWindow))
	if err != nil {
		return nil, nil, err
	}
	var head *events.Recorded
	if len(recent) > 0 {
		head = &recent[0]
	}
	found := make(map[string]events.Recorded)
	for _, r := range recent {
		if _, ok := index[r.ID]; ok {
			found[r.ID] = r
		}
	}
	if len(found) == 0 || len(found) == len(evs) {
		return values(found), head, nil
	}
	// Part of the append lies outside the window. An exact retry occupies consecutive
	// revisions, so the rest is where the found part says it must be.
	var anchor events.Recorded
	i := uint64(len(evs))
	for id, r := range found {
		if j := uint64(index[id]); j < i {
			anchor, i = r, j
		}
	}
	if anchor.StreamRevision >= i {
		span, err := s.streamEvents(ctx, stream, esdb.Forwards, esdb.Revision(anchor.StreamRevision-i), uint64(len(evs)))
		if err != nil {
			return nil, nil, err
		}
		for _, r := range span {
			if _, ok := index[r.ID]; ok {
				found[r.ID] = r
			}
		}
	}
	return values(found), head, nil
}

func values(m map[string]events.Recorded) []events.Recorded {
	out := make([]events.Recorded, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	return out
}

func toEventData(stream string, evs []events.Event) ([]esdb.EventData, error) {
	out := make([]esdb.EventData, len(evs))
	for i, ev := range evs {
		id, err := uuid.Parse(ev.ID)
		// Only the canonical spelling reads back as the same string, and SameContent and
		// MatchRetry compare ids as strings.
		if err != nil || id.String() != ev.ID {
			return nil, &events.InvalidAppendError{Stream: stream,
				Reason: fmt.Sprintf("event id %q is not a lowercase canonical UUID, which EventStoreDB event ids must be", ev.ID)}
		}
		if id == uuid.Nil {
			// The client would silently replace it with a random id, defeating de-duplication.
			return nil, &events.InvalidAppendError{Stream: stream, Reason: "event id is the nil UUID"}
		}
		md, err := json.Marshal(ev.Metadata)
		if err != nil {
			return nil, fmt.Errorf("esdb: encode metadata of event %s: %w", ev.ID, err)
		}
		out[i] = esdb.EventData{
			EventID:     id,
			EventType:   ev.Type,
			ContentType: esdb.ContentTypeJson,
			Data:        ev.Data,
			Metadata:    md,
		}
	}
	return out, nil
}

func toExpected(e events.ExpectedRevision) esdb.ExpectedRevision {
	if r, ok := e.Revision(); ok {
		return esdb.Revision(r)
	}
	switch {
	case e.IsNoStream():
		return esdb.NoStream{}
	case e.IsStreamExists():
		return esdb.StreamExists{}
	default:
		return esdb.Any{}
	}
}

func outcomeOf(err error) string {
	var (
		wrong    *events.WrongExpectedRevisionError
		conflict *events.EventIDConflictError
		invalid  *events.InvalidAppendError
	)
	switch {
	case err == nil:
		return storemetrics.OutcomeOK
	case errors.As(err, &wrong), errors.As(err, &conflict):
		return storemetrics.OutcomeConflict
	case errors.As(err, &invalid):
		return storemetrics.OutcomeRejected
	}
	return storemetrics.OutcomeError
}
