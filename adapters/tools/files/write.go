package files

import (
	"context"
	"fmt"
	"os"
	"path"

	"github.com/zuno-run/zuno/domain/patch"
)

// WriteResult is what write returns.
type WriteResult struct {
	// Path is the root-relative path written (symbolic links resolved).
	Path    string
	Created bool
	Bytes   int
	// WrittenPaths is the result's metadata.writtenPaths: the file is here now and can be read
	// again.
	WrittenPaths []string
	// Credential is the writer's credential for the new content.
	Credential patch.ReadCredential
}

// Write creates a file or wholly replaces one. Replacing an existing file needs a current
// read credential: without one the error is a *patch.Conflict of kind ReadRequired, with a
// stale one StaleRead. A directory at the path is NotAFile, a file among its parents
// NotADirectory.
func (w *Workspace) Write(ctx context.Context, p string, content []byte) (WriteResult, error) {
	if err := ctxErr(ctx); err != nil {
		return WriteResult{}, err
	}
	t, err := w.resolve(p)
	if err != nil {
		return WriteResult{}, err
	}
	if t.rel == "." {
		return WriteResult{}, invalid("path", "path %q is the workspace root; name a file", p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	op := patch.OpDigest(&patch.Add{Path: t.rel, Content: string(content)})
	conflict := func(kind patch.ConflictKind, q string, st patch.FileState, action, format string, args ...any) error {
		c := &patch.Conflict{Kind: kind, Path: q, Op: 1, OpDigest: op, Generation: st.Generation,
			Message: fmt.Sprintf(format, args...), RequiredAction: action}
		if st.Kind == patch.File {
			c.ContentDigest = patch.DigestOf(st.Content)
		}
		return c
	}
	// A file among the parents cannot hold a directory.
	for dir := path.Dir(t.rel); dir != "."; dir = path.Dir(dir) {
		st, err := w.state(dir)
		if err != nil {
			return WriteResult{}, err
		}
		if st.Kind == patch.File || st.Kind == patch.Special {
			return WriteResult{}, conflict(patch.NotADirectory, dir, st, fmt.Sprintf("choose a path outside %s, or move %s away first", dir, dir),
				"cannot create %s: %s is a %s, not a directory", t.rel, dir, st.Kind)
		}
	}
	st, err := w.state(t.rel)
	if err != nil {
		return WriteResult{}, err
	}
	switch st.Kind {
	case patch.Dir, patch.Special:
		return WriteResult{}, conflict(patch.NotAFile, t.rel, st, "choose a path that is not a directory", "cannot write %s: it is a %s", t.rel, st.Kind)
	case patch.File:
		if st.Read == nil {
			return WriteResult{}, conflict(patch.ReadRequired, t.rel, st, fmt.Sprintf("read %s with the read tool before replacing it", t.rel),
				"write would replace %s, which exists and has not been read", t.rel)
		}
		current := patch.DigestOf(st.Content)
		if st.Read.Digest != current || st.Read.Generation != st.Generation {
			c := conflict(patch.StaleRead, t.rel, st, fmt.Sprintf("read %s again and decide on the new content from what it holds now", t.rel),
				"%s changed since it was read (read: %s at generation %d; now: %s at generation %d)",
				t.rel, st.Read.Digest, st.Read.Generation, current, st.Generation).(*patch.Conflict)
			read := *st.Read
			c.Read = &read
			return WriteResult{}, c
		}
	}
	if err := atomicWrite(t.real, content, 0o644); err != nil {
		// One file, written by rename: either the old or the new bytes are there, but the
		// model should look before trying again.
		w.Credentials.Invalidate(t.rel)
		return WriteResult{}, &UncertainError{Failed: t.rel, Err: err}
	}
	cred := w.Credentials.Written(t.rel, content)
	return WriteResult{Path: t.rel, Created: st.Kind == patch.Missing, Bytes: len(content),
		WrittenPaths: []string{t.rel}, Credential: cred}, nil
}

// state loads one root-relative path as the planner sees it. A symbolic link is followed
// (it resolves inside the root, or resolve would have refused it); a dangling one is Special.
func (w *Workspace) state(rel string) (patch.FileState, error) {
	t, err := w.resolve(rel)
	if err != nil {
		return patch.FileState{}, err
	}
	st := patch.FileState{
		Generation: w.Credentials.Generation(t.rel),
		Read:       w.Credentials.Held(t.rel),
		Attempts:   w.Credentials.Attempts(t.rel),
	}
	fi, err := os.Lstat(t.real)
	if err != nil {
		if os.IsNotExist(err) || isNotDir(err) {
			return st, nil
		}
		return st, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if fi, err = os.Stat(t.real); err != nil {
			st.Kind = patch.Special
			return st, nil
		}
	}
	switch {
	case fi.IsDir():
		st.Kind = patch.Dir
	case fi.Mode().IsRegular():
		b, err := os.ReadFile(t.real)
		if err != nil {
			return st, err
		}
		st.Kind, st.Content = patch.File, b
	default:
		st.Kind = patch.Special
	}
	return st, nil
}
