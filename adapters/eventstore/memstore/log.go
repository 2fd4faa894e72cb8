package memstore

import (
	"bytes"
	"sync"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

// Log is the event log itself. Every Store opened over one Log sees the same events, as
// several processes see one database: that is what "reopening" a memory store means, and it
// lets each goroutine of a test hold a Store of its own. A Log is safe for concurrent use.
type Log struct {
	mu sync.RWMutex
	// records[i] is the event at position i+1, so a position is found without a search.
	records []events.Recorded
	byID    map[string]uint64   // event id → position, for idempotent retries across streams
	streams map[string][]uint64 // stream → positions; the index is the stream revision
	// appended is closed and replaced by every append. A reader takes it under the same lock
	// as its read, so an append that lands after the read always closes the channel it holds.
	appended chan struct{}
}

// NewLog returns an empty log.
func NewLog() *Log {
	return &Log{
		byID:     map[string]uint64{},
		streams:  map[string][]uint64{},
		appended: make(chan struct{}),
	}
}

// append decides one append and writes it, atomically. It returns the metrics outcome with the
// result. A retry is recognised before the condition is checked: the stream has moved on since
// the original append, so its condition would no longer hold.
func (l *Log) append(stream string, expected events.ExpectedRevision, evs []events.Event) (events.AppendResult, string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if known := l.known(evs); len(known) > 0 {
		res, err := events.MatchRetry(stream, evs, known)
		if err != nil {
			return events.AppendResult{}, storemetrics.OutcomeConflict, err
		}
		return res, storemetrics.OutcomeDuplicate, nil
	}
	current := int64(len(l.streams[stream])) - 1
	if !expected.Allows(current) {
		return events.AppendResult{}, storemetrics.OutcomeConflict,
			&events.WrongExpectedRevisionError{Stream: stream, Expected: expected, Actual: current}
	}
	sealed, err := events.Seal(stream, l.headHash(stream), uint64(current+1), evs)
	if err != nil {
		return events.AppendResult{}, storemetrics.OutcomeError, err
	}
	res := l.write(stream, sealed)
	close(l.appended)
	l.appended = make(chan struct{})
	return res, storemetrics.OutcomeOK, nil
}

// headHash is the hash the stream's next event chains to; the caller holds the lock.
func (l *Log) headHash(stream string) string {
	positions := l.streams[stream]
	if len(positions) == 0 {
		return ""
	}
	return l.records[positions[len(positions)-1]-1].Metadata.Hash
}

// known returns the stored events that carry the ids of evs.
func (l *Log) known(evs []events.Event) []events.Recorded {
	var known []events.Recorded
	for _, ev := range evs {
		if pos, ok := l.byID[ev.ID]; ok {
			known = append(known, l.records[pos-1])
		}
	}
	return known
}

// write stores evs at the end of stream; the caller holds the write lock.
func (l *Log) write(stream string, evs []events.Event) events.AppendResult {
	res := events.AppendResult{FirstPosition: uint64(len(l.records)) + 1}
	for _, ev := range evs {
		r := events.Recorded{
			Event:          stored(ev),
			Stream:         stream,
			StreamRevision: uint64(len(l.streams[stream])),
			Position:       uint64(len(l.records)) + 1,
		}
		l.records = append(l.records, r)
		l.byID[r.ID] = r.Position
		l.streams[stream] = append(l.streams[stream], r.Position)
		res.NextRevision, res.LastPosition = r.StreamRevision, r.Position
	}
	return res
}

// stored is the log's own copy of ev: the caller may reuse its Data buffer after Append. The
// clock's monotonic reading is dropped, as a durable store drops it, so that events read back
// compare the same here as they do from SQLite.
func stored(ev events.Event) events.Event {
	ev.Data = bytes.Clone(ev.Data)
	ev.Metadata.Time = ev.Metadata.Time.Round(0)
	return ev
}

// detached copies r for a reader, so that a caller changing the Data it was handed cannot
// change the log.
func detached(r events.Recorded) events.Recorded {
	r.Data = bytes.Clone(r.Data)
	return r
}

func (l *Log) readStream(stream string, from uint64, limit int) []events.Recorded {
	l.mu.RLock()
	defer l.mu.RUnlock()
	positions := l.streams[stream]
	if limit <= 0 || from >= uint64(len(positions)) {
		return nil
	}
	positions = positions[from:]
	positions = positions[:min(limit, len(positions))]
	out := make([]events.Recorded, 0, len(positions))
	for _, pos := range positions {
		out = append(out, detached(l.records[pos-1]))
	}
	return out
}

func (l *Log) readStreamBackward(stream string, from uint64, limit int) []events.Recorded {
	l.mu.RLock()
	defer l.mu.RUnlock()
	positions := l.streams[stream]
	if limit <= 0 || len(positions) == 0 {
		return nil
	}
	if from < uint64(len(positions)) {
		positions = positions[:from+1]
	}
	positions = positions[len(positions)-min(limit, len(positions)):]
	out := make([]events.Recorded, 0, len(positions))
	for i := len(positions) - 1; i >= 0; i-- {
		out = append(out, detached(l.records[positions[i]-1]))
	}
	return out
}

// readAll returns up to limit events after position after, and the channel the next append
// will close, both taken under one lock.
func (l *Log) readAll(after uint64, limit int) ([]events.Recorded, <-chan struct{}) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if limit <= 0 || after >= uint64(len(l.records)) {
		return nil, l.appended
	}
	rest := l.records[after:]
	rest = rest[:min(limit, len(rest))]
	out := make([]events.Recorded, 0, len(rest))
	for _, r := range rest {
		out = append(out, detached(r))
	}
	return out, l.appended
}

func (l *Log) lastPosition() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return uint64(len(l.records))
}
