package gate

import (
	"os"
	"path/filepath"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// Explain is zuno debug permissions' decision for one call named by a tool (or a permission
// key) and a resource: the evaluation Check makes (evaluate), before the session's standing
// approvals and before anyone is asked. The resource stands for what the tool would report as
// its subject: a shell command, a path, or nothing for a tool that touches none ("*"). It
// names a resource, not a file, so a symbolic link is not followed. external_directory is
// decided as the check a path in that directory gets (permission.Policy.Decide), for a
// side-effecting call unless the tool is offered and read-only.
func (g *Gate) Explain(tool, resource string) Evaluation {
	c := tools.Call{Decl: tools.Declaration{Name: tool}}
	if t, ok := g.tools[tool]; ok {
		c.Decl = t.Declaration()
	}
	c.Policy = c.Decl.PolicyFor("")
	return g.evaluate(c, []tools.Subject{g.subjectOf(tool, resource)})
}

// subjectOf is the subject a call of the tool on the resource has, as the tools report it
// (adapters/tools/toolset/subjects.go): a command for shell, the path as written for the
// others, with its absolute target when it lies outside the workspace.
func (g *Gate) subjectOf(tool, resource string) tools.Subject {
	if t, ok := g.tools[tool]; ok {
		if _, names := t.(tools.Subjecter); !names {
			return tools.Subject{}
		}
	}
	switch {
	case resource == "":
		return tools.Subject{}
	case permission.KeyFor(tool) == tools.NameShell:
		return tools.Subject{Command: resource}
	case tool == permission.ExternalDirectory || g.workspace == "":
		return tools.Subject{Path: resource}
	}
	s := tools.Subject{Path: resource}
	abs := resource
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(g.workspace, abs)
	}
	abs = filepath.Clean(abs)
	if rel, err := filepath.Rel(g.workspace, abs); err != nil || rel == ".." || len(rel) > 2 && rel[:3] == "../" {
		s.Target = abs
		// As the tools report it: the directory holding the target; a search's directory
		// itself (toolset.Set.searchSubjects).
		dir := filepath.Dir(abs)
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() && (tool == tools.NameGlob || tool == tools.NameGrep) {
			dir = abs
		}
		s.ExternalDir = permission.ExternalDirResource(dir)
	}
	return s
}
