//go:build !linux

package guard

// SessionMain: without a child subreaper there is no session guard (docs/shell-execution.md,
// "The session guard"); the runtime runs the per-command guard.
func SessionMain() int { return fail(ExitFailed, "no session guard on this system") }
