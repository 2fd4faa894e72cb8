package permission

import (
	"slices"
	"sync"
)

// Standing holds one session's "always" answers, in memory only: they end with the session and
// are never written anywhere (docs/permissions.md, "A saved always belongs to one session").
// The zero value is empty and ready; it is safe for the turn's parallel calls. Do not copy it
// after first use.
type Standing struct {
	mu     sync.RWMutex
	grants []Grant
}

// Grant is one saved approval: calls under Key whose resource matches Pattern.
type Grant struct {
	Key     string `json:"permission"`
	Pattern string `json:"pattern"`
}

// Grant saves an "always" answer to the decision: for each check that asked and has a savable
// pattern, that pattern. A check without one (a one-off confirmation) installs nothing, and
// nothing is saved under strict mode, which never honours a standing approval, or for a
// decision that denies. It returns the grants installed.
func (s *Standing) Grant(d Decision) []Grant {
	if d.Mode == Strict || d.Action == Deny {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var added []Grant
	for _, c := range d.Checks {
		g := Grant{c.Key, c.Always}
		if c.Action != Ask || c.Always == "" || slices.Contains(s.grants, g) {
			continue
		}
		s.grants = append(s.grants, g)
		added = append(added, g)
	}
	return added
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

// Apply returns the decision with a covered ask answered allow, its reason saying so.
func (s *Standing) Apply(d Decision) Decision {
	if !s.Covers(d) {
		return d
	}
	d.Action = Allow
	d.Reason += "; a standing always of this session approves it"
	d.Checks = slices.Clone(d.Checks)
	for i := range d.Checks {
		if d.Checks[i].Action == Ask {
			d.Checks[i].Action = Allow
		}
	}
	return d
}

// Grants returns the saved grants, in the order answered.
func (s *Standing) Grants() []Grant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.grants)
}
