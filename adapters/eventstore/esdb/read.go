package esdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/zuno-run/zuno/events"
)

// unknownPosition is how the server encodes a position it does not have (-1 as uint64): events
// read from a stream on servers before 22.6, and events written in explicit transactions.
const unknownPosition = math.MaxUint64

// $all pages: big enough that a run of system events does not cost a round trip each, small
// enough that one response stays modest when events are large.
const (
	minAllPage = 32
	maxAllPage = 1024
)

// errStop ends a read early from inside a visit function.
var errStop = errors.New("stop")

// ReadStream returns up to limit events of stream with revision >= from, ascending.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	return s.readStream(ctx, stream, esdb.Forwards, esdb.Revision(from), limit)
}

// ReadStreamBackward returns up to limit events with revision <= from, descending;
// from = math.MaxUint64 starts at the end.
func (s *Store) ReadStreamBackward(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	var start esdb.StreamPosition = esdb.Revision(from)
	if from == math.MaxUint64 {
		start = esdb.End{}
	}
	return s.readStream(ctx, stream, esdb.Backwards, start, limit)
}

func (s *Store) readStream(caller context.Context, stream string, dir esdb.Direction, start esdb.StreamPosition, limit int) ([]events.Recorded, error) {
	if limit <= 0 {
		return nil, nil
	}
	ctx, done, err := s.begin(caller)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := s.streamEvents(ctx, stream, dir, start, uint64(limit))
	if err != nil {
		if ctx.Err() != nil {
			return nil, s.interrupted(caller, ctx)
		}
		return nil, err
	}
	return out, nil
}

// streamEvents reads count events of a stream; a stream that does not exist reads as empty.
func (s *Store) streamEvents(ctx context.Context, stream string, dir esdb.Direction, start esdb.StreamPosition, count uint64) ([]events.Recorded, error) {
	var out []events.Recorded
	err := drain(ctx, func() (*esdb.ReadStream, error) {
		return s.client.ReadStream(ctx, stream, esdb.ReadStreamOptions{Direction: dir, From: start}, count)
	}, func(re *esdb.ResolvedEvent) error {
		rec, err := toRecorded(re)
		if err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	})
	if isCode(err, esdb.ErrorCodeResourceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("esdb: read stream %q: %w", stream, err)
	}
	return out, nil
}

// ReadAll returns up to limit non-system events with global position > after, ascending. after
// must be 0 or a position this store returned: $all can only be entered at an event's position.
func (s *Store) ReadAll(caller context.Context, after uint64, limit int) ([]events.Recorded, error) {
	if limit <= 0 {
		return nil, nil
	}
	ctx, done, err := s.begin(caller)
	if err != nil {
		return nil, err
	}
	defer done()

	var out []events.Recorded
	from := after
	for {
		page := min(max(uint64(limit-len(out))+1, minAllPage), maxAllPage)
		var read uint64
		next := from
		err := drain(ctx, func() (*esdb.ReadStream, error) {
			return s.client.ReadAll(ctx, esdb.ReadAllOptions{Direction: esdb.Forwards, From: allPosition(from)}, page)
		}, func(re *esdb.ResolvedEvent) error {
			read++
			pos, ok := commitPosition(re)
			if !ok {
				return positionMissing(re)
			}
			// Reading from a position includes the event at it.
			if pos <= from {
				return nil
			}
			next = pos
			if isSystem(re) {
				return nil
			}
			rec, err := toRecorded(re)
			if err != nil {
				return err
			}
			out = append(out, rec)
			if len(out) == limit {
				return errStop
			}
			return nil
		})
		switch {
		case errors.Is(err, errStop):
			return out, nil
		case err != nil && ctx.Err() != nil:
			return nil, s.interrupted(caller, ctx)
		case err != nil:
			return nil, fmt.Errorf("esdb: read $all after %d: %w", from, err)
		case read < page || next == from:
			return out, nil
		}
		from = next
	}
}

// LastPosition is the global position of the newest non-system event, 0 when there is none.
func (s *Store) LastPosition(caller context.Context) (uint64, error) {
	ctx, done, err := s.begin(caller)
	if err != nil {
		return 0, err
	}
	defer done()

	var start esdb.AllPosition = esdb.End{}
	below := uint64(math.MaxUint64)
	for {
		var read uint64
		var found bool
		var last uint64
		lowest := below
		err := drain(ctx, func() (*esdb.ReadStream, error) {
			return s.client.ReadAll(ctx, esdb.ReadAllOptions{Direction: esdb.Backwards, From: start}, minAllPage)
		}, func(re *esdb.ResolvedEvent) error {
			read++
			pos, ok := commitPosition(re)
			if !ok {
				return positionMissing(re)
			}
			// Whether a backward read from a position includes it is not documented; skipping
			// what the previous page covered makes either answer safe.
			if pos >= below {
				return nil
			}
			lowest = min(lowest, pos)
			if isSystem(re) {
				return nil
			}
			found, last = true, pos
			return errStop
		})
		switch {
		case errors.Is(err, errStop) && found:
			return last, nil
		case err != nil && ctx.Err() != nil:
			return 0, s.interrupted(caller, ctx)
		case err != nil:
			return 0, fmt.Errorf("esdb: read $all backwards: %w", err)
		case read < minAllPage || lowest == below:
			return 0, nil
		}
		below = lowest
		start = esdb.Position{Commit: lowest, Prepare: lowest}
	}
}

// Subscribe calls handle for every non-system event with position > after, in order: the
// server's catch-up subscription switches from stored to live events without gap or
// duplicate. A dropped subscription (server restart, a subscriber too slow for the server's
// live buffer) ends the call with the drop's error; the caller resubscribes from the last
// position it handled.
func (s *Store) Subscribe(caller context.Context, after uint64, handle func(events.Recorded) error) error {
	ctx, done, err := s.begin(caller)
	if err != nil {
		return err
	}
	defer done()

	sub, err := s.client.SubscribeToAll(ctx, esdb.SubscribeToAllOptions{
		From:   allPosition(after),
		Filter: esdb.ExcludeSystemEventsFilter(),
	})
	if err != nil {
		if ctx.Err() != nil {
			return s.interrupted(caller, ctx)
		}
		return fmt.Errorf("esdb: subscribe to $all after %d: %w", after, err)
	}
	defer sub.Close()

	last := after
	for {
		msg := sub.Recv()
		switch {
		case msg.SubscriptionDropped != nil:
			if ctx.Err() != nil {
				return s.interrupted(caller, ctx)
			}
			return fmt.Errorf("esdb: subscription to $all dropped after position %d: %w", last, msg.SubscriptionDropped.Error)
		case msg.EventAppeared != nil:
			re := msg.EventAppeared
			pos, ok := commitPosition(re)
			if !ok {
				return positionMissing(re)
			}
			// The server starts after the given position and the filter drops system event
			// types; checking again here keeps the no-duplicate and no-system-stream promises
			// independent of server versions.
			if pos <= last || isSystem(re) {
				continue
			}
			rec, err := toRecorded(re)
			if err != nil {
				return err
			}
			if err := handle(rec); err != nil {
				return err
			}
			last = pos
		}
	}
}

// drain reads every event of a read, handing each to visit.
func drain(ctx context.Context, open func() (*esdb.ReadStream, error), visit func(*esdb.ResolvedEvent) error) (err error) {
	rs, err := open()
	if err != nil {
		return err
	}
	defer rs.Close()
	// ReadStream.Recv panics on response kinds it does not know, which a newer server could
	// send; that must not take the whole process down.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("client library failed on a server response (%v); the server may be newer than EventStore-Client-Go v4.2.0 understands", r)
		}
	}()
	for {
		re, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if re == nil || re.Event == nil {
			// Only a link whose target is gone has no event; we never resolve links.
			continue
		}
		if err := visit(re); err != nil {
			return err
		}
	}
}

func toRecorded(re *esdb.ResolvedEvent) (events.Recorded, error) {
	e := re.Event
	pos, ok := commitPosition(re)
	if !ok {
		return events.Recorded{}, positionMissing(re)
	}
	var md events.Metadata
	if len(e.UserMetadata) > 0 {
		if err := json.Unmarshal(e.UserMetadata, &md); err != nil {
			return events.Recorded{}, fmt.Errorf("esdb: event %s at position %d (stream %q) has metadata that is not zuno's: %w",
				e.EventID, pos, e.StreamID, err)
		}
	}
	return events.Recorded{
		Event: events.Event{
			ID:       e.EventID.String(),
			Type:     e.EventType,
			Data:     json.RawMessage(e.Data),
			Metadata: md,
		},
		Stream:         e.StreamID,
		StreamRevision: e.EventNumber,
		Position:       pos,
	}, nil
}

// commitPosition is the event's position in $all.
func commitPosition(re *esdb.ResolvedEvent) (uint64, bool) {
	if re.Event != nil && re.Event.Position.Commit != unknownPosition {
		return re.Event.Position.Commit, true
	}
	if re.Commit != nil && *re.Commit != unknownPosition {
		return *re.Commit, true
	}
	return 0, false
}

func positionMissing(re *esdb.ResolvedEvent) error {
	return fmt.Errorf("esdb: the server sent event %d of stream %q without its $all position; zuno needs EventStoreDB 22.6 or later and events not written in explicit transactions",
		re.Event.EventNumber, re.Event.StreamID)
}

// isSystem reports the server's own events, which are not part of zuno's log.
func isSystem(re *esdb.ResolvedEvent) bool {
	return strings.HasPrefix(re.Event.EventType, "$") || strings.HasPrefix(re.Event.StreamID, "$")
}

// allPosition enters $all at an event's position; 0 is before the first event (the log starts
// with a system record, so no event is at 0).
func allPosition(p uint64) esdb.AllPosition {
	if p == 0 {
		return esdb.Start{}
	}
	// Events not written in explicit transactions have equal commit and prepare positions.
	return esdb.Position{Commit: p, Prepare: p}
}

func isCode(err error, code esdb.ErrorCode) bool {
	var esdbErr *esdb.Error
	return errors.As(err, &esdbErr) && esdbErr.Code() == code
}
