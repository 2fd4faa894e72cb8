package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/zuno-run/zuno/domain/patch"
)

// WriteResult is what write returns.
type WriteResult struct {
	// Path is the root-relative path written (a final symbolic link followed; absolute with
	// forward slashes outside the workspace).
	Path    string
	Created bool
	Bytes   int
	// WrittenPaths is the result's metadata.writtenPaths: the file is here now and can be read
	// again.
	WrittenPaths []string
	// Credential is the writer's credential for the new content.
	Credential patch.ReadCredential
	// Editor: the content went to the editor (Workspace.Editor), which wrote it.
	Editor bool
}

// Write creates a file or wholly replaces one. Replacing an existing file needs a current
// read credential: without one the error is a *patch.Conflict of kind ReadRequired, with a
// stale one StaleRead. A directory at the path is NotAFile, a file among its parents
// NotADirectory. A path outside the workspace is refused (external_directory_required); see
// WriteIn.
func (w *Workspace) Write(ctx context.Context, p string, content []byte) (WriteResult, error) {
	return w.WriteIn(ctx, "", p, content)
}

// WriteIn is Write for a call whose external_directory grant admitted externalRoot (absolute,
// or spelled "dir/*"; "" for none): a path whose target lies under it is reached from a handle
// on it. A final symbolic link is written through: the target changes, the link stays.
func (w *Workspace) WriteIn(ctx context.Context, externalRoot, p string, content []byte) (WriteResult, error) {
	if err := ctxErr(ctx); err != nil {
		return WriteResult{}, err
	}
	pl, err := w.place(p, externalRoot)
	if err != nil {
		return WriteResult{}, err
	}
	if pl.rel == "." {
		return WriteResult{}, invalid("path", "path %q is a directory the tools are rooted at; name a file", p)
	}
	if err := w.guard(p, pl, true); err != nil {
		return WriteResult{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	h, err := w.hold(p, pl)
	if err != nil {
		return WriteResult{}, err
	}
	defer h.close()
	op := patch.OpDigest(&patch.Add{Path: pl.key, Content: string(content)})
	conflict := func(kind patch.ConflictKind, q string, st patch.FileState, action, format string, args ...any) error {
		c := &patch.Conflict{Kind: kind, Path: q, Op: 1, OpDigest: op, Generation: st.Generation,
			Message: fmt.Sprintf(format, args...), RequiredAction: action}
		if st.Kind == patch.File {
			c.ContentDigest = patch.DigestOf(st.Content)
		}
		return c
	}
	// A file among the parents cannot hold a directory.
	if h.blocked >= 0 {
		q, st, err := w.blockedState(h)
		if err != nil {
			return WriteResult{}, err
		}
		return WriteResult{}, conflict(patch.NotADirectory, q, st, fmt.Sprintf("choose a path outside %s, or move %s away first", q, q),
			"cannot create %s: %s is a %s, not a directory", pl.key, q, st.Kind)
	}
	st, err := w.stateOf(h)
	if err == nil {
		st, err = w.editorState(ctx, h, st)
	}
	if err != nil {
		return WriteResult{}, err
	}
	switch st.Kind {
	case patch.Dir, patch.Special:
		return WriteResult{}, conflict(patch.NotAFile, pl.key, st, "choose a path that is not a directory", "cannot write %s: it is a %s", pl.key, st.Kind)
	case patch.File:
		if st.Read == nil {
			return WriteResult{}, conflict(patch.ReadRequired, pl.key, st, fmt.Sprintf("read %s with the read tool before replacing it", pl.key),
				"write would replace %s, which exists and has not been read", pl.key)
		}
		current := patch.DigestOf(st.Content)
		if st.Read.Digest != current || st.Read.Generation != st.Generation {
			c := conflict(patch.StaleRead, pl.key, st, fmt.Sprintf("read %s again and decide on the new content from what it holds now", pl.key),
				"%s changed since it was read (read: %s at generation %d; now: %s at generation %d)",
				pl.key, st.Read.Digest, st.Read.Generation, current, st.Generation).(*patch.Conflict)
			read := *st.Read
			c.Read = &read
			return WriteResult{}, c
		}
	}
	if err := w.checkEditorText(pl.key, content); err != nil {
		return WriteResult{}, err
	}
	if err := w.checkEditorLinks(h); err != nil {
		return WriteResult{}, err
	}
	if err := h.write(ctx, w, content, 0o644); err != nil {
		// One file, written by rename: either the old or the new bytes are there, but the
		// model should look before trying again.
		w.Credentials.Invalidate(pl.key)
		return WriteResult{}, &UncertainError{Failed: pl.key, Err: err}
	}
	cred := w.Credentials.Written(pl.key, content)
	return WriteResult{Path: pl.key, Created: st.Kind == patch.Missing, Bytes: len(content),
		WrittenPaths: []string{pl.key}, Credential: cred, Editor: w.Editor.Writes()}, nil
}

// held is a place opened for a mutation: the handle on its base, and the handle on its parent
// directory (or, when directories are missing, on the deepest one that exists) kept from the
// check to the write, so the write lands in the directory that was checked.
type held struct {
	pl      place
	base    dir
	segs    []string // the parent's segments below base
	d       dir      // the parent, or the deepest existing ancestor
	missing []string // the parent's segments below d that do not exist yet
	name    string
	// blocked is the index in segs of a non-directory on the way (-1: none); d is then unset.
	blocked int
}

// hold opens pl's base and descends to its parent without creating anything.
func (w *Workspace) hold(shown string, pl place) (*held, error) {
	base, err := w.openBase(pl)
	if err != nil {
		return nil, err
	}
	segs, name := parentAndName(pl.rel)
	h := &held{pl: pl, base: base, segs: segs, name: name, blocked: -1, d: dir{fd: -1}}
	d, missing, err := w.descend(base, segs, false)
	var se *stepError
	switch {
	case errors.As(err, &se) && !se.link:
		h.blocked = len(splitRel(filepath.ToSlash(w.relTo(base, se.at)))) - 1
	case err != nil:
		base.close()
		return nil, w.pathError(shown, err)
	default:
		h.d, h.missing = d, missing
	}
	return h, nil
}

func (w *Workspace) relTo(base dir, abs string) string {
	rel, err := filepath.Rel(base.path, abs)
	if err != nil {
		return abs
	}
	return rel
}

func (h *held) close() {
	if h.d.fd >= 0 {
		h.d.close()
	}
	h.base.close()
}

// stateOf loads h's file as the planner sees it, through the held parent handle. The final
// link was followed by place already, so a link found here (one pointing at another link, or
// one that appeared since) is Special: never followed a second time.
func (w *Workspace) stateOf(h *held) (patch.FileState, error) {
	st := patch.FileState{
		Generation: w.Credentials.Generation(h.pl.key),
		Read:       w.Credentials.Held(h.pl.key),
		Attempts:   w.Credentials.Attempts(h.pl.key),
	}
	if h.blocked >= 0 || len(h.missing) > 0 {
		return st, nil
	}
	return loadState(st, h.d, h.name)
}

func loadState(st patch.FileState, d dir, name string) (patch.FileState, error) {
	s, ok, err := lstatAt(d, name)
	if err != nil || !ok {
		return st, err
	}
	switch {
	case isDir(s):
		st.Kind = patch.Dir
	case isRegular(s):
		b, err := readRegularAt(d, name)
		if errors.Is(err, unix.ELOOP) {
			st.Kind = patch.Special
			return st, nil
		}
		if err != nil {
			return st, err
		}
		st.Kind, st.Content = patch.File, b
	default:
		st.Kind = patch.Special
	}
	return st, nil
}

// blockedState names the non-directory among h's parents and loads its state.
func (w *Workspace) blockedState(h *held) (string, patch.FileState, error) {
	q := h.pl.keyOf(h.segs[:h.blocked+1])
	st := patch.FileState{Generation: w.Credentials.Generation(q), Read: w.Credentials.Held(q)}
	d, missing, err := w.descend(h.base, h.segs[:h.blocked], false)
	if err != nil {
		return q, st, w.pathError(q, err)
	}
	defer d.close()
	if len(missing) > 0 {
		return q, st, nil
	}
	st, err = loadState(st, d, h.segs[h.blocked])
	return q, st, err
}

// write replaces h's file with content through the held parent, creating missing parents
// through handles first; with an editor that writes, the editor writes the file there.
func (h *held) write(ctx context.Context, w *Workspace, content []byte, mode fs.FileMode) error {
	if h.blocked >= 0 {
		return &fs.PathError{Op: "write", Path: h.pl.key, Err: unix.ENOTDIR}
	}
	d := h.d
	if len(h.missing) > 0 {
		nd, _, err := w.descend(h.d, h.missing, true)
		if err != nil {
			return err
		}
		defer nd.close()
		d = nd
	}
	if w.Editor.Writes() {
		return w.writeThroughEditor(ctx, h, d, content)
	}
	return replaceAt(d, h.name, content, mode)
}

// remove deletes h's file through the held parent; a file already gone is the wanted state.
func (h *held) remove() error {
	if h.blocked >= 0 || len(h.missing) > 0 {
		return nil
	}
	err := unix.Unlinkat(h.d.fd, h.name, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: h.pl.key, Err: err}
	}
	return nil
}

// mode is the permission bits of h's existing regular file, or def.
func (h *held) mode(def fs.FileMode) fs.FileMode {
	if h.blocked >= 0 || len(h.missing) > 0 {
		return def
	}
	if s, ok, _ := lstatAt(h.d, h.name); ok && isRegular(s) {
		return fs.FileMode(s.Mode & 0o777)
	}
	return def
}
