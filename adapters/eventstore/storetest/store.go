// Package storetest is the conformance suite every event store adapter passes: append with
// expected revision, idempotent re-append, read a stream both ways, read all from a position,
// subscribe (catch-up then live), and global order stable across a reopen.
package storetest

import (
	"context"

	"github.com/zuno-run/zuno/events"
)

// Store is the whole contract of an event store adapter.
type Store interface {
	// Append writes evs to the end of stream if expected holds, atomically. Re-appending events
	// whose ids are all stored, with the same content, returns the original result and writes
	// nothing, whatever expected says; a stored id with other content is an
	// *events.EventIDConflictError; a failed condition an *events.WrongExpectedRevisionError.
	Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.Event) (events.AppendResult, error)
	// ReadStream returns up to limit events of stream with revision >= from, ascending.
	// A stream that does not exist reads as empty.
	ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
	// ReadStreamBackward returns up to limit events with revision <= from, descending;
	// from = math.MaxUint64 starts at the end.
	ReadStreamBackward(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
	// ReadAll returns up to limit events with global position > after, ascending, with no gap
	// that a later read could fill: an event committed while an older append is still in
	// progress may become visible only once that append ends (Postgres, docs/storage.md).
	// Positions increase; they need not be contiguous.
	ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error)
	// LastPosition is the global position of the newest event ReadAll can return, 0 when
	// there is none.
	LastPosition(ctx context.Context) (uint64, error)
	// Subscribe calls handle for every event with position > after, in order: first those
	// already stored, then each new one as it is committed, with no gap and no duplicate at the
	// switch. It returns when ctx ends (ctx.Err()) or handle fails (that error).
	Subscribe(ctx context.Context, after uint64, handle func(events.Recorded) error) error
	Close() error
}
