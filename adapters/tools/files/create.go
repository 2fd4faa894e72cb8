package files

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CreateNew creates the file rel (a clean root-relative slash path) with content and never
// replaces anything: report_write's publication (see "Path authority" in docs/tools.md). The
// directories on the way are created if missing, through the handle above each, and must
// otherwise be real directories; the file is created with O_EXCL through its parent's handle.
// Errors: *Error symlink_refused (a link on the way), *Error invalid_arguments wrapping
// ENOTDIR (a file on the way), an error matching fs.ErrExist (rel is taken), or, when
// writing failed and the partial file could not be removed, *UncertainError. Nothing is left
// behind otherwise.
func (w *Workspace) CreateNew(rel string, content []byte) error {
	if !fs.ValidPath(rel) || rel == "." {
		return invalid("path", "path %q is not a clean root-relative file path", rel)
	}
	if w.gone != nil {
		return w.errGone()
	}
	segs, name := parentAndName(rel)
	d, _, err := w.descend(w.root, segs, true)
	if err != nil {
		return w.pathError(rel, err)
	}
	defer d.close()
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "create", Path: rel, Err: fs.ErrExist}
	}
	if err != nil {
		return &fs.PathError{Op: "create", Path: rel, Err: err}
	}
	werr := writeAllFD(fd, content)
	if werr == nil {
		werr = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); werr == nil {
		werr = cerr
	}
	if werr == nil {
		return nil
	}
	// The file is ours (O_EXCL): removing it restores the state before the call.
	if rerr := unix.Unlinkat(d.fd, name, 0); rerr != nil {
		return &UncertainError{Written: []string{rel}, Failed: rel,
			Err: fmt.Errorf("%v; the partial file could not be removed: %v", werr, rerr)}
	}
	return &fs.PathError{Op: "write", Path: filepath.FromSlash(rel), Err: werr}
}

func writeAllFD(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
