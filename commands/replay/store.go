package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// errStop ends a replayed turn early: it went where the recorded run did not (or the recorded
// run was cut short there), so nothing further can be compared.
var errStop = errors.New("replay stopped")

// store is the event store the replayed driver works on: the session's stream in memory (the
// history before the turn, then what the replay appends), every other stream read from the
// real log as it stood when the replay's position in the recorded run was written. Nothing is
// ever written to the real log.
type store struct {
	log    commands.StreamReader
	stream string
	mu     sync.Mutex // a group's calls run in parallel
	recs   []events.Recorded
	// cutoff: another stream's events at or after this position were not written yet at the
	// point the replay has reached (a plan tool's work events, a user's plan update).
	cutoff uint64
	// check compares one appended event with the recorded one and returns what the memory
	// copy keeps (the recorded event, so a difference does not derail the rest of the turn).
	check func(events.Event) (events.Recorded, error)
}

func (s *store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if stream == s.stream {
		if from >= uint64(len(s.recs)) {
			return nil, nil
		}
		out := s.recs[from:]
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		return append([]events.Recorded(nil), out...), nil
	}
	recs, err := s.log.ReadStream(ctx, stream, from, limit)
	s.mu.Lock()
	cutoff := s.cutoff
	s.mu.Unlock()
	for i, rec := range recs {
		if rec.Position >= cutoff {
			return recs[:i], err
		}
	}
	return recs, err
}

func (s *store) Append(ctx context.Context, stream string, _ events.ExpectedRevision, evs ...events.Event) (events.AppendResult, error) {
	if stream != s.stream {
		return s.recorded(ctx, stream, evs)
	}
	var res events.AppendResult
	for i, ev := range evs {
		rec, err := s.check(ev)
		if err != nil {
			return res, err
		}
		rec.StreamRevision = uint64(len(s.recs))
		s.recs = append(s.recs, rec)
		s.reached(rec.Position)
		if i == 0 {
			res.FirstPosition = rec.Position
		}
		res.NextRevision, res.LastPosition = rec.StreamRevision, rec.Position
	}
	return res, nil
}

// recorded answers the driver's append to another stream than the session's — the Goal's
// progress observation on the work stream (docs/goals.md) — with the events the recorded run
// appended there: the same ids (they derive from the command id) and the same content. The
// replay's point moves past them, so the driver reads the work stream as it was after them.
// Anything else is a decision the recorded run did not take, and stops the replay.
func (s *store) recorded(ctx context.Context, stream string, evs []events.Event) (events.AppendResult, error) {
	byID := map[string]events.Recorded{}
	for from := uint64(0); ; {
		recs, err := s.log.ReadStream(ctx, stream, from, 1000)
		if err != nil {
			return events.AppendResult{}, err
		}
		for _, r := range recs {
			byID[r.ID] = r
		}
		if len(recs) < 1000 {
			break
		}
		from += uint64(len(recs))
	}
	var res events.AppendResult
	for i, ev := range evs {
		rec, ok := byID[ev.ID]
		if !ok || !rec.SameContent(ev) {
			return events.AppendResult{}, fmt.Errorf("replay: the turn appended to %s what the recorded run did not (event %s); %w", stream, ev.ID, errStop)
		}
		s.reached(rec.Position + 1) // written now: the cutoff excludes what is at or after it
		if i == 0 {
			res.FirstPosition = rec.Position
		}
		res.NextRevision, res.LastPosition = rec.StreamRevision, rec.Position
	}
	return res, nil
}

// reached moves the replay's point in the recorded run forward to position.
func (s *store) reached(position uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cutoff = max(s.cutoff, position)
}
