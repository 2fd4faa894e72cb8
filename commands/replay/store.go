package replay

import (
	"context"
	"errors"
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
	// jobStream is the session's job stream and jobsRead the reads its recorded prompts
	// name (prompt.assembled.1's jobsRead, by position): a read of that stream returns what
	// the next recorded prompt says the run had read, since children settle concurrently.
	jobStream string
	jobsRead  []recordedRead
}

// recordedRead is one recorded prompt's read of the job stream: at position, read events
// (0 also for a receipt of a build that did not record it: its prompts showed no jobs).
type recordedRead struct {
	position, read uint64
}

// jobsLimit is how many events of the job stream the next recorded prompt after the replay's
// point had read; false when there is no later prompt (the cutoff rules then).
func (s *store) jobsLimit() (uint64, bool) {
	s.mu.Lock()
	cutoff := s.cutoff
	s.mu.Unlock()
	for _, r := range s.jobsRead {
		if r.position >= cutoff {
			return r.read, true
		}
	}
	return 0, false
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
	if n, ok := s.jobsLimit(); ok && stream == s.jobStream {
		if from >= n {
			return nil, nil
		}
		if left := int(n - from); limit <= 0 || limit > left {
			limit = left
		}
		return s.log.ReadStream(ctx, stream, from, limit)
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
		return s.hostWrite(ctx, stream, evs)
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

// reached moves the replay's point in the recorded run forward to position.
func (s *store) reached(position uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cutoff = max(s.cutoff, position)
}
