package shell

import (
	"os"
	"syscall"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// Spec is a command to start under a guard (StartGuarded), for the callers that run a command
// of their own rather than a shell call: background tasks (adapters/tools/bg) and the git
// pre-flight's reads (adapters/tools/preflight). Its argv comes from Launch or LaunchStatus.
type Spec struct {
	Argv []string
	// Files go to fd 3, 4, … of the command (the launcher's); StartGuarded closes them
	// whatever happens.
	Files []*os.File
	// Status is a StatusLauncher's reporter (LaunchStatus), or nil: once StartGuarded is
	// called it is the Process's, read by Settle (closed when nothing started).
	Status *os.File
	// Dir is the working directory ("": Zuno's own). Env is the whole environment, scrubbed
	// (Runner.Environ) and with the caller's additions after it.
	Dir string
	Env []string
	// Stdout is the command's fd 1, and its fd 2 unless Stderr is set. The caller closes its
	// copies once StartGuarded returned.
	Stdout, Stderr *os.File
}

// Process is a command running under a guard: a session guard taken from the process's pool
// for as long as the command runs (a background task holds one for its whole life), or a
// guard of its own where a session guard cannot take it (docs/shell-execution.md, "The
// guard"). Every guarantee of a shell call holds: the lifeline, the subreaper, the report
// that alone makes a reserved exit code the guard's.
type Process struct {
	run  guardedRun
	done chan struct{}
	err  error // the wait's, set before done closes
}

// StartGuarded starts s under a guard. An error means nothing runs; its Code is
// CodeExecFailed.
func (r *Runner) StartGuarded(s Spec) (*Process, error) {
	p := prepared{argv: s.Argv, files: s.Files, status: s.Status, dir: s.Dir, env: s.Env}
	run, err := r.startGuarded(p, s.Stdout, s.Stderr)
	if err != nil {
		return nil, err
	}
	return watch(run), nil
}

// startGuarded starts p under a session guard, or under a guard of its own where no session
// guard can take it. errOut nil: the command's fd 2 is out too.
func (r *Runner) startGuarded(p prepared, out, errOut *os.File) (guardedRun, error) {
	run, ok, err := r.startSession(p, out, errOut)
	if !ok {
		run, err = r.startCommandGuard(p, out, errOut)
	}
	return run, err
}

// watch waits for run's report in the background: Done closes when it came (or the guard is
// gone).
func watch(run guardedRun) *Process {
	p := &Process{run: run, done: make(chan struct{})}
	if r, ok := run.(interface{ reported() bool }); ok && r.reported() {
		// A short command's report came with its start (guard.announceAfter): no goroutine
		// to hand the report over, and no wakeup of the caller for it.
		p.err = run.wait()
		close(p.done)
		return p
	}
	go func() {
		p.err = run.wait()
		close(p.done)
	}()
	return p
}

// Pgid is the command's process group, what Zuno signals to stop it; 0 when nothing started
// (the guard could not start the program: Settle says why).
func (p *Process) Pgid() int { return p.run.pgid() }

// Done is closed once the guard reported how the command ended, or is gone.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop stops a running command: SIGTERM to its group, then Kill if the guard has not
// reported within grace. It returns once the guard reported (or was ended).
func (p *Process) Stop(grace time.Duration) {
	if pgid := p.Pgid(); pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	}
	if p.waitFor(grace) {
		return
	}
	p.Kill(grace)
}

// Kill SIGKILLs the command's group and every process below its guard (what left the group
// too: the guard would kill it when the command ends, but a guard that was stopped, SIGSTOP,
// cannot). A guard that still has not reported a grace later is ended with everything below
// it (a session guard outside the group; a per-command guard is in it), so Kill always
// returns, with the call settled as no verdict.
func (p *Process) Kill(grace time.Duration) {
	pgid := p.Pgid()
	if pgid > 0 {
		for _, pid := range guard.Descendants(p.run.guardPid()) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if p.waitFor(grace) {
		return
	}
	p.run.abandon()
	<-p.done
}

// waitFor reports whether the guard reported within d.
func (p *Process) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Settle is how the command ended, from its guard's report, once Done is closed and the
// caller has stopped what was left in the group (ReapGroup); it releases the guard (a session
// guard goes back to the pool). Call it once. The error is for a guard that could not be
// waited for at all.
func (p *Process) Settle() (GuardStatus, error) {
	<-p.done
	return p.run.settle(p.err)
}
