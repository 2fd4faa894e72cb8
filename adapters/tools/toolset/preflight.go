package toolset

import (
	"context"

	"github.com/zuno-run/zuno/adapters/tools/preflight"
	"github.com/zuno-run/zuno/domain/gitcheck"
	"github.com/zuno-run/zuno/domain/tools"
)

// preflight runs the git pre-flight of a shell call (docs/shell-execution.md, "git
// pre-flight") before anything starts, foreground or background: a command that runs git add
// or git commit is refused, and not run, when it would deliver generated artifacts or when
// the repository reads cannot tell. A workdir that does not resolve is left to the run, which
// reports it.
func (t *shellTool) preflight(ctx context.Context, a shellArgs) (tools.Result, bool) {
	dir, err := t.s.resolveDir(a.Workdir)
	if err != nil {
		return tools.Result{}, false
	}
	c := preflight.Checker{Runner: t.s.shell, Budget: t.s.cfg.GitPreflightBudget}
	refusal := c.Check(ctx, dir, a.Command)
	if refusal == nil {
		return tools.Result{}, false
	}
	outcome := tools.OutcomeError
	if refusal.Code() == gitcheck.CodePreflightCancelled {
		outcome = tools.OutcomeCancelled
	}
	return tools.Result{Outcome: outcome, ErrorCode: refusal.Code(), Output: "shell: " + refusal.Error()}, true
}
