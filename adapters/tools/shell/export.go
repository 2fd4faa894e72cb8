package shell

import (
	"os"
	"syscall"
	"time"
)

// This file exports the process-group mechanics for the background-task
// manager (adapters/tools/bg), so a background command is started, stopped
// and reaped by exactly the rules a foreground shell call follows.

// ResolveDir resolves a working directory the way Run does: relative to Root
// (or the process working directory), symlinks evaluated, and inside Root
// when one is set. An empty dir is Root (or "" for the inherited directory).
func (r *Runner) ResolveDir(dir string) (string, error) { return r.resolveDir(dir) }

// ReapGroup stops whatever is still alive in process group pgid after its
// leader exited: SIGTERM, then SIGKILL after grace. It never waits more than
// grace plus one second.
func ReapGroup(pgid int, grace time.Duration) { reapGroup(pgid, grace) }

// SignalName is the conventional name of a signal ("SIGTERM"), or
// "signal N" for one without a name here.
func SignalName(s syscall.Signal) string { return signalName(s) }

// Launch is the argv that runs bash (bashPath, then args) in dir: wrapped by the Runner's
// Launcher when it has one, so a background command is confined exactly as a foreground
// one; and the files the wrapped command expects at fd 3, ... (exec.Cmd.ExtraFiles), which
// the caller closes (CloseFiles) once the command started or could not.
// No status reporter is asked for: preflight's git reads use it, and only need to know a read
// exited 0 (a background task uses LaunchStatus).
func (r *Runner) Launch(bashPath string, args []string, dir string) ([]string, []*os.File, error) {
	argv, files, _, err := r.launch(bashPath, args, dir, false)
	return argv, files, err
}

// LaunchStatus is Launch with a StatusLauncher's status reporter, as a foreground call runs
// (docs/sandbox.md, "How a confined command ended"): status is the reporter's read end, nil
// when the Launcher has none. Hand it to StartGuarded (Spec.Status); close it when the
// command is not started.
func (r *Runner) LaunchStatus(bashPath string, args []string, dir string) ([]string, []*os.File, *os.File, error) {
	return r.launch(bashPath, args, dir, true)
}
