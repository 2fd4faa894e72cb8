package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/zuno-run/zuno/events"
)

// StreamReader is what loading a stream needs of an event store.
type StreamReader interface {
	ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
}

// loadPage is how many events one read of a stream load returns (a variable for tests).
var loadPage = 1024

// Events yields the events of stream from revision from on, page by page, in order. A read
// failure is yielded once, as the last item.
func Events(ctx context.Context, store StreamReader, stream string, from uint64) iter.Seq2[events.Recorded, error] {
	return func(yield func(events.Recorded, error) bool) {
		for {
			page, err := store.ReadStream(ctx, stream, from, loadPage)
			if err != nil {
				yield(events.Recorded{}, fmt.Errorf("load %s: %w", stream, err))
				return
			}
			for _, rec := range page {
				if !yield(rec, nil) {
					return
				}
			}
			if len(page) < loadPage {
				return
			}
			from = page[len(page)-1].StreamRevision + 1
		}
	}
}

// Fold takes one decoded event of a stream being loaded.
type Fold func(rec events.Recorded, p events.Payload) error

// Load decodes the events of stream from revision from on and hands each to fold, in order. It
// is the one way anything in the application folds a stream: command handlers, the turn and
// the queries. A forked session's stream folds its source's history first (fork.go); fold
// tells those events by their Stream. It returns the stream's last revision read, -1 when it
// read none. The first error (a read, an event the registry cannot decode, or fold's) ends it.
func Load(ctx context.Context, store StreamReader, registry *events.Registry, stream string, from uint64, fold Fold) (int64, error) {
	last := int64(from) - 1
	for rec, err := range Events(ctx, store, stream, from) {
		if err != nil {
			return last, err
		}
		if err := foldOne(ctx, store, registry, rec, fold, 0); err != nil {
			return last, err
		}
		last = int64(rec.StreamRevision)
	}
	return last, nil
}

// Writer appends the events of one command to one stream. Every event gets an id derived from
// the command id and its index within the command, and the same metadata (command id and
// digest, causation, correlation, actor, time), and every append names the exact revision the
// writer knows: a re-delivered command is recognised in every store, a concurrent writer is
// detected rather than merged. Command handlers write one append with it; the turn writes many.
type Writer struct {
	Store    EventStore
	Stream   string
	Meta     Meta
	Digest   string
	Clock    Clock
	Revision int64 // the stream's last revision as the writer knows it; -1 for no stream
	Next     int   // the index of the command's next event
	// ActorOf, when set, names who acted for each event, overriding Meta.Actor: in a turn the
	// user sends the message and moves the session, the agent does the rest.
	ActorOf func(events.Payload) string
}

// Append writes payloads as the command's next events and returns them as recorded. On a
// *events.WrongExpectedRevisionError nothing was written and the writer is unchanged.
func (w *Writer) Append(ctx context.Context, payloads ...events.Payload) ([]events.Recorded, error) {
	if len(payloads) == 0 {
		return nil, nil
	}
	md := events.Metadata{CommandID: w.Meta.CommandID, CausationID: w.Meta.CausationID,
		CorrelationID: w.correlation(), Actor: w.Meta.Actor, Time: w.Clock.Now()}
	evs := make([]events.Event, len(payloads))
	for i, p := range payloads {
		if w.ActorOf != nil {
			md.Actor = w.ActorOf(p)
		}
		md.CommandDigest = w.digestOf(w.Next + i)
		ev, err := events.EncodeIn(w.Stream, events.DeriveID(w.Meta.CommandID, w.Next+i), p, md)
		if err != nil {
			return nil, err
		}
		evs[i] = ev
	}
	expected := events.NoStream
	if w.Revision >= 0 {
		expected = events.Exact(uint64(w.Revision))
	}
	res, err := w.Store.Append(ctx, w.Stream, expected, evs...)
	if err != nil {
		return nil, err
	}
	first := res.NextRevision + 1 - uint64(len(evs))
	recs := make([]events.Recorded, len(evs))
	for i, ev := range evs {
		recs[i] = events.Recorded{Event: ev, Stream: w.Stream, StreamRevision: first + uint64(i), Position: res.FirstPosition + uint64(i)}
	}
	w.Revision, w.Next = int64(res.NextRevision), w.Next+len(evs)
	return recs, nil
}

// digestOf is the command digest the index-th event of the command carries: only its first
// has it. A command id re-used for another command is told apart by the first event the
// command wrote, which every reader that checks meets first; the digest on each later event
// was about 80 bytes of every step's events (docs/storage.md, "Bytes per step").
func (w *Writer) digestOf(index int) string {
	if index == 0 {
		return w.Digest
	}
	return ""
}

// correlation is the correlation id the writer's events carry: none where it is the session
// the stream belongs to (a root session's own stream), which events.Metadata.CorrelationIn
// gives back.
func (w *Writer) correlation() string {
	if session, ok := events.SessionOfStream(w.Stream); ok && session == w.Meta.CorrelationID {
		return ""
	}
	return w.Meta.CorrelationID
}

// Digest hashes what a command asks for (not who sent it or when), so that a command id
// re-used for different content is told apart from a re-delivery.
func Digest(kind string, body any) (string, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("digest of %s: %w", kind, err)
	}
	sum := sha256.Sum256(append([]byte(kind+"\n"), b...))
	return hex.EncodeToString(sum[:]), nil
}
