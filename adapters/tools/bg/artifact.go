package bg

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadArtifact reads one window of a withheld-output artifact. The contract
// is Output's, except that without a cursor it starts at byte 0: an artifact
// does not grow, and the notice that withheld it already gave its size.
//
// The path must resolve, symlinks included, to a regular file inside one of
// ArtifactRoots; anything else is refused, so this is not a way to read
// arbitrary files. A relative path is taken relative to each root in turn.
func (m *Manager) ReadArtifact(path string, cursor *int64, limit int) (Window, error) {
	f, real, err := m.openArtifact(path)
	if err != nil {
		return Window{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Window{}, &Error{Code: CodeUnavailable, Field: "outputPath", Message: "the artifact could not be read", Err: err}
	}
	s, err := plan(cursor, limit, fi.Size(), false)
	if err != nil {
		return Window{}, err
	}
	data, err := readRange(f, s.from, s.end)
	if err != nil {
		return Window{}, &Error{Code: CodeUnavailable, Field: "outputPath", Message: "the artifact could not be read", Err: err}
	}
	w := settle(s, data, false)
	w.OutputPath, w.FromDisk = real, true
	return w, nil
}

// openArtifact resolves path inside the artifact roots and opens it.
func (m *Manager) openArtifact(path string) (*os.File, string, error) {
	refuse := invalid("outputPath",
		"%q is not an artifact: outputPath must be the withheld-output path given in a tool result's notice", path)
	if strings.TrimSpace(path) == "" {
		return nil, "", invalid("outputPath", "outputPath is required; pass the path from the withheld-output notice")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return nil, "", refuse
	}
	roots := m.roots()
	if len(roots) == 0 {
		return nil, "", &Error{Code: CodeUnavailable, Field: "outputPath", Message: "no artifact directory is configured, so there is nothing to read back"}
	}
	var candidates []string
	if filepath.IsAbs(path) {
		candidates = []string{filepath.Clean(path)}
	} else {
		for _, r := range roots {
			candidates = append(candidates, filepath.Join(r.lexical, path))
		}
	}
	sawInside := false
	for _, c := range candidates {
		// Lexically outside every root: refuse without revealing whether
		// the file exists.
		if !insideAny(roots, c, true) {
			continue
		}
		sawInside = true
		real, err := filepath.EvalSymlinks(c)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !insideAny(roots, real, false) {
			return nil, "", refuse // a symlink that leaves the roots
		}
		f, err := os.Open(real)
		if err != nil {
			return nil, "", &Error{Code: CodeUnavailable, Field: "outputPath", Message: "the artifact could not be opened", Err: err}
		}
		// Check what was actually opened, in case a path component was
		// swapped after it was resolved.
		if opened, ok := fdPath(f); ok && !insideAny(roots, opened, false) {
			f.Close()
			return nil, "", refuse
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return nil, "", refuse
		}
		return f, real, nil
	}
	if !sawInside {
		return nil, "", refuse
	}
	return nil, "", notFound("outputPath", "no artifact exists at %q; use the exact outputPath from the withheld-output notice", path)
}

type root struct{ lexical, real string }

// roots returns the artifact roots, absolute and with symlinks resolved; a
// root that does not exist yet keeps only its lexical form.
func (m *Manager) roots() []root {
	var out []root
	for _, r := range m.ArtifactRoots {
		abs, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		out = append(out, root{lexical: abs, real: real})
	}
	return out
}

// insideAny reports whether p is strictly inside one of roots (a root itself
// is a directory, never an artifact). lexical compares against both forms of
// each root, since the caller may have spelled either.
func insideAny(roots []root, p string, lexical bool) bool {
	for _, r := range roots {
		if within(r.real, p) || (lexical && within(r.lexical, p)) {
			return true
		}
	}
	return false
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// fdPath is the path the kernel has for an open file (Linux /proc); ok is
// false where that is not available.
func fdPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(p) {
		return "", false
	}
	return p, true
}
