package commands

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/events"
)

// A forked session's history is its source's, by reference (events.SessionForked): Load folds
// the source stream up to the fork point before the fork's own events (docs/storage.md,
// "Forks").

// forkDepth bounds a chain of forks of forks, so a corrupted reference cannot loop.
const forkDepth = 32

// forked is a payload whose stream continues another stream's history.
type forked interface {
	ForkedFrom() (stream string, revision uint64, hash string)
}

// CodeForkSourceChanged: the history a fork was made from is no longer in the log as it was.
const CodeForkSourceChanged = "fork_source_changed"

// ForkSourceError says the event a fork pins is gone or changed.
type ForkSourceError struct {
	Stream   string
	Revision uint64
	Reason   string
}

func (e *ForkSourceError) Error() string {
	return fmt.Sprintf("%s: the fork's history ends at %s revision %d, which %s; run `zuno verify` to find what changed in the log",
		CodeForkSourceChanged, e.Stream, e.Revision, e.Reason)
}

// Code returns the stable code.
func (e *ForkSourceError) Code() string { return CodeForkSourceChanged }

// loadHistory folds stream's events up to revision, checking that the event there still
// carries hash.
func loadHistory(ctx context.Context, store StreamReader, registry *events.Registry, stream string, revision uint64, hash string, fold Fold, depth int) error {
	if depth > forkDepth {
		return &ForkSourceError{Stream: stream, Revision: revision, Reason: fmt.Sprintf("is more than %d forks deep", forkDepth)}
	}
	// Every event of the history must still hash to its link, and the last to the link the
	// fork pinned: a history changed after the fork is refused, not folded.
	prev := ""
	check := func(rec events.Recorded) error {
		if rec.Metadata.Hash == "" {
			prev = "" // older than the chain (docs/storage.md)
			return nil
		}
		body, err := events.BodyDigest(rec.Stream, rec.Event)
		if err != nil || events.Link(prev, rec.StreamRevision, body) != rec.Metadata.Hash {
			return &ForkSourceError{Stream: stream, Revision: revision,
				Reason: fmt.Sprintf("has a history changed since the fork (revision %d no longer matches its hash)", rec.StreamRevision)}
		}
		prev = rec.Metadata.Hash
		return nil
	}
	at, err := loadUpTo(ctx, store, registry, stream, revision, fold, check, depth)
	if err != nil {
		return err
	}
	if at.Metadata.Hash != hash {
		return &ForkSourceError{Stream: stream, Revision: revision, Reason: "no longer carries the hash the fork recorded"}
	}
	return nil
}

// LoadUpTo folds stream's events up to revision (with the history it forks from) and returns
// the event at revision: where a new fork of it would end.
func LoadUpTo(ctx context.Context, store StreamReader, registry *events.Registry, stream string, revision uint64, fold Fold) (events.Recorded, error) {
	return loadUpTo(ctx, store, registry, stream, revision, fold, nil, 0)
}

func loadUpTo(ctx context.Context, store StreamReader, registry *events.Registry, stream string, revision uint64, fold Fold, check func(events.Recorded) error, depth int) (events.Recorded, error) {
	for rec, err := range Events(ctx, store, stream, 0) {
		if err != nil {
			return events.Recorded{}, err
		}
		if rec.StreamRevision > revision {
			break
		}
		if check != nil {
			if err := check(rec); err != nil {
				return events.Recorded{}, err
			}
		}
		if err := foldOne(ctx, store, registry, rec, fold, depth); err != nil {
			return events.Recorded{}, err
		}
		if rec.StreamRevision == revision {
			return rec, nil
		}
	}
	return events.Recorded{}, &ForkSourceError{Stream: stream, Revision: revision, Reason: "is no longer in the log"}
}

// ForkSession opens SessionID with the history of SourceStream up to SourceRevision.
type ForkSession struct {
	Meta
	SessionID      string `json:"sessionId"`
	Title          string `json:"title,omitempty"`
	SourceStream   string `json:"sourceStream"`
	SourceRevision uint64 `json:"sourceRevision"`
}

// ForkSession handles ForkSession: the source's state and the event it ends with are read
// here, from the log, not taken from the sender.
func (h *Handlers) ForkSession(ctx context.Context, c *ForkSession) (Result, error) {
	var src session.State
	at, err := LoadUpTo(ctx, h.store, h.registry, c.SourceStream, c.SourceRevision, func(_ events.Recorded, p events.Payload) error {
		if !src.Exists && !isSessionStart(p) {
			return nil // not a session stream: decideFork says so
		}
		return src.Evolve(p)
	})
	if err != nil {
		return Result{CommandID: c.CommandID, Revision: -1, Error: NewErrorReply(err)}, nil
	}
	fork := session.Fork{SessionID: c.SessionID, Title: c.Title, Source: &src, At: events.ForkSource{
		SessionID: src.SessionID, Stream: at.Stream, Revision: at.StreamRevision, Position: at.Position, EventID: at.ID, Hash: at.Metadata.Hash}}
	body := struct {
		SessionID, Title, SourceStream string
		SourceRevision                 uint64
	}{c.SessionID, c.Title, c.SourceStream, c.SourceRevision}
	return handle(ctx, h, "ForkSession", sessionExecution(c.Meta, c.SessionID, fork), body, sessionView), nil
}

func isSessionStart(p events.Payload) bool {
	switch p.(type) {
	case events.SessionCreated, events.SessionForked:
		return true
	}
	return false
}

// foldOne decodes rec and folds it, after the history it forks from when it opens a fork.
func foldOne(ctx context.Context, store StreamReader, registry *events.Registry, rec events.Recorded, fold Fold, depth int) error {
	p, err := registry.Decode(rec)
	if err != nil {
		return err
	}
	if f, ok := p.(forked); ok && rec.StreamRevision == 0 {
		stream, revision, hash := f.ForkedFrom()
		if err := loadHistory(ctx, store, registry, stream, revision, hash, fold, depth+1); err != nil {
			return err
		}
	}
	return fold(rec, p)
}
