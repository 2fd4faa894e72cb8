package files

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// The two doors below let glob and grep (adapters/tools/search) reach what they search the way
// the file tools reach what they read: through the held root handle, one walk beneath it, no
// symbolic link followed on the way or at the end (see "Path authority" in docs/tools.md).

// OpenBeneath opens rel, a clean slash-separated path below base ("." is base itself), for
// reading. base is a directory opened by OpenBeneath, or nil for the workspace root. A link
// anywhere on rel, a missing entry, or a file on the way is an error; nothing is resolved by
// name from the file system's root.
func (w *Workspace) OpenBeneath(base *os.File, rel string) (*os.File, error) {
	defer runtime.KeepAlive(base)
	if err := checkBelow(rel); err != nil {
		return nil, err
	}
	from := w.base(base)
	parent, name := parentAndName(rel)
	if name == "" {
		d, err := from.dup()
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(d.fd), d.path), nil
	}
	d, err := w.parentBeneath(from, rel, parent)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return openFileAt(d, name)
}

// LstatBeneath returns the mode of rel below base (as for OpenBeneath) without following a
// link at its end; a link on the way is an error. It needs no read permission on rel itself.
func (w *Workspace) LstatBeneath(base *os.File, rel string) (fs.FileMode, error) {
	defer runtime.KeepAlive(base)
	if err := checkBelow(rel); err != nil {
		return 0, err
	}
	parent, name := parentAndName(rel)
	if name == "" {
		return fs.ModeDir, nil
	}
	d, err := w.parentBeneath(w.base(base), rel, parent)
	if err != nil {
		return 0, err
	}
	defer d.close()
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	return modeOf(st), nil
}

// checkBelow refuses a rel that is not a plain path below its base: the walk's fallback
// (openat per segment) would take "..", which openat2's RESOLVE_BENEATH refuses, at its word.
func checkBelow(rel string) error {
	if rel == "." {
		return nil
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return &fs.PathError{Op: "open", Path: rel, Err: fs.ErrInvalid}
		}
	}
	return nil
}

// base is the handle a walk starts from: f's, or the root's.
func (w *Workspace) base(f *os.File) dir {
	if f == nil {
		return w.root
	}
	return dir{fd: int(f.Fd()), path: f.Name()}
}

// parentBeneath opens the directory segs below from; a missing one is fs.ErrNotExist.
func (w *Workspace) parentBeneath(from dir, rel string, segs []string) (dir, error) {
	d, missing, err := w.descend(from, segs, false)
	if err != nil {
		return dir{}, err
	}
	if len(missing) > 0 {
		d.close()
		return dir{}, &fs.PathError{Op: "open", Path: filepath.Join(from.path, filepath.FromSlash(rel)), Err: fs.ErrNotExist}
	}
	return d, nil
}

func modeOf(st unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch {
	case isRegular(st):
	case isDir(st):
		m |= fs.ModeDir
	case isLink(st):
		m |= fs.ModeSymlink
	default:
		m |= fs.ModeIrregular
	}
	return m
}
