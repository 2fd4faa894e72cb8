package permission

import (
	"slices"
	"sync"

	"github.com/zuno-run/zuno/events"
)

// Standing is one session's "always" answers, folded from its stream: each
// session.permission.granted.1 adds its grants, session.permission.revoked.1 ends every grant
// before it, and a fork starts with none (docs/permissions.md, "Standing approvals"). Being a
// fold of the log, it is the same in every process that reads the session, and nothing of it
// outlives the value a turn folds. The zero value is empty and ready; it is safe for the
// turn's parallel calls. Do not copy it after first use.
type Standing struct {
	mu     sync.RWMutex
	grants []Grant
}

// Grant is one saved approval: calls under Key whose resource matches Pattern.
type Grant struct {
	Key     string `json:"permission"`
	Pattern string `json:"pattern"`
}

// Savable is what an "always" answer to the decision approves: for each check that asked and
// has a savable pattern, that pattern. A check without one (a one-off confirmation) saves
// nothing, and nothing is saved under strict mode, which never honours a standing approval,
// or for a decision that denies.
func Savable(d Decision) []Grant {
	if d.Mode == Strict || d.Action == Deny {
		return nil
	}
	var out []Grant
	for _, c := range d.Checks {
		g := Grant{c.Key, c.Always}
		if c.Action != Ask || c.Always == "" || slices.Contains(out, g) {
			continue
		}
		out = append(out, g)
	}
	return out
}

// Evolve folds one event of the session's stream: grants recorded, revoked, or left behind by
// a fork (the source's grants belong to the source: a fork is another session, and "another
// session asks again"). Every other event leaves the standing approvals as they are.
func (s *Standing) Evolve(p events.Payload) {
	switch e := p.(type) {
	case events.PermissionGranted:
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, g := range e.Grants {
			if g := (Grant{g.Permission, g.Pattern}); g.Key != "" && g.Pattern != "" && !slices.Contains(s.grants, g) {
				s.grants = append(s.grants, g)
			}
		}
	case events.PermissionRevoked, events.SessionForked:
		s.mu.Lock()
		defer s.mu.Unlock()
		s.grants = nil
	}
}

// Covers reports whether earlier "always" answers approve the decision's every ask. A check
// without a savable pattern is never covered, strict mode honours nothing, and a deny is never
// covered.
func (s *Standing) Covers(d Decision) bool {
	if d.Mode == Strict || d.Action != Ask {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, c := range d.Checks {
		if c.Action == Ask && !s.covers(c) {
			return false
		}
	}
	return true
}

// FirstUncovered is the check of d an ask is about: the governing one when no standing
// approval covers it, else the first other check that asks and is not covered.
func (s *Standing) FirstUncovered(d Decision) (Check, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, c := range append([]Check{d.Check}, d.Checks...) {
		if c.Action == Ask && (d.Mode == Strict || !s.covers(c)) {
			return c, true
		}
	}
	return Check{}, false
}

func (s *Standing) covers(c Check) bool {
	if c.Always == "" {
		return false
	}
	var sp *pathSpellings
	if IsPathKey(c.Key) {
		x := spell(c.Resource, "")
		sp = &x
	}
	for _, g := range s.grants {
		// A grant widens nothing: it matches as an allow rule does, by the plain spellings.
		if g.Key == c.Key && matchResource(Rule{Key: g.Key, Pattern: g.Pattern, Action: Allow}, c.Resource, sp, "") {
			return true
		}
	}
	return false
}

// Grants returns the saved grants, in the order answered.
func (s *Standing) Grants() []Grant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.grants)
}

// Recorded is grants as the events carry them.
func Recorded(gs []Grant) []events.StandingGrant {
	out := make([]events.StandingGrant, len(gs))
	for i, g := range gs {
		out[i] = events.StandingGrant{Permission: g.Key, Pattern: g.Pattern}
	}
	return out
}
