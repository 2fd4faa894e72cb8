package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/events"
)

// MaxDecideAttempts bounds how often a handler reloads and re-decides after losing a race for
// the stream's revision. The domain decides again each time whether the command still applies.
const MaxDecideAttempts = 8

// aggregate is a state that folds its stream's events.
type aggregate interface{ Evolve(events.Payload) error }

// Result is what a command's sender gets back, over the bus as JSON.
type Result struct {
	CommandID string `json:"commandId"`
	Stream    string `json:"stream"`
	// Revision is the stream's revision after the command, -1 when the stream is empty.
	Revision int64 `json:"revision"`
	// Events counts the events the command appended (or had appended, for a duplicate).
	Events int `json:"events"`
	// LastPosition is the global position of the command's last event; a caller that wants to
	// read its own write waits until the projections reach it.
	LastPosition uint64 `json:"lastPosition,omitempty"`
	// Duplicate is true when the command id had already been handled: nothing new was written
	// and this is the first result.
	Duplicate bool `json:"duplicate,omitempty"`
	// View is the aggregate's view after the command (the plan, the todo list, the session).
	View json.RawMessage `json:"view,omitempty"`
	// Error is set when the command was refused; nothing was appended.
	Error *ErrorReply `json:"error,omitempty"`
}

// Err returns the command's typed error, nil when it succeeded.
func (r Result) Err() error {
	if r.Error == nil {
		return nil
	}
	return r.Error.Typed()
}

// CommandIDReusedError is returned when a command id that was already handled comes back with
// different content.
type CommandIDReusedError struct {
	CommandID string
	Stream    string
}

// CodeCommandIDReused is its stable code.
const CodeCommandIDReused = "command_id_reused"

func (e *CommandIDReusedError) Error() string {
	return fmt.Sprintf("%s: command id %s was already used for a different command on %s; send a new command id",
		CodeCommandIDReused, e.CommandID, e.Stream)
}

// Code returns the stable error code.
func (e *CommandIDReusedError) Code() string { return CodeCommandIDReused }

// ContentionError is returned when a command lost the race for its stream more often than
// MaxDecideAttempts. Nothing was appended; sending it again with the same id is safe.
type ContentionError struct {
	Stream   string
	Attempts int
}

// CodeContention is its stable code.
const CodeContention = "contention"

func (e *ContentionError) Error() string {
	return fmt.Sprintf("%s: stream %s changed under the command %d times; send it again with the same command id",
		CodeContention, e.Stream, e.Attempts)
}

// Code returns the stable error code.
func (e *ContentionError) Code() string { return CodeContention }

// execution is one command against one aggregate.
type execution[S aggregate] struct {
	store    EventStore
	registry *events.Registry
	clock    Clock
	meta     Meta
	stream   string
	// digest identifies the command's content, to tell a re-delivery from a re-used id.
	digest string
	// newState returns the empty state; decide returns the events a command produces.
	newState func() S
	decide   func(S) ([]events.Payload, error)
	// known, when set, gives the stream as the caller last wrote it (a copy of its state,
	// and its revision): the first attempt decides on it without reading the stream. A stale
	// one costs a conflict and a read, never a wrong decision: the append names the revision
	// the decision was made at.
	known func() (S, int64)
}

// loaded is a stream folded into a state.
type loaded[S aggregate] struct {
	state    S
	revision int64
	// prior is set when this command id was already handled: the state just after its
	// events, and its result.
	prior *Result
}

// run loads, decides, appends, and on a lost race reloads and decides again.
func (x execution[S]) run(ctx context.Context) (S, Result, error) {
	res := Result{CommandID: x.meta.CommandID, Stream: x.stream, Revision: -1}
	if x.meta.CommandID == "" {
		var zero S
		return zero, res, &events.InvalidAppendError{Stream: x.stream, Reason: "command has no command id"}
	}
	for attempt := 1; ; attempt++ {
		var l loaded[S]
		var err error
		if attempt == 1 && x.known != nil {
			l.state, l.revision = x.known()
		} else {
			l, err = x.load(ctx)
		}
		if err != nil {
			return l.state, res, err
		}
		if l.prior != nil {
			return l.state, *l.prior, nil
		}
		res.Revision = l.revision
		payloads, err := x.decide(l.state)
		if err != nil || len(payloads) == 0 {
			return l.state, res, err
		}
		w := Writer{Store: x.store, Stream: x.stream, Meta: x.meta, Digest: x.digest, Clock: x.clock, Revision: l.revision}
		recs, err := w.Append(ctx, payloads...)
		var wrong *events.WrongExpectedRevisionError
		if errors.As(err, &wrong) {
			if attempt >= MaxDecideAttempts {
				return l.state, res, &ContentionError{Stream: x.stream, Attempts: attempt}
			}
			continue
		}
		if err != nil {
			return l.state, res, err
		}
		for _, p := range payloads {
			if err := l.state.Evolve(p); err != nil {
				return l.state, res, err
			}
		}
		res.Revision, res.Events, res.LastPosition = w.Revision, len(recs), recs[len(recs)-1].Position
		return l.state, res, nil
	}
}

// load folds the whole stream. It also finds this command's own events, if an earlier delivery
// appended them: the state is then the state just after them, so the reply is the first reply.
func (x execution[S]) load(ctx context.Context) (loaded[S], error) {
	l := loaded[S]{state: x.newState(), revision: -1}
	priorDone := false
	var err error
	l.revision, err = Load(ctx, x.store, x.registry, x.stream, 0, func(rec events.Recorded, p events.Payload) error {
		mine := rec.Metadata.CommandID == x.meta.CommandID
		if l.prior != nil && !mine {
			priorDone = true // the prior delivery's events (one append, consecutive) are folded
		}
		if priorDone {
			return nil
		}
		if mine && l.prior == nil {
			if rec.Metadata.CommandDigest != x.digest {
				return &CommandIDReusedError{CommandID: x.meta.CommandID, Stream: x.stream}
			}
			l.prior = &Result{CommandID: x.meta.CommandID, Stream: x.stream, Duplicate: true}
		}
		if l.prior != nil {
			l.prior.Revision, l.prior.LastPosition = int64(rec.StreamRevision), rec.Position
			l.prior.Events++
		}
		return l.state.Evolve(p)
	})
	return l, err
}
