// Package events holds what every layer agrees an event is: the envelope appended to and read
// from the event store, the contract of an append (expected revisions, typed errors), the
// registry from versioned type names to payload types, and the payload types themselves.
//
// It is pure: no I/O, no clock, no randomness. Event ids are derived from command ids so that a
// re-delivered command produces byte-identical events and the store can de-duplicate them.
package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Metadata travels with every event. It is not part of an event's identity: a retried append
// whose metadata differs only in Time is still the same event.
type Metadata struct {
	// CommandID is the id of the command whose decision produced the event.
	CommandID string `json:"commandId"`
	// CommandDigest is a SHA-256 of the command's canonical content, so that a command id
	// re-used for a different command is detected even after its events were committed. Only
	// a command's first event carries it (logs recorded before issue 13 have it on every
	// event): a reader that checks it meets that event first.
	CommandDigest string `json:"commandDigest,omitempty"`
	// CausationID is the id of the event or command that caused this one.
	CausationID string `json:"causationId,omitempty"`
	// CorrelationID groups everything under one root session. It is left out where it is the
	// session whose stream holds the event (a root session's own events; logs recorded before
	// issue 13 have it there too): CorrelationIn gives it back.
	CorrelationID string `json:"correlationId,omitempty"`
	// Actor is who acted: "user", an agent name, or "host".
	Actor string `json:"actor"`
	// Time comes from the injected clock of the command handler.
	Time time.Time `json:"time"`
	// Hash is the event's link in its stream's hash chain (docs/storage.md, "Hash chain"),
	// set by the store on append: whatever a caller puts here is replaced. It is the last
	// field, so the stored JSON is the JSON without it plus one trailing member, which is how
	// the Postgres append function adds it.
	Hash string `json:"hash,omitempty"`
}

// CorrelationIn is the event's correlation id as an event of stream: the recorded one, or the
// session of a session stream where none is recorded.
func (m Metadata) CorrelationIn(stream string) string {
	if m.CorrelationID != "" {
		return m.CorrelationID
	}
	session, _ := SessionOfStream(stream)
	return session
}

// Event is an event to append: identity, versioned type, JSON payload and metadata.
type Event struct {
	ID       string
	Type     string
	Data     json.RawMessage
	Metadata Metadata
}

// Recorded is an event as the store holds it.
type Recorded struct {
	Event
	// Stream is the aggregate's stream, e.g. "session-ses_01...".
	Stream string
	// StreamRevision counts from 0 within the stream.
	StreamRevision uint64
	// Position is the global, strictly increasing position in the log. Positions are stable
	// across restarts; readers resume after a position (exclusive).
	Position uint64
}

// SameContent reports whether two events with the same id carry the same content (type and
// data). Metadata is excluded on purpose: a retry after a restart has a new clock reading.
func (e Event) SameContent(o Event) bool {
	return e.ID == o.ID && e.Type == o.Type && jsonEqual(e.Data, o.Data)
}

func jsonEqual(a, b json.RawMessage) bool {
	if string(a) == string(b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return string(ca) == string(cb)
}

// idNamespace scopes the name-based UUIDs derived from command ids.
var idNamespace = uuid.MustParse("6f2a7c1e-5b0d-4c8e-9a57-3e1f0b2d4c6a")

// DeriveID returns the event id of the index-th event produced by a command. The same command
// id always yields the same event ids, which is what makes re-delivery idempotent in every
// adapter, EventStoreDB included.
func DeriveID(commandID string, index int) string {
	return uuid.NewSHA1(idNamespace, fmt.Appendf(nil, "%s/%d", commandID, index)).String()
}
