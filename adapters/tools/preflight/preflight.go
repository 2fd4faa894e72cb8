// Package preflight runs the shell tool's git pre-flight (docs/shell-execution.md, "git
// pre-flight"): before a command that runs `git add` or `git commit` starts, at most four
// git reads, sharing one budget, tell what it would deliver, and the call refuses to deliver
// generated artifacts. The decisions are domain/gitcheck's; this package only runs the reads.
//
// The reads run like the command itself: through the session's launcher (so a repository
// whose configuration runs programs, a fsmonitor hook or a filter, runs them confined exactly
// as the model's own git would be), under the process guard, with Zuno's environment
// scrubbed. A read that does not answer by the deadline, the budget minus a reserve, is
// stopped with its whole process group inside that reserve, and the call is refused: an
// unknown repository is not an empty one.
package preflight

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain/gitcheck"
)

// maxOutput bounds what one read may print; a status larger than this is refused, not cut.
const maxOutput = 16 << 20

// Checker runs pre-flights. The zero value reads with git from PATH, unconfined, under
// gitcheck.Budget.
type Checker struct {
	// Runner supplies the launcher (the session's sandbox) and the scrubbed environment.
	Runner *shell.Runner
	// Git is the git program; "" looks up "git" in PATH.
	Git string
	// Budget is the whole pre-flight's time; 0 is gitcheck.Budget.
	Budget time.Duration
}

// Reserve is the part of the budget kept to stop a read that does not answer: a tenth of it,
// at most two seconds. The reads race the budget minus the reserve, so the whole pre-flight,
// the stop included, stays within the budget.
func Reserve(budget time.Duration) time.Duration {
	return min(budget/10, 2*time.Second)
}

// Check runs the pre-flight of command in dir (absolute). nil lets the command run. Text
// that does not read as bash is left to the risk gate, which refuses it in every mode; a
// missing git is left to the command, which fails without it.
func (c *Checker) Check(ctx context.Context, dir, command string) *gitcheck.Refusal {
	invs, ok := gitcheck.Find(command)
	if !ok || len(invs) == 0 {
		return nil
	}
	dirs, byDir, refusal := gitcheck.Plan(invs)
	if refusal != nil || len(dirs) == 0 {
		return refusal
	}
	git := c.Git
	if git == "" {
		git = "git"
	}
	gitPath, err := exec.LookPath(git)
	if err != nil {
		return nil
	}
	budget := c.Budget
	if budget <= 0 {
		budget = gitcheck.Budget
	}
	r := reader{Checker: c, git: gitPath, budget: budget, deadline: time.Now().Add(budget - Reserve(budget))}
	for _, d := range dirs {
		at := dir
		if d != "" {
			at = filepath.Join(dir, filepath.FromSlash(d))
			if filepath.IsAbs(d) {
				at = d
			}
		}
		if refusal := r.check(ctx, at, byDir[d]); refusal != nil {
			return refusal
		}
	}
	return nil
}

// reader makes the reads of one pre-flight against its one deadline.
type reader struct {
	*Checker
	git      string
	budget   time.Duration
	deadline time.Time
}

// check reads one repository and judges its invocations.
func (r reader) check(ctx context.Context, dir string, invs []gitcheck.Invocation) *gitcheck.Refusal {
	prefix, refusal := r.read(ctx, dir, gitcheck.PrefixRead)
	if refusal != nil {
		return refusal
	}
	status, refusal := r.read(ctx, dir, gitcheck.StatusRead)
	if refusal != nil {
		return refusal
	}
	entries, ok := gitcheck.ParseStatus(status)
	if !ok {
		return gitcheck.Failed(gitcheck.StatusRead.Display, "its output is not the porcelain format")
	}
	for _, inv := range invs {
		if arts := inv.Artifacts(strings.TrimSpace(string(prefix)), entries); len(arts) > 0 {
			return gitcheck.Artifacts(inv.Sub, arts)
		}
	}
	return nil
}

// read runs one git read in dir and returns its standard output.
func (r reader) read(ctx context.Context, dir string, read gitcheck.Read) ([]byte, *gitcheck.Refusal) {
	if !time.Now().Before(r.deadline) {
		return nil, gitcheck.Unanswered(read.Display, r.budget)
	}
	runner := r.Runner
	if runner == nil {
		runner = &shell.Runner{}
	}
	argv, files, err := runner.Launch(r.git, read.Args, dir)
	if err != nil {
		return nil, gitcheck.Failed(read.Display, err.Error())
	}
	env, _ := runner.Environ()
	env = append(env, "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	// Standard output and standard error apart: the status is parsed from the first alone,
	// and the second's first line explains a failure.
	var out, errOut capped
	proc, drained, err := start(runner, shell.Spec{Argv: argv, Files: files, Dir: dir, Env: env}, &out, &errOut)
	if err != nil {
		return nil, gitcheck.Failed(read.Display, err.Error())
	}
	timer := time.NewTimer(time.Until(r.deadline))
	defer timer.Stop()
	select {
	case <-proc.Done():
	case <-timer.C:
		stop(proc, drained, r.budget)
		return nil, gitcheck.Unanswered(read.Display, r.budget)
	case <-ctx.Done():
		stop(proc, drained, r.budget)
		return nil, gitcheck.Cancelled(read.Display)
	}
	if pgid := proc.Pgid(); pgid > 0 {
		// Nothing of a read outlives it (what left the group the guard has killed).
		shell.ReapGroup(pgid, 0)
	}
	drained(Reserve(r.budget)) // a process that left the group cannot hold the read open
	gs, _ := proc.Settle()
	switch {
	case out.over || errOut.over:
		return nil, gitcheck.Failed(read.Display, fmt.Sprintf("it printed more than %d bytes", maxOutput))
	case !gs.HasExitCode || gs.ExitCode != 0:
		return nil, gitcheck.Failed(read.Display, ended(gs, errOut.Bytes()))
	}
	return out.Bytes(), nil
}

// start starts one read under the shell's guard (a session guard from the pool, as for the
// command itself), its standard output and standard error read into out and errOut.
// drained waits up to a bound for both to reach their end, then stops reading.
func start(runner *shell.Runner, spec shell.Spec, out, errOut io.Writer) (proc *shell.Process, drained func(time.Duration), err error) {
	var ends []*os.File
	defer func() {
		if err != nil {
			shell.CloseFiles(spec.Files)
			shell.CloseFiles(ends)
		}
	}()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	ends = append(ends, outR, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	ends = append(ends, errR, errW)
	spec.Stdout, spec.Stderr = outW, errW
	proc, err = runner.StartGuarded(spec)
	outW.Close()
	errW.Close()
	if err != nil {
		return nil, nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(out, outR) })
	wg.Go(func() { _, _ = io.Copy(errOut, errR) })
	drained = func(bound time.Duration) {
		done := make(chan struct{})
		go func() {
			wg.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(bound):
			outR.Close()
			errR.Close()
			<-done
		}
		outR.Close()
		errR.Close()
	}
	return proc, drained, nil
}

// stop kills the read's whole process group and everything below its guard, and waits for the
// guard and the output, before the refusal is returned: within the reserve.
func stop(proc *shell.Process, drained func(time.Duration), budget time.Duration) {
	reserve := Reserve(budget)
	proc.Kill(reserve / 4)
	drained(reserve / 4)
	_, _ = proc.Settle()
}

// ended says how a failed read ended, with the first line git wrote on standard error.
func ended(gs shell.GuardStatus, stderr []byte) string {
	how := "it ended without an exit status"
	switch {
	case gs.Signal != "":
		how = "it was killed by " + gs.Signal
	case gs.HasExitCode:
		how = fmt.Sprintf("exit code %d", gs.ExitCode)
	}
	if line, _, _ := strings.Cut(strings.TrimSpace(string(stderr)), "\n"); line != "" {
		how += ": " + line
	}
	return how
}

// capped keeps at most maxOutput bytes and remembers that more came.
type capped struct {
	bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > maxOutput {
		c.over = true
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
