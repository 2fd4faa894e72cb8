// Package commands is the application layer: command types, the handlers that load an
// aggregate from its stream, decide, and append with the expected revision, and the Watermill
// bus that carries commands to those handlers and their results back.
package commands

import (
	"context"
	"time"

	"github.com/zuno-run/zuno/events"
)

// EventStore is what command handlers need of an event store adapter.
type EventStore interface {
	Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.Event) (events.AppendResult, error)
	ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
}

// Clock gives handlers the time they stamp on events; tests inject a fixed one.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock, in UTC.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now().UTC() }

// Meta is carried by every command: who sends it and the id that makes it idempotent.
type Meta struct {
	// CommandID makes the command idempotent end to end: its events' ids derive from it, so a
	// re-sent command returns the first result and appends nothing. A tool call id, an HTTP
	// commandId, or a fresh UUID for a human action.
	CommandID     string `json:"commandId"`
	Actor         string `json:"actor"`
	CorrelationID string `json:"correlationId,omitempty"`
	CausationID   string `json:"causationId,omitempty"`
}

// Streams of the aggregates.
func SessionStream(sessionID string) string { return "session-" + sessionID }

// WorkStream is the durable work state (plan, todos) of a root session.
func WorkStream(rootSessionID string) string { return "work-" + rootSessionID }

// InboxStream holds the answers to a session's permission asks.
func InboxStream(sessionID string) string { return "inbox-" + sessionID }

// commandID is the id every command carries, promoted to each command type (Bus.Send names it
// in a pending command's error).
func (m Meta) commandID() string { return m.CommandID }
