//go:build !linux

package shell

import "os"

// startSession: no session guard without a child subreaper (docs/shell-execution.md, "The
// session guard"); every command runs under a per-command guard.
func (r *Runner) startSession(prepared, *os.File, *os.File) (guardedRun, bool, error) {
	return nil, false, nil
}
