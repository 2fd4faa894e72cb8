// Package lease is the lease of a running turn (stream lease-<turnId>,
// docs/turns.md "Leases"): which process drives the turn and until when. A holder renews its
// lease while the turn runs; when it stops renewing (its process died, its host is gone) the
// lease expires and any process may take the turn over. Interrupts are asked of the holder
// here too. Pure: the time is given.
package lease

import (
	"fmt"
	"strings"
	"time"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Stable codes.
const (
	// CodeLeaseHeld: another process holds a live lease on the session's turn.
	CodeLeaseHeld = "lease_held"
	// CodeLeaseLost: the lease was taken over after it expired; its old holder must stop.
	CodeLeaseLost = "lease_lost"
	// CodeTurnNotRunning: an interrupt names a turn that holds no lease.
	CodeTurnNotRunning = "turn_not_running"
)

// HolderHost is the host a holder ("host/pid/random") runs on: where its liveness can be
// checked, by a process of that host alone.
func HolderHost(holder string) string {
	host, _, _ := strings.Cut(holder, "/")
	return host
}

// State is the session's current lease.
type State struct {
	TurnID, Holder string
	ExpiresAt      time.Time
	// Released: the turn ended and gave its lease back.
	Released bool
	// Interrupts are the turns whose interruption was asked.
	Interrupts map[string]bool
}

// Evolve applies one event of the lease stream.
func (s *State) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.TurnLeased:
		at, err := time.Parse(time.RFC3339Nano, e.ExpiresAt)
		if err != nil {
			return fmt.Errorf("lease: %s expiresAt %q: %w", e.TurnID, e.ExpiresAt, err)
		}
		if e.Holder != s.Holder || e.TurnID != s.TurnID || s.Released {
			// A new hold of the turn (a resumption, a takeover): an interrupt asked of an
			// earlier hold was for it; this one may be asked to stop again.
			s.Interrupts = nil
		}
		s.TurnID, s.Holder, s.ExpiresAt, s.Released = e.TurnID, e.Holder, at, false
	case events.TurnLeaseReleased:
		if e.TurnID == s.TurnID && e.Holder == s.Holder {
			s.Released = true
		}
	case events.TurnInterruptRequested:
		if s.Interrupts == nil {
			s.Interrupts = map[string]bool{}
		}
		s.Interrupts[e.TurnID] = true
	default:
		return domain.UnexpectedEvent("lease", p)
	}
	return nil
}

// Live reports whether the lease binds others at now: taken, not released, not expired.
func (s State) Live(now time.Time) bool {
	return s.Holder != "" && !s.Released && now.Before(s.ExpiresAt)
}

// Take is the command to take (or renew) the lease of turn TurnID for Holder until Now+TTL.
type Take struct {
	SessionID, TurnID, Holder string
	Now                       time.Time
	TTL                       time.Duration
	// Dead, when set, says that the current holder is known to be gone (its process on this
	// host has exited): its lease binds no one even before it expires.
	Dead bool
}

// Decide takes the lease: refused while another holder's lease is live, a takeover once it
// has expired (or its holder is known dead), a renewal for the same holder and turn.
func Decide(s State, c Take) ([]events.Payload, error) {
	if c.TTL <= 0 {
		return nil, domain.Invalid("ttl", fmt.Sprintf("%v is not a lease", c.TTL), "give the lease a positive duration")
	}
	mine := s.Holder == c.Holder && s.TurnID == c.TurnID
	if !mine && s.Live(c.Now) && !c.Dead {
		e := domain.NewError(CodeLeaseHeld, fmt.Sprintf("turn %s of session %s is running in %s until %s unless it renews",
			s.TurnID, c.SessionID, s.Holder, s.ExpiresAt.Format(time.RFC3339)),
			"wait for it to finish, stop it with zuno session interrupt, or, if that process is gone, wait for its lease to expire (or continue with --recover)")
		e.ID = c.SessionID
		return nil, e
	}
	leased := events.TurnLeased{SessionID: c.SessionID, TurnID: c.TurnID, Holder: c.Holder,
		ExpiresAt: c.Now.Add(c.TTL).UTC().Format(time.RFC3339Nano)}
	if !mine && s.Holder != "" && !s.Released {
		leased.TookOver = s.Holder
	}
	return []events.Payload{leased}, nil
}

// Renew extends a lease its holder still holds; one taken over since is lost.
func Renew(s State, c Take) ([]events.Payload, error) {
	if s.Holder != c.Holder || s.TurnID != c.TurnID || s.Released {
		e := domain.NewError(CodeLeaseLost, fmt.Sprintf("the lease of turn %s was taken by %s", c.TurnID, s.Holder),
			"this process no longer drives the turn: stop it; the log shows who took it over")
		e.ID = c.SessionID
		return nil, e
	}
	return Decide(s, c)
}

// Release gives the lease back when its turn ends; a lease held by someone else is not
// touched.
func Release(s State, sessionID, turnID, holder string) []events.Payload {
	if s.Holder != holder || s.TurnID != turnID || s.Released {
		return nil
	}
	return []events.Payload{events.TurnLeaseReleased{SessionID: sessionID, TurnID: turnID, Holder: holder}}
}

// Interrupt asks the holder of a running turn to stop it. turnID empty names the session's
// running turn. Asking twice records nothing more.
func Interrupt(s State, sessionID, turnID, by string, now time.Time) ([]events.Payload, error) {
	if turnID == "" {
		turnID = s.TurnID
	}
	if s.Holder == "" || s.Released || turnID != s.TurnID || !s.Live(now) {
		e := domain.NewError(CodeTurnNotRunning, fmt.Sprintf("session %s has no running turn %s", sessionID, turnID),
			"check the session with zuno session show; a turn whose process is gone is settled by the next run")
		e.ID = sessionID
		return nil, e
	}
	if s.Interrupts[turnID] {
		return nil, nil
	}
	return []events.Payload{events.TurnInterruptRequested{SessionID: sessionID, TurnID: turnID, By: by}}, nil
}
