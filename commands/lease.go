package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/domain/lease"
	"github.com/zuno-run/zuno/events"
)

// LeaseStream holds the lease of one turn and the requests to interrupt it (domain/lease): a
// stream per turn, so what a process reads to take, renew or check a lease is that turn's
// renewals, never the session's whole history of them (docs/turns.md, "Leases").
func LeaseStream(turnID string) string { return "lease-" + turnID }

// InterruptTurn asks the process that drives a session's running turn to stop it: a command
// like any other, handled wherever the bus delivers it; the holder sees it on its live feed.
type InterruptTurn struct {
	Meta
	SessionID string `json:"sessionId"`
	// TurnID names the turn (the application resolves the session's open turn when the
	// caller names none).
	TurnID string `json:"turnId"`
}

// InterruptTurn records the request; a session with no running turn is turn_not_running.
func (h *Handlers) InterruptTurn(ctx context.Context, c *InterruptTurn) (Result, error) {
	by := c.Actor
	if by == "" {
		by = "user"
	}
	x := leaseExecution(c.Meta, c.TurnID, func(s *lease.State) ([]events.Payload, error) {
		return lease.Interrupt(*s, c.SessionID, c.TurnID, by, h.clock.Now())
	})
	view := func(s *lease.State) any { return map[string]string{"sessionId": c.SessionID, "turnId": s.TurnID} }
	return handle(ctx, h, "InterruptTurn", x, struct{ SessionID, TurnID string }{c.SessionID, c.TurnID}, view), nil
}

func leaseExecution(meta Meta, turnID string, decide func(*lease.State) ([]events.Payload, error)) execution[*lease.State] {
	return execution[*lease.State]{meta: meta, stream: LeaseStream(turnID),
		newState: func() *lease.State { return &lease.State{} }, decide: decide}
}

// Leases takes, renews and gives back the lease of the turns one process drives, and answers
// whether a turn has been asked to stop (docs/turns.md, "Leases").
type Leases struct {
	Store    EventStore
	Registry *events.Registry
	Clock    Clock
	// Holder names this process; TTL is how long a lease lasts unless renewed.
	Holder string
	TTL    time.Duration
	// Dead, when set, says whether a holder is known to be gone before its lease expires (a
	// process of this host that has exited).
	Dead func(holder string) bool
}

// Current is the lease of a turn as the log has it now.
func (l *Leases) Current(ctx context.Context, turnID string) (lease.State, error) {
	var s lease.State
	_, err := Load(ctx, l.Store, l.Registry, LeaseStream(turnID), 0, func(_ events.Recorded, p events.Payload) error {
		return s.Evolve(p)
	})
	return s, err
}

// Held is a turn's lease stream as this process last wrote it. Given to Take, Renew and
// Release, it spares each the read of the stream before it decides, and they keep it up to
// date; when it has gone stale (an interrupt or a takeover landed since), the append conflicts
// and the command reads the stream and decides again. A nil *Held, or the zero Held, reads.
type Held struct {
	state    lease.State
	revision int64
	known    bool
}

// NewLease is the Held of a turn whose lease stream does not exist yet: a turn its starting
// command opens (a re-delivery finds the stream there, and reads it).
func NewLease() *Held { return &Held{revision: -1, known: true} }

// Take takes the lease of turnID for the run of command by (a turn is driven by its starting
// command, then by each command that resumes it: each takes the lease anew), taking it over
// when its holder's lease has expired or the holder is known dead; force takes it whatever
// (--recover). It fails with lease_held while another holder's lease is live.
func (l *Leases) Take(ctx context.Context, sessionID, turnID, by string, force bool, held *Held) error {
	return l.run(ctx, sessionID, turnID, "take/"+turnID+"/"+by, held, func(s *lease.State) ([]events.Payload, error) {
		// force (zuno run --recover) stands for what this process cannot check: a holder on
		// another host. One on this host is dead only when its process is gone.
		local := lease.HolderHost(s.Holder) == lease.HolderHost(l.Holder)
		dead := (force && !local) || (l.Dead != nil && s.Holder != "" && s.Holder != l.Holder && l.Dead(s.Holder))
		return lease.Decide(*s, lease.Take{SessionID: sessionID, TurnID: turnID, Holder: l.Holder, Now: l.Clock.Now(), TTL: l.TTL, Dead: dead})
	})
}

// Renew extends the lease; n numbers the renewal (each is a command of its own). It fails with
// lease_lost when the lease was taken over.
func (l *Leases) Renew(ctx context.Context, sessionID, turnID, by string, n int, held *Held) error {
	return l.run(ctx, sessionID, turnID, fmt.Sprintf("renew/%s/%s/%d", turnID, by, n), held, func(s *lease.State) ([]events.Payload, error) {
		return lease.Renew(*s, lease.Take{SessionID: sessionID, TurnID: turnID, Holder: l.Holder, Now: l.Clock.Now(), TTL: l.TTL})
	})
}

// Release gives the lease of turnID back at the end of the run of command by.
func (l *Leases) Release(ctx context.Context, sessionID, turnID, by string, held *Held) error {
	return l.run(ctx, sessionID, turnID, "release/"+turnID+"/"+by, held, func(s *lease.State) ([]events.Payload, error) {
		return lease.Release(*s, sessionID, turnID, l.Holder), nil
	})
}

func (l *Leases) run(ctx context.Context, sessionID, turnID, what string, held *Held, decide func(*lease.State) ([]events.Payload, error)) error {
	x := leaseExecution(Meta{CommandID: "lease/" + l.Holder + "/" + what, Actor: "host", CorrelationID: sessionID}, turnID, decide)
	x.store, x.registry, x.clock = l.Store, l.Registry, l.Clock
	var err error
	if x.digest, err = Digest("Lease", what); err != nil {
		return err
	}
	if held != nil && held.known {
		s, rev := held.state, held.revision
		x.known = func() (*lease.State, int64) { c := s; return &c, rev }
	}
	s, res, err := x.run(ctx)
	if held != nil {
		held.known = err == nil
		if err == nil {
			held.state, held.revision = *s, res.Revision
		}
	}
	return err
}
