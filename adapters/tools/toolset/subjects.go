package toolset

import (
	"os"

	"github.com/zuno-run/zuno/adapters/tools/files"
	"github.com/zuno-run/zuno/domain/patch"
	"github.com/zuno-run/zuno/domain/tools"
)

// The file, search and shell tools tell the permission gate what a call touches before it
// runs (tools.Subjecter): paths are authorised here, a final symbolic link followed once, so
// the gate asks about the file the bytes will reach (docs/permissions.md).

func (t *readTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	a, _ := p.Args.(readArgs)
	return t.s.pathSubjects(a.Path)
}

func (t *writeTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	a, _ := p.Args.(writeArgs)
	return t.s.pathSubjects(a.Path)
}

func (t *applyPatchTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	a, _ := p.Args.(applyPatchArgs)
	parsed, err := patch.Parse(a.Patch)
	if err != nil {
		return nil, err // validated already; a parse failure here blocks rather than runs
	}
	return t.s.pathSubjects(parsed.Paths()...)
}

func (t *reportTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	a, _ := p.Args.(reportArgs)
	return []tools.Subject{{Path: ReportDir + "/" + a.Name}}, nil
}

func (t *globTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	a, _ := p.Args.(globArgs)
	return t.s.searchSubjects(orRoot(a.Path))
}

func (t *grepTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	a, _ := p.Args.(grepArgs)
	return t.s.searchSubjects(orRoot(a.Path))
}

// searchSubjects is pathSubjects for a search: a directory outside the workspace is granted
// as itself, as list's is (the search stays beneath it), a file by the directory holding it.
func (s *Set) searchSubjects(p string) ([]tools.Subject, error) {
	subs, err := s.pathSubjects(p)
	for i, sub := range subs {
		if fi, serr := os.Stat(sub.Target); sub.ExternalDir != "" && serr == nil && fi.IsDir() {
			subs[i].ExternalDir = files.ExternalResource(sub.Target)
		}
	}
	return subs, err
}

func (t *shellTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	a, _ := p.Args.(shellArgs)
	return []tools.Subject{{Command: a.Command}}, nil
}

// pathSubjects authorises each path: a path through a symbolic link directory is refused
// here, before anyone is asked about it.
func (s *Set) pathSubjects(paths ...string) ([]tools.Subject, error) {
	out := make([]tools.Subject, 0, len(paths))
	for _, p := range paths {
		a, err := s.ws.Authorize(p)
		if err != nil {
			return nil, err
		}
		sub := tools.Subject{Path: p}
		// The path as written is what rules name; the target joins it only when it is
		// somewhere else: through a final link, or outside the workspace.
		if a.Symlink || !a.Inside {
			sub.Target = a.Target
		}
		if !a.Inside {
			sub.ExternalDir = a.ExternalDir
		}
		out = append(out, sub)
	}
	return out, nil
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}
