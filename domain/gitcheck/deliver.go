package gitcheck

import (
	"bytes"
	"path"
	"strings"
)

// Entry is one entry of `git status --porcelain -z`: the index (X) and work-tree (Y) status
// letters and the path, relative to the repository root.
type Entry struct {
	X, Y byte
	Path string
}

// ParseStatus reads the output of `git status --porcelain -z --no-renames`. ok is false for
// output that is not that format: the caller then knows nothing, which is not "nothing".
func ParseStatus(out []byte) (entries []Entry, ok bool) {
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		if len(rec) < 4 || rec[2] != ' ' {
			return nil, false
		}
		entries = append(entries, Entry{X: rec[0], Y: rec[1], Path: string(rec[3:])})
	}
	return entries, true
}

// Delivered returns the paths inv would add to the index or commit, given prefix, the
// directory git runs in relative to the repository root (git rev-parse --show-prefix: ""
// at the root, else ending in "/"), and the repository's status. Deletions deliver nothing.
func (inv Invocation) Delivered(prefix string, status []Entry) []string {
	if inv.DryRun {
		return nil
	}
	var out []string
	for _, e := range status {
		if inv.takes(e) && inv.matches(prefix, e.Path) {
			out = append(out, e.Path)
		}
	}
	return out
}

// takes says whether the entry is a change this invocation would deliver.
func (inv Invocation) takes(e Entry) bool {
	untracked := e.X == '?'
	worktreeChange := e.Y != ' ' && e.Y != 'D' && e.Y != '!' && !untracked
	staged := strings.IndexByte("AMRCTU", e.X) >= 0
	switch inv.Sub {
	case "add":
		return worktreeChange || (untracked && !inv.Tracked)
	case "commit":
		withPaths := len(inv.Pathspecs) > 0 || inv.AnyPath
		return staged || ((inv.Tracked || withPaths) && worktreeChange)
	}
	return false
}

// matches says whether p (from the repository root) is within what inv names.
func (inv Invocation) matches(prefix, p string) bool {
	switch {
	case inv.AnyPath:
		return true
	case len(inv.Pathspecs) == 0:
		// add takes nothing without a pathspec unless -A/-u; commit takes the whole index.
		return inv.Sub == "commit" || inv.Whole
	}
	for _, spec := range inv.Pathspecs {
		s := path.Clean(path.Join(prefix, spec))
		if s == "." || p == s || strings.HasPrefix(p, s+"/") || strings.HasPrefix(s, "../") {
			return true
		}
	}
	return false
}

// generatedDirs are directories that only ever hold build output, dependency trees or
// caches; nothing in them is source.
var generatedDirs = map[string]bool{
	"node_modules": true, "__pycache__": true, ".pytest_cache": true, ".mypy_cache": true,
	".ruff_cache": true, ".tox": true, ".venv": true, ".gradle": true, ".next": true,
	".nuxt": true, ".parcel-cache": true, ".terraform": true,
}

// generatedSuffixes are file names that are compiled or cached output.
var generatedSuffixes = []string{".pyc", ".pyo", ".o", ".obj", ".so", ".dylib", ".dll", ".class", ".a", ".lib"}

// Generated says whether p is a generated artifact: inside a directory that only holds build
// output, dependencies or caches, an *.egg-info directory, a compiled object or bytecode file,
// or one of Zuno's own output spools. A deliberately short list: a refusal costs the model a
// step, so only paths that are never source are on it (docs/shell-execution.md).
func Generated(p string) bool {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		if generatedDirs[d] || strings.HasSuffix(d, ".egg-info") {
			return true
		}
	}
	base := parts[len(parts)-1]
	if strings.HasPrefix(base, ".spool-") && strings.HasSuffix(base, ".out") {
		return true
	}
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(base, s) && len(base) > len(s) {
			return true
		}
	}
	return false
}

// Artifacts returns the generated artifacts among the paths inv would deliver.
func (inv Invocation) Artifacts(prefix string, status []Entry) []string {
	var out []string
	for _, p := range inv.Delivered(prefix, status) {
		if Generated(p) {
			out = append(out, p)
		}
	}
	return out
}
