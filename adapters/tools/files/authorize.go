package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Authority is what one tool path stands for when the permission gate asks about it, decided
// before the ask: a final symbolic link is followed here, exactly once, so what is approved is
// the file the link points to, not the link (see "Path authority" in docs/tools.md).
type Authority struct {
	// Target is the absolute path the call reaches: the path itself, or where its final
	// symbolic link points.
	Target string
	// Inside: Target lies inside the workspace root. A call there needs the tool's ordinary
	// permission only.
	Inside bool
	// ExternalDir, when Target is outside the workspace, is the external_directory resource
	// to ask for: Target's directory spelled "dir/*" with forward slashes (the directory of the
	// link's target, not of the link). Empty when Inside.
	ExternalDir string
	// Symlink: the path's last segment is a symbolic link, and Target is where it points.
	Symlink bool
}

// Authorize says what path (as a tool call gives it: relative to the root, or absolute)
// reaches, without reading or changing anything. A symbolic link in the middle of a path
// inside the workspace is refused here already (symlink_refused): no call can use it.
func (w *Workspace) Authorize(p string) (Authority, error) { return w.authorize(p, true) }

// authorize is Authorize; report says whether a detached Workspace tells its caller about a
// path it authorised by spelling: the gate's questions are decisions a replay compares, the
// placing of a restored credential is not (it only matters when a tool runs).
func (w *Workspace) authorize(p string, report bool) (Authority, error) {
	abs, err := w.absolute(p)
	if err != nil {
		return Authority{}, err
	}
	var a Authority
	switch {
	case w.gone != nil && within(w.realRoot, abs):
		if report {
			w.gone(abs)
		}
		a = Authority{Target: abs}
	case within(w.realRoot, abs):
		a, err = w.authorizeBeneath(w.root, p, abs)
	default:
		a, err = authorizeOutside(abs)
	}
	if err != nil {
		return Authority{}, err
	}
	return w.finish(a), nil
}

func (w *Workspace) finish(a Authority) Authority {
	a.Inside = within(w.realRoot, a.Target)
	if !a.Inside {
		a.ExternalDir = ExternalResource(filepath.Dir(a.Target))
	}
	return a
}

// ExternalResource spells a directory as an external_directory resource: "dir/*" with forward
// slashes, the one spelling the shell and the file tools share (docs/tools.md, "Path
// authority").
func ExternalResource(dir string) string {
	s := filepath.ToSlash(filepath.Clean(dir))
	if strings.HasSuffix(s, "/") {
		return s + "*"
	}
	return s + "/*"
}

// absolute maps a tool path to a clean absolute path, the workspace root spelled as resolved.
func (w *Workspace) absolute(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", invalid("path", "path contains a NUL byte")
	}
	if p == "" {
		p = "."
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(w.realRoot, p), nil
	}
	return w.rootSpelling(filepath.Clean(p)), nil
}

// rootSpelling rewrites an absolute path that spells the root as configured (perhaps through a
// link) to the resolved root.
func (w *Workspace) rootSpelling(abs string) string {
	if w.Root != w.realRoot && within(w.Root, abs) {
		rel, _ := filepath.Rel(w.Root, abs)
		return filepath.Join(w.realRoot, rel)
	}
	return abs
}

// authorizeBeneath looks at abs, beneath the directory base (the root, or a granted
// directory), through handles: every directory on the way must be a directory (a link is
// refused), and a final link is read once.
func (w *Workspace) authorizeBeneath(base dir, shown, abs string) (Authority, error) {
	a := Authority{Target: abs}
	rel, _ := filepath.Rel(base.path, abs)
	segs := splitRel(filepath.ToSlash(rel))
	if len(segs) == 0 {
		return a, nil
	}
	d, missing, err := w.descend(base, segs[:len(segs)-1], false)
	var se *stepError
	if errors.As(err, &se) && !se.link {
		return a, nil // a file on the way: nothing to follow; the tool reports it
	}
	if err != nil {
		return a, w.pathError(shown, err)
	}
	defer d.close()
	if len(missing) > 0 {
		return a, nil
	}
	name := segs[len(segs)-1]
	st, ok, err := lstatAt(d, name)
	if err != nil || !ok || !isLink(st) {
		return a, nil
	}
	to, err := readlinkAt(d, name)
	if err != nil {
		return a, nil
	}
	target := to
	if !filepath.IsAbs(to) {
		target = filepath.Join(d.path, to)
	}
	target = w.rootSpelling(filepath.Clean(target))
	if !within(w.realRoot, target) {
		target = realDirOf(target)
	}
	return Authority{Target: target, Symlink: true}, nil
}

// authorizeOutside names abs, outside the root, by its resolved directory; a final link is
// followed once. Outside the workspace the directories on the way are the system's layout
// (/tmp may be a link), so they are resolved by name here: whatever they resolve to, a call
// then reaches the file only from a handle on the granted directory.
func authorizeOutside(abs string) (Authority, error) {
	fi, err := os.Lstat(abs)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return Authority{Target: realDirOf(abs)}, nil
	}
	to, err := os.Readlink(abs)
	if err != nil {
		return Authority{Target: realDirOf(abs)}, nil
	}
	if !filepath.IsAbs(to) {
		to = filepath.Join(filepath.Dir(realDirOf(abs)), to)
	}
	return Authority{Target: realDirOf(filepath.Clean(to)), Symlink: true}, nil
}

// realDirOf resolves the links in p's directory (its longest existing part) and keeps p's last
// segment as it is: a final link is not followed here.
func realDirOf(p string) string {
	parent, base := filepath.Dir(p), filepath.Base(p)
	if parent == p {
		return p
	}
	existing, rest := parent, ""
	for {
		if real, err := filepath.EvalSymlinks(existing); err == nil {
			return filepath.Join(real, rest, base)
		}
		up := filepath.Dir(existing)
		if up == existing {
			return p
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = up
	}
}

// place is a tool path resolved for I/O: the base directory it is reached from and where
// below it.
type place struct {
	key      string // credential key and shown path: root-relative slash path, or absolute slash path outside
	external string // the granted directory it lies under; "" for the workspace root
	rel      string // slash path below the base ("." for the base itself)
	link     bool   // reached by following a final symbolic link
}

// place resolves p for a call whose external_directory grant admitted externalRoot ("" for
// none). A path outside the workspace needs the grant and must lie under it.
//
// A path spelled under the granted directory is looked at from a handle on it, so a link
// below the grant is refused as it would be in the workspace; other spellings are named as
// Authorize names them, and whatever they name is then reached from a handle again.
func (w *Workspace) place(p, externalRoot string) (place, error) {
	ext := cleanExternal(externalRoot)
	a, err := w.authorizeFor(p, ext)
	if err != nil {
		return place{}, err
	}
	if a.Inside {
		rel, _ := filepath.Rel(w.realRoot, a.Target)
		rel = filepath.ToSlash(rel)
		return place{key: rel, rel: rel, link: a.Symlink}, nil
	}
	if ext == "" || !within(ext, a.Target) {
		what := fmt.Sprintf("path %q is outside the workspace root %s", p, w.Root)
		if a.Symlink {
			what = fmt.Sprintf("path %q is a symbolic link to %s, outside the workspace root %s", p, a.Target, w.Root)
		}
		return place{}, &Error{Kind: ExternalDirectoryRequired, Field: "path", Message: fmt.Sprintf(
			"%s; reaching it needs an external_directory permission for %q. Ask for that permission, or use a path inside the workspace",
			what, a.ExternalDir)}
	}
	rel, _ := filepath.Rel(ext, a.Target)
	return place{key: filepath.ToSlash(a.Target), external: ext, rel: filepath.ToSlash(rel), link: a.Symlink}, nil
}

// authorizeFor is Authorize, except that a path spelled under the granted directory ext is
// looked at from a handle on ext.
func (w *Workspace) authorizeFor(p, ext string) (Authority, error) {
	abs, err := w.absolute(p)
	if err != nil {
		return Authority{}, err
	}
	if ext == "" || within(w.realRoot, abs) || !within(ext, abs) {
		return w.authorize(p, false)
	}
	base, err := w.openBase(place{external: ext})
	if err != nil {
		return Authority{}, err
	}
	defer base.close()
	a, err := w.authorizeBeneath(base, p, abs)
	if err != nil {
		return Authority{}, err
	}
	return w.finish(a), nil
}

// cleanExternal accepts the granted directory as a path or as its resource spelling "dir/*".
func cleanExternal(root string) string {
	if root == "" {
		return ""
	}
	root = strings.TrimSuffix(filepath.FromSlash(root), string(filepath.Separator)+"*")
	if !filepath.IsAbs(root) {
		return ""
	}
	return filepath.Clean(root)
}

// openBase opens the handle a place is reached from: the held root (duplicated, so the caller
// always closes what it gets) or the granted directory, walked from / without links.
func (w *Workspace) openBase(pl place) (dir, error) {
	if w.gone != nil {
		return dir{}, w.errGone()
	}
	if pl.external == "" {
		return w.root.dup()
	}
	sys, err := openDirAt(unix.AT_FDCWD, "/")
	if err != nil {
		return dir{}, err
	}
	top := dir{fd: sys, path: "/"}
	defer top.close()
	d, missing, err := w.descend(top, splitRel(filepath.ToSlash(strings.TrimPrefix(pl.external, "/"))), false)
	var se *stepError
	switch {
	case errors.As(err, &se) && se.link:
		return dir{}, &Error{Kind: SymlinkRefused, Field: "path", Message: fmt.Sprintf(
			"the external directory %s goes through %s, a symbolic link; grant the resolved directory instead", pl.external, se.at), Err: err}
	case err != nil:
		return dir{}, &Error{Kind: InvalidArguments, Field: "path", Message: fmt.Sprintf("the external directory %s cannot be opened: %v", pl.external, err), Err: err}
	case len(missing) > 0:
		d.close()
		return dir{}, &Error{Kind: NotFound, Field: "path", Message: fmt.Sprintf("the external directory %s does not exist", pl.external)}
	}
	return d, nil
}

// pathError turns a walk failure on the way to the path shown into the tools' error: a link
// is symlink_refused naming the link; a file on the way is invalid_arguments.
func (w *Workspace) pathError(shown string, err error) error {
	var se *stepError
	if !errors.As(err, &se) {
		return &Error{Kind: InvalidArguments, Field: "path", Message: fmt.Sprintf("path %q cannot be opened: %v", shown, err), Err: err}
	}
	if se.link {
		return &Error{Kind: SymlinkRefused, Field: "path", Err: err, Message: fmt.Sprintf(
			"path %q goes through %s, a symbolic link; the file tools follow a link only as the last segment of a path. "+
				"Use the path the link points to", shown, w.shown(se.at))}
	}
	return &Error{Kind: InvalidArguments, Field: "path", Err: err, Message: fmt.Sprintf(
		"path %q goes through %s, which is not a directory", shown, w.shown(se.at))}
}

// shown spells an absolute path root-relative when it is inside the root.
func (w *Workspace) shown(abs string) string {
	if within(w.realRoot, abs) {
		rel, _ := filepath.Rel(w.realRoot, abs)
		return filepath.ToSlash(rel)
	}
	return abs
}

// parentAndName splits a place's rel into its directory segments and last segment.
func parentAndName(rel string) ([]string, string) {
	segs := splitRel(rel)
	if len(segs) == 0 {
		return nil, ""
	}
	return segs[:len(segs)-1], segs[len(segs)-1]
}

// keyOf spells the key of the directory segs[:n] below a place's base.
func (pl place) keyOf(segs []string) string {
	rel := path.Join(segs...)
	if pl.external == "" {
		return rel
	}
	return filepath.ToSlash(filepath.Join(pl.external, filepath.FromSlash(rel)))
}
