package replay

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// CodeReplayWorkspaceGone is the stable code of a replay that could not check some steps
// because they needed the session's workspace, which no longer exists (docs/replay.md, "A
// workspace that is gone"). It is not a difference: nothing was decided otherwise.
const CodeReplayWorkspaceGone = "replay_workspace_gone"

// Unchecked is a step whose decisions needed the workspace that is gone: what the disk
// held there is an input the log does not carry, so the step's differences say nothing
// about this build.
type Unchecked struct {
	TurnID    string `json:"turnId"`
	Step      int    `json:"step"`
	Event     string `json:"event"`
	Workspace string `json:"workspace"`
	// Needs is what the step read from the workspace.
	Needs string `json:"needs"`
}

// goneErr is the report of a session whose only findings are unchecked steps.
func (r Report) goneErr() error {
	u := r.Unchecked[0]
	e := domain.NewError(CodeReplayWorkspaceGone,
		fmt.Sprintf("session %s: %d step(s) need the workspace %s, which no longer exists; first: step %d %s needs %s",
			r.SessionID, len(r.Unchecked), u.Workspace, u.Step, u.Event, u.Needs),
		fmt.Sprintf("recreate the workspace at %s as it was (restore the checkout) and replay again; every other step agrees", u.Workspace))
	e.ID = r.SessionID
	return e
}

// detachment is what a turn replayed over a gone workspace needed from it, by step.
type detachment struct {
	workspace string
	needs     map[int]string
}

// detach marks the turn as replayed over the gone workspace dir: every step when the turn read
// the project's configuration file there, else each step whose prompt may
// hold a project AGENTS.md read from there needs it (the sections' sources name the files;
// a receipt that leaves its header out shares it with an earlier one, so once any receipt
// of the session named such a file, every receipt of the turn may depend on it).
func (c *comparer) detach(dir string, before []events.Recorded, registry *events.Registry) func(path string) {
	c.gone = &detachment{workspace: dir, needs: map[int]string{}}
	// The project's configuration file was read from the workspace: every decision of the
	// turn (the rules, the sandbox, the tools offered) may have depended on it.
	for _, f := range c.g.started.Config {
		if inside(dir, f.Path) {
			for _, step := range c.g.steps {
				c.gone.needs[step] = "the project configuration " + f.Path
			}
			return c.assumed
		}
	}
	if src := workspaceSource(dir, before, registry, c.g); src != "" {
		for i, p := range c.g.payloads {
			if _, ok := p.(events.PromptAssembled); ok {
				c.gone.needs[c.g.steps[i]] = "the project instructions " + src
			}
		}
	}
	return c.assumed
}

// assumed records that the step being replayed authorised path by its spelling: the gate's
// answer may have been another had it seen the disk (a link, or a directory that was a file).
func (c *comparer) assumed(path string) {
	i := min(c.next, len(c.g.recs)-1)
	step := c.g.steps[i]
	if _, ok := c.gone.needs[step]; !ok {
		c.gone.needs[step] = "a look at " + path
	}
}

// unchecked reports the difference at recorded event i as a step that needed the workspace,
// when it did; false when the difference stands.
func (c *comparer) unchecked(i int, typ string) bool {
	if c.gone == nil {
		return false
	}
	step := c.g.steps[i]
	needs, ok := c.gone.needs[step]
	if !ok {
		return false
	}
	for _, u := range c.skipped {
		if u.Step == step {
			return true
		}
	}
	c.skipped = append(c.skipped, Unchecked{TurnID: c.g.started.TurnID, Step: step, Event: typ,
		Workspace: c.gone.workspace, Needs: needs})
	return true
}

// workspaceSource is the first prompt section source, recorded before or in g, that lies in
// dir: a file the assembly read from the workspace.
func workspaceSource(dir string, before []events.Recorded, registry *events.Registry, g *group) string {
	for _, rec := range before {
		if rec.Type != events.TypePromptAssembled {
			continue
		}
		p, err := registry.Decode(rec)
		if err != nil {
			continue
		}
		if src := sourceIn(dir, p); src != "" {
			return src
		}
	}
	for _, p := range g.payloads {
		if src := sourceIn(dir, p); src != "" {
			return src
		}
	}
	return ""
}

func sourceIn(dir string, p events.Payload) string {
	pa, ok := p.(events.PromptAssembled)
	if !ok {
		return ""
	}
	for _, s := range pa.Sections {
		if inside(dir, s.Source) {
			return s.Source
		}
	}
	return ""
}

func inside(dir, p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
