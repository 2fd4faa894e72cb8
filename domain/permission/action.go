// Package permission is the permission evaluator: the ordered rules of permission.rules and the
// tools switches, merged across the configuration layers, the modes (standard, strict,
// allow_all), the agent contracts that only narrow, and the standing "always" approvals of one
// session. It decides whether one tool call may happen; what the call can physically reach is
// the sandbox's business, a separate gate (docs/permissions.md).
//
// Like the rest of domain it is pure: no I/O, no clock, no globals. A Policy is immutable once
// resolved, so the turn's parallel calls share one without locking.
package permission

// Action is what a rule says about a call.
type Action string

const (
	// Allow lets the call run without asking.
	Allow Action = "allow"
	// Ask needs an approval: a person's answer or a standing "always" of the session.
	Ask Action = "ask"
	// Deny refuses the call. An explicit deny is final in every mode.
	Deny Action = "deny"
)

// Actions lists the valid actions, for error messages.
func Actions() []string { return []string{string(Allow), string(Ask), string(Deny)} }

// rank orders actions by strictness, so that combining two decisions keeps the stricter one.
func (a Action) rank() int {
	switch a {
	case Allow:
		return 0
	case Ask:
		return 1
	default:
		// Anything else is treated as deny: an unknown action fails closed.
		return 2
	}
}

// stricter returns the stricter of a and b, a on a tie.
func stricter(a, b Action) Action {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

func parseAction(s string) (Action, bool) {
	switch a := Action(s); a {
	case Allow, Ask, Deny:
		return a, true
	}
	return "", false
}

// Mode is permission.mode.
type Mode string

const (
	// Standard applies the configured rules. The default.
	Standard Mode = "standard"
	// Strict asks afresh for every side-effecting call, even one a rule allows, and never
	// honours a standing "always".
	Strict Mode = "strict"
	// AllowAll answers every ask with allow. It never lifts a deny: an explicit deny is final.
	AllowAll Mode = "allow_all"
)

// Modes lists the valid modes, for error messages.
func Modes() []string { return []string{string(Standard), string(Strict), string(AllowAll)} }

func parseMode(s string) (Mode, bool) {
	switch m := Mode(s); m {
	case Standard, Strict, AllowAll:
		return m, true
	}
	return "", false
}

// apply turns a rule's action into the call's action under the mode: allow_all answers an
// ask, strict asks again for a side-effecting call a rule allows, and a deny stays a deny.
func (m Mode) apply(a Action, sideEffect bool) Action {
	switch {
	case a == Deny:
		return Deny
	case m == AllowAll:
		return Allow
	case m == Strict && sideEffect:
		return Ask
	}
	return a
}

// Exceeds reports whether a is stricter than b (deny over ask over allow).
func (a Action) Exceeds(b Action) bool { return a.rank() > b.rank() }
