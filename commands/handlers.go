package commands

import (
	"context"
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// Commands as they travel on the bus, one a file with its handler (create_session.go,
// update_plan.go, ...). Each embeds Meta and the domain command.

// Handlers executes commands against an event store. Its methods are what the bus calls; they
// are safe for concurrent use, and concurrency between handlers (or between processes) is
// settled by the store's expected revisions.
type Handlers struct {
	store    EventStore
	registry *events.Registry
	clock    Clock
	// metrics decorate the handlers where they are assembled (routes, WorkCommands).
	metrics *Metrics
}

// NewHandlers returns handlers over store. metrics, which may be nil, are the decorator the
// bus's routes and WorkCommands apply (Measured); the handler methods themselves record none,
// the way wild-workouts' constructors wrap each handler in its decorators.
func NewHandlers(store EventStore, registry *events.Registry, clock Clock, metrics *Metrics) *Handlers {
	if metrics == nil {
		metrics = NewMetrics(nil)
	}
	return &Handlers{store: store, registry: registry, clock: clock, metrics: metrics}
}

// handle runs x and fills the result's view and error; every handler ends here. body is what
// the command asks for, hashed into its digest.
func handle[S aggregate](ctx context.Context, h *Handlers, name string, x execution[S], body any, view func(S) any) Result {
	x.store, x.registry, x.clock = h.store, h.registry, h.clock
	var (
		state S
		res   = Result{CommandID: x.meta.CommandID, Stream: x.stream, Revision: -1}
		err   error
	)
	if x.digest, err = Digest(name, body); err == nil {
		state, res, err = x.run(ctx)
	}
	if err != nil {
		res.Error = NewErrorReply(err)
	} else if v, merr := json.Marshal(view(state)); merr != nil {
		res.Error = NewErrorReply(merr)
	} else {
		res.View = v
	}
	return res
}
