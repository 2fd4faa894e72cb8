package shell

import (
	"os"
	"os/exec"
	"syscall"
)

// guardedRun is one command running under a guard: a per-command guard process
// (commandGuard) or a request to the session guard (sessionRun, docs/shell-execution.md,
// "The session guard").
type guardedRun interface {
	// pgid is the process group Zuno signals to stop the command; 0 when nothing was started.
	pgid() int
	// guardPid is the guard's process: every process of the command is below it.
	guardPid() int
	// wait blocks until the guard reported how the command ended (or is gone).
	wait() error
	// settle reads the verdict once wait returned and the group was stopped, and releases
	// the guard; the error is for a run that has no status at all.
	settle(waitErr error) (GuardStatus, error)
	// abandon ends a guard that does not report even though the command's group was
	// killed (it was stopped, SIGSTOP): wait then returns without a report.
	abandon()
}

// commandGuard is a command under a guard process of its own: the fallback where the session
// guard cannot be used.
type commandGuard struct {
	cmd *exec.Cmd
	g   *guardProc
	// started is the guard's start time (adoptOrphans), for its sweep should it be killed.
	started uint64
}

func (c *commandGuard) pgid() int     { return c.cmd.Process.Pid }
func (c *commandGuard) guardPid() int { return c.cmd.Process.Pid }

// wait also clears what a killed guard left (docs/shell-execution.md, "The guard dies"): it
// was re-parented here, and holds the output pipe the caller drains next.
func (c *commandGuard) wait() error {
	err := c.cmd.Wait()
	if killedBySignal(c.cmd.ProcessState) {
		sweepOrphans(c.started)
	}
	return err
}

// abandon: the guard is in the group Zuno killed; SIGKILL reaches a stopped process too.
func (c *commandGuard) abandon() {}

func (c *commandGuard) settle(waitErr error) (GuardStatus, error) {
	ps := c.cmd.ProcessState
	// What the guard left in the command's group was re-parented here when it ended, and the
	// caller has stopped the group: its statuses are reaped (docs/shell-execution.md, "The
	// guard dies").
	reapZombieOrphans()
	gs := c.g.settle(ps)
	if ps == nil && waitErr != nil {
		return gs, &Error{Code: CodeExecFailed, Msg: "wait", Err: waitErr}
	}
	return gs, nil
}

// startCommandGuard starts p under a guard process of its own, writing to out (and errOut,
// when not nil, for fd 2).
func (r *Runner) startCommandGuard(p prepared, out, errOut *os.File) (guardedRun, error) {
	cmd, g, err := guardedCommand(p.argv, p.files)
	if err != nil {
		CloseFiles(p.files)
		closeStatus(p.status)
		return nil, &Error{Code: CodeExecFailed, Msg: "prepare the command's guard", Err: err}
	}
	g.status = p.status // the guard's now: settle reads it, abandon closes it
	cmd.Dir, cmd.Env = p.dir, p.env
	// *os.File, not a writer: no copying goroutine, and for one file both streams share one
	// pipe, so their write order is kept.
	cmd.Stdout, cmd.Stderr = out, out
	if errOut != nil {
		cmd.Stderr = errOut
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if r.newSession() {
		// A session leader leads its group too: the group is still the one Zuno signals.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	err = cmd.Start()
	CloseFiles(p.files)
	g.started()
	if err != nil {
		g.abandon()
		return nil, &Error{Code: CodeExecFailed, Msg: "start the command's guard", Err: err}
	}
	return &commandGuard{cmd: cmd, g: g, started: adoptOrphans(cmd.Process.Pid)}, nil
}

// killedBySignal: the process ended by a signal (its exit code is -1).
func killedBySignal(ps *os.ProcessState) bool { return ps != nil && ps.ExitCode() == -1 }

// newSession reports whether the Runner's commands start in a session of their own (the
// launcher asks for one: SessionLauncher) rather than a process group of their own.
func (r *Runner) newSession() bool {
	sl, ok := r.Launcher.(SessionLauncher)
	return ok && sl.NewSession()
}

// dedupEnv keeps the last entry of each name, in the order os/exec gives a command's
// environment (exec.Cmd deduplicates the same way for the per-command guard).
func dedupEnv(env []string) []string {
	if !repeatsName(env) {
		return env // the usual case: no map, no copy
	}
	last := make(map[string]int, len(env))
	for i, kv := range env {
		last[envName(kv)] = i
	}
	out := make([]string, 0, len(last))
	for i, kv := range env {
		if last[envName(kv)] == i {
			out = append(out, kv)
		}
	}
	return out
}

// repeatsName reports whether a name occurs twice in env, without allocating for an
// environment of the usual size (names compared pairwise: cheaper than a map at that size).
func repeatsName(env []string) bool {
	if len(env) > 256 {
		return true // dedupEnv's map decides
	}
	var buf [256]string
	names := buf[:len(env)]
	for i, kv := range env {
		names[i] = envName(kv)
		for _, n := range names[:i] {
			if n == names[i] {
				return true
			}
		}
	}
	return false
}

func envName(kv string) string {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i]
		}
	}
	return kv
}
