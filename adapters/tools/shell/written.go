package shell

import (
	"os"
	"path/filepath"
	"sort"
	"time"
)

type fileObs struct {
	exists bool
	size   int64
	mtime  time.Time
}

type watchSet struct {
	paths  []string // absolute
	before map[string]fileObs
}

func stat(p string) fileObs {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return fileObs{}
	}
	return fileObs{exists: true, size: fi.Size(), mtime: fi.ModTime()}
}

// observe records the pre-run state of each watch path. Paths outside the
// workspace root (when one is set) are skipped, not guessed at.
func observe(dir, root string, paths []string) *watchSet {
	w := &watchSet{before: map[string]fileObs{}}
	if root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
			if ev, err := filepath.EvalSymlinks(abs); err == nil {
				root = ev
			}
		}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			base := dir
			if base == "" {
				base, _ = os.Getwd()
			}
			p = filepath.Join(base, p)
		}
		p = filepath.Clean(p)
		if root != "" && !within(root, resolved(p)) {
			// Outside the workspace, by its spelling or through a symbolic link: not this
			// call's to report (docs/shell-execution.md, "writtenPaths").
			continue
		}
		if _, dup := w.before[p]; dup {
			continue
		}
		w.paths = append(w.paths, p)
		w.before[p] = stat(p)
	}
	return w
}

// changed returns the paths that exist after the run and whose size or
// modification time differ from the pre-run observation. Deletions are not
// reported (writtenPaths means "this file is here now, read it again").
func (w *watchSet) changed() []string {
	var out []string
	for _, p := range w.paths {
		a := stat(p)
		b := w.before[p]
		if !a.exists {
			continue
		}
		if !b.exists || a.size != b.size || !a.mtime.Equal(b.mtime) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// resolved is p with symbolic links followed: the file itself when it exists, else its
// directory's real path joined with its name.
func resolved(p string) string {
	if ev, err := filepath.EvalSymlinks(p); err == nil {
		return ev
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return p
}
