package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Workspace runs the file tools inside Root. Create it with New; it is safe for concurrent
// use. Its mutation lock serialises write and apply_patch calls (reads take no lock: the
// credential they issue is checked against the file under the lock later).
type Workspace struct {
	Root string
	// Credentials is the model's read state; New sets a fresh store.
	Credentials *Credentials

	mu       sync.Mutex // the mutation lock
	realRoot string

	// beforeWrite, when set (tests), runs before the i-th write of an apply_patch plan and
	// may return an error that stands for a failed write.
	beforeWrite func(i int, path string) error
}

// New returns a Workspace for the directory root.
func New(root string) (*Workspace, error) {
	if root == "" {
		return nil, errNoRoot
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("files: workspace root: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("files: workspace root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("files: workspace root %s is not a directory", root)
	}
	return &Workspace{Root: abs, Credentials: NewCredentials(), realRoot: real}, nil
}

// target is a resolved tool path.
type target struct {
	real string // absolute path with every existing symbolic link resolved
	rel  string // real path relative to the real root, slash-separated ("." for the root)
}

// resolve maps a tool's path argument to a location inside the root. The path may name
// something that does not exist yet (its missing tail is kept as written); every part that
// exists is resolved through symbolic links and must stay inside the root.
func (w *Workspace) resolve(p string) (target, error) {
	shown := p
	if p == "" {
		p = "."
	}
	if strings.ContainsRune(p, 0) {
		return target{}, invalid("path", "path contains a NUL byte")
	}
	cand := filepath.Join(w.realRoot, p)
	if filepath.IsAbs(p) {
		cand = filepath.Clean(p)
		// An absolute path may spell the root as given or as resolved.
		if rel, err := filepath.Rel(w.Root, cand); err == nil && within(w.Root, cand) {
			cand = filepath.Join(w.realRoot, rel)
		}
	}
	if !within(w.realRoot, cand) {
		return target{}, invalid("path", "path %q is outside the workspace root %s; use a path relative to the root", shown, w.Root)
	}
	// Resolve the longest existing prefix; keep the rest as written.
	existing, rest := cand, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !isNotDir(err) {
			return target{}, &Error{Kind: InvalidArguments, Field: "path", Message: fmt.Sprintf("path %q cannot be inspected: %v", shown, err), Err: err}
		}
		parent := filepath.Dir(existing)
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling symbolic link: keep it unresolved if it lies inside the root; it is
		// reported as a special file, never followed.
		real = existing
		if !within(w.realRoot, real) {
			return target{}, invalid("path", "path %q resolves outside the workspace root %s", shown, w.Root)
		}
	}
	if !within(w.realRoot, real) {
		return target{}, invalid("path", "path %q resolves outside the workspace root %s", shown, w.Root)
	}
	if rest != "" {
		real = filepath.Join(real, rest)
	}
	rel, err := filepath.Rel(w.realRoot, real)
	if err != nil {
		return target{}, err
	}
	return target{real: real, rel: filepath.ToSlash(rel)}, nil
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// atomicWrite replaces (or creates) the file at real with content: a temporary file in the
// same directory, synced, then renamed over the target. An existing file's permission bits
// are kept; mode applies to a new file.
func atomicWrite(real string, content []byte, mode fs.FileMode) error {
	if fi, err := os.Stat(real); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(real)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".zuno-write-*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if _, err := tmp.Write(content); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, real); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}
