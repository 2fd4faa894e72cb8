package events

import (
	"fmt"
	"math"
	"strconv"
)

// ExpectedRevision is the optimistic-concurrency condition of an append.
type ExpectedRevision struct {
	kind     expectation
	revision uint64
}

type expectation uint8

const (
	expectAny expectation = iota
	expectNoStream
	expectStreamExists
	expectExact
)

var (
	// Any appends whatever the stream's state.
	Any = ExpectedRevision{kind: expectAny}
	// NoStream appends only when the stream has no events yet.
	NoStream = ExpectedRevision{kind: expectNoStream}
	// StreamExists appends only when the stream has at least one event.
	StreamExists = ExpectedRevision{kind: expectStreamExists}
)

// Exact appends only when the stream's last event has this revision.
func Exact(revision uint64) ExpectedRevision {
	return ExpectedRevision{kind: expectExact, revision: revision}
}

// IsAny, IsNoStream, IsStreamExists and Revision let adapters translate the condition.
func (e ExpectedRevision) IsAny() bool          { return e.kind == expectAny }
func (e ExpectedRevision) IsNoStream() bool     { return e.kind == expectNoStream }
func (e ExpectedRevision) IsStreamExists() bool { return e.kind == expectStreamExists }

// Revision returns the exact revision and true for Exact, and false otherwise.
func (e ExpectedRevision) Revision() (uint64, bool) { return e.revision, e.kind == expectExact }

// Allows reports whether a stream whose last revision is current (-1 for no stream) meets the
// condition. Adapters that check in their own transaction use it so that all agree.
func (e ExpectedRevision) Allows(current int64) bool {
	switch e.kind {
	case expectNoStream:
		return current < 0
	case expectStreamExists:
		return current >= 0
	case expectExact:
		// A revision past the int64 range is no stream's (it would read as -1, no stream).
		return e.revision <= math.MaxInt64 && current == int64(e.revision)
	default:
		return true
	}
}

func (e ExpectedRevision) String() string {
	switch e.kind {
	case expectNoStream:
		return "no stream"
	case expectStreamExists:
		return "stream exists"
	case expectExact:
		return "revision " + strconv.FormatUint(e.revision, 10)
	default:
		return "any"
	}
}

// AppendResult says where an append landed. For an idempotent re-append it is the result of
// the original append.
type AppendResult struct {
	// NextRevision is the stream revision of the last appended event.
	NextRevision uint64
	// FirstPosition and LastPosition are the global positions of the first and last event.
	FirstPosition uint64
	LastPosition  uint64
}

// Stable error codes, shared by the CLI's JSON output and by tool results.
const (
	CodeWrongExpectedRevision = "wrong_expected_revision"
	CodeEventIDConflict       = "event_id_conflict"
	CodeUnknownEventType      = "unknown_event_type"
	CodeMalformedEvent        = "malformed_event"
	CodeInvalidAppend         = "invalid_append"
)

// WrongExpectedRevisionError is returned when an append's condition does not hold. Nothing was
// appended.
type WrongExpectedRevisionError struct {
	Stream   string
	Expected ExpectedRevision
	// Actual is the stream's last revision, -1 when the stream does not exist.
	Actual int64
}

func (e *WrongExpectedRevisionError) Error() string {
	actual := "no stream"
	if e.Actual >= 0 {
		actual = "revision " + strconv.FormatInt(e.Actual, 10)
	}
	return fmt.Sprintf("%s: stream %q expected %s but is at %s; reload the stream and decide again",
		CodeWrongExpectedRevision, e.Stream, e.Expected, actual)
}

// Code returns the stable error code.
func (e *WrongExpectedRevisionError) Code() string { return CodeWrongExpectedRevision }

// EventIDConflictError is returned when an event id is already stored with different content,
// or in a different place than a retry of the same append would put it. Nothing was appended.
type EventIDConflictError struct {
	EventID string
	Stream  string
	Reason  string
}

func (e *EventIDConflictError) Error() string {
	return fmt.Sprintf("%s: event %s in stream %q: %s; a command id must not be re-used for a different command",
		CodeEventIDConflict, e.EventID, e.Stream, e.Reason)
}

// Code returns the stable error code.
func (e *EventIDConflictError) Code() string { return CodeEventIDConflict }

// InvalidAppendError rejects an append that could never succeed (no events, empty id, type or
// stream name, data that is not JSON). Nothing was appended.
type InvalidAppendError struct {
	Stream string
	Reason string
}

func (e *InvalidAppendError) Error() string {
	return fmt.Sprintf("%s: stream %q: %s", CodeInvalidAppend, e.Stream, e.Reason)
}

// Code returns the stable error code.
func (e *InvalidAppendError) Code() string { return CodeInvalidAppend }

// ValidateAppend rejects appends that no store could accept. Every adapter calls it first.
func ValidateAppend(stream string, evs []Event) error {
	if stream == "" {
		return &InvalidAppendError{Stream: stream, Reason: "empty stream name"}
	}
	if len(evs) == 0 {
		return &InvalidAppendError{Stream: stream, Reason: "no events to append"}
	}
	seen := make(map[string]bool, len(evs))
	for i, ev := range evs {
		switch {
		case ev.ID == "":
			return &InvalidAppendError{Stream: stream, Reason: fmt.Sprintf("event %d has no id", i)}
		case !canonicalUUID(ev.ID):
			return &InvalidAppendError{Stream: stream, Reason: fmt.Sprintf("event id %q is not a lower-case UUID (use events.DeriveID)", ev.ID)}
		case seen[ev.ID]:
			return &InvalidAppendError{Stream: stream, Reason: fmt.Sprintf("event id %s appears twice", ev.ID)}
		case !ValidTypeName(ev.Type):
			return &InvalidAppendError{Stream: stream, Reason: fmt.Sprintf("event %s has type %q, want a dotted versioned name such as session.created.1", ev.ID, ev.Type)}
		case !jsonValid(ev.Data):
			return &InvalidAppendError{Stream: stream, Reason: fmt.Sprintf("event %s data is not valid JSON", ev.ID)}
		}
		seen[ev.ID] = true
	}
	return nil
}

// MatchRetry decides what an append means when some of its event ids are already stored.
// stored holds the already-stored events with those ids, in any order. The append is an exact
// retry when every event is stored, with the same content, in this stream, at consecutive
// revisions in the same order: then the original result is returned. Anything else is an
// *EventIDConflictError.
func MatchRetry(stream string, evs []Event, stored []Recorded) (AppendResult, error) {
	byID := make(map[string]Recorded, len(stored))
	for _, r := range stored {
		byID[r.ID] = r
	}
	var res AppendResult
	for i, ev := range evs {
		r, ok := byID[ev.ID]
		if !ok {
			return res, &EventIDConflictError{EventID: evs[0].ID, Stream: stream,
				Reason: "only part of this append is already stored"}
		}
		if r.Stream != stream {
			return res, &EventIDConflictError{EventID: ev.ID, Stream: stream,
				Reason: fmt.Sprintf("already stored in stream %q", r.Stream)}
		}
		if !r.Event.SameContent(ev) {
			return res, &EventIDConflictError{EventID: ev.ID, Stream: stream,
				Reason: "already stored with different content"}
		}
		if i == 0 {
			res.FirstPosition = r.Position
		} else if r.StreamRevision != res.NextRevision+1 {
			return res, &EventIDConflictError{EventID: ev.ID, Stream: stream,
				Reason: "stored in a different order"}
		}
		res.NextRevision, res.LastPosition = r.StreamRevision, r.Position
	}
	return res, nil
}

// canonicalUUID accepts only the form every store returns ids in, so that ids compare equal
// as strings across adapters: 36 characters, lower-case hex digits in groups of 8-4-4-4-12
// joined by hyphens (what uuid.UUID.String writes).
func canonicalUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
