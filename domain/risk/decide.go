package risk

// Permission modes (permission.mode) and the gate's actions.
const (
	ModeStandard = "standard"
	ModeStrict   = "strict"
	ModeAllowAll = "allow_all"

	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// Decide is the gate's action for a verdict under a permission mode (docs/risk.md, "Modes"):
//
//   - catastrophic: deny in every mode. allow_all keeps "catastrophic shell denial", and
//     danger-full-access, the run-unconfined fallback and the native backend keep it too.
//   - destructive: ask in standard (the ordinary risk gate), ask in strict, allow in
//     allow_all (it skips asking).
//   - safe: the gate has no objection in standard and allow_all; strict still asks, because
//     a shell call is side-effecting and strict wants a fresh decision for every one.
//
// An unknown mode is treated as strict: a mode the gate does not know gets no relaxation.
// Allow means only "the gate does not object": configured permission rules are evaluated
// first and an explicit deny there is final in every mode.
func Decide(v Verdict, mode string) string {
	if v.Level == Catastrophic {
		return Deny
	}
	switch mode {
	case ModeAllowAll:
		return Allow
	case ModeStandard:
		if v.Level == Destructive {
			return Ask
		}
		return Allow
	}
	return Ask
}
