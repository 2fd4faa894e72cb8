package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/bgtask"
	"github.com/zuno-run/zuno/events"
)

// BackgroundStream holds a session's background tasks and their completions (domain/bgtask):
// a stream of its own, because a task ends whenever it ends, and an append to the session
// stream, whose revision the running turn owns, would make that turn fail session_busy
// (docs/tools.md, "Background commands").
func BackgroundStream(sessionID string) string { return "bg-" + sessionID }

// BackgroundTasks records the background tasks one process supervises, and reads a session's
// record back for a later turn, in this process or another.
type BackgroundTasks struct {
	Store    EventStore
	Registry *events.Registry
	Clock    Clock
}

// Started records a task started. Its command id derives from the task id, so a retry records
// it once.
func (b *BackgroundTasks) Started(ctx context.Context, e events.BackgroundStarted) error {
	return b.run(ctx, e.SessionID, e.CallID, "bg/started/"+e.TaskID, e, func(s *bgtask.State) ([]events.Payload, error) {
		return bgtask.Start(*s, e)
	})
}

// Completed records a task's completion: the process that saw it end (command id from the
// task id), or a later one that found it lost (another command id from the task id). Either
// way the first completion stands and the other records nothing (bgtask.Complete).
func (b *BackgroundTasks) Completed(ctx context.Context, e events.BackgroundCompleted) error {
	what := "bg/completed/"
	if e.Status == events.BackgroundLost {
		what = "bg/lost/"
	}
	return b.run(ctx, e.SessionID, e.CallID, what+e.TaskID, e, func(s *bgtask.State) ([]events.Payload, error) {
		return bgtask.Complete(*s, e)
	})
}

// Tasks is a session's record of background tasks as the log has it now.
func (b *BackgroundTasks) Tasks(ctx context.Context, sessionID string) (bgtask.State, error) {
	var s bgtask.State
	_, err := Load(ctx, b.Store, b.Registry, BackgroundStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error {
		return s.Evolve(p)
	})
	return s, err
}

func (b *BackgroundTasks) run(ctx context.Context, sessionID, callID, commandID string, body events.Payload, decide func(*bgtask.State) ([]events.Payload, error)) error {
	x := execution[*bgtask.State]{meta: Meta{CommandID: commandID, Actor: "host", CorrelationID: sessionID, CausationID: callID},
		stream: BackgroundStream(sessionID), newState: func() *bgtask.State { return &bgtask.State{} }, decide: decide,
		store: b.Store, registry: b.Registry, clock: b.Clock}
	var err error
	if x.digest, err = Digest(body.EventType(), body); err != nil {
		return err
	}
	_, _, err = x.run(ctx)
	return err
}
