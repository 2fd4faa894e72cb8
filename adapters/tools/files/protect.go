package files

import (
	"path/filepath"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// guard refuses a call on a protected path: any change of one, a read of a hidden one
// (docs/sandbox.md, "Protected by default"; the shell's sandbox mounts the same list). Both
// the path as the call spells it and where it leads are checked: a final link named zuno.json
// is what the next session reads, whatever file it points to, and a link elsewhere that points
// into .git reaches .git.
func (w *Workspace) guard(shown string, pl place, write bool) error {
	if len(w.Protected) == 0 {
		return nil
	}
	reached := filepath.Join(w.realRoot, filepath.FromSlash(pl.rel))
	if pl.external != "" {
		reached = filepath.FromSlash(pl.key)
	}
	candidates := []string{reached}
	if spelled, err := w.absolute(shown); err == nil && spelled != reached {
		candidates = append(candidates, spelled)
	}
	for _, abs := range candidates {
		if p, ok := sandbox.Guard(w.Protected, filepath.ToSlash(w.realRoot), filepath.ToSlash(abs), write); ok {
			return p.Refusal(w.shownSlash(abs), write)
		}
	}
	return nil
}

// shownSlash spells abs as the refusal names it: root-relative inside the workspace.
func (w *Workspace) shownSlash(abs string) string {
	return filepath.ToSlash(w.shown(abs))
}

// HiddenAt reports whether the absolute path abs lies under a protected path the agent may
// not read (Zuno's data, its keys): a search outside the workspace leaves such files out.
func (w *Workspace) HiddenAt(abs string) bool {
	_, hidden := sandbox.Guard(w.Protected, filepath.ToSlash(w.realRoot), filepath.ToSlash(abs), false)
	return hidden
}
