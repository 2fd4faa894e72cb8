package shell

import (
	"os"
	"os/exec"
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
// when the Launcher has none. Hand it to the command's Guard (ReadStatus); close it when
// the command is not started.
func (r *Runner) LaunchStatus(bashPath string, args []string, dir string) ([]string, []*os.File, *os.File, error) {
	return r.launch(bashPath, args, dir, true)
}

// ProcAttr is how a command's leader is started (its own process group, or its own session
// when the Launcher asks for one); the group is what ReapGroup stops.
func (r *Runner) ProcAttr() *syscall.SysProcAttr { return r.procAttr() }

// Guard is the runtime's side of a command's guard (see guard.go): a background task runs
// under one exactly as a foreground command does.
type Guard struct{ g *guardProc }

// GuardedCommand returns the command that runs argv, with files at fd 3, …, under a guard.
// The caller sets Dir, Env, Stdout, Stderr and SysProcAttr (ProcAttr), starts it, then calls
// Started (or Abandon when Start failed), and Settle once it has been waited for.
func GuardedCommand(argv []string, files []*os.File) (*exec.Cmd, *Guard, error) {
	cmd, g, err := guardedCommand(argv, files)
	if err != nil {
		return nil, nil, err
	}
	return cmd, &Guard{g}, nil
}

// ReadStatus hands the guard a launcher's status reporter (LaunchStatus; nil: none): Settle
// reads it, Abandon closes it.
func (g *Guard) ReadStatus(status *os.File) { g.g.status = status }

// Started closes the runtime's copies of the guard's pipe ends.
func (g *Guard) Started() { g.g.started() }

// Abandon releases the guard's pipes when its process could not be started.
func (g *Guard) Abandon() { g.g.abandon() }

// Settle reads how the command ended from the guard's report; ps is the guard's process
// state after Wait (nil when waiting failed).
func (g *Guard) Settle(ps *os.ProcessState) GuardStatus { return g.g.settle(ps) }
