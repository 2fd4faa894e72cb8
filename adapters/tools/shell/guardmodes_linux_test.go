package shell

import "testing"

// bothGuards runs a guarantee test under the session guard (the default) and under the
// per-command guard (the fallback), as subtests: every guarantee holds under both
// (docs/shell-execution.md, "The session guard").
func bothGuards(t *testing.T, test func(t *testing.T)) {
	t.Run("session", test)
	t.Run("per-command", func(t *testing.T) {
		setPerCommand(true)
		defer setPerCommand(false)
		test(t)
	})
}

// setPerCommand turns the session guard off (on) for this process, as a failed start does.
func setPerCommand(on bool) { sessionGuards.off.Store(on) }

// perCommand reports whether this process runs per-command guards only.
func perCommand() bool { return sessionGuards.off.Load() }
