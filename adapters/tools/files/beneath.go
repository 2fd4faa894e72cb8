package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Resolution by handle (see "Path authority" in docs/tools.md).
//
// Every file operation starts from a directory handle the Workspace holds (the workspace root,
// or the directory an external_directory grant admitted) and goes down one segment at a time,
// each step opening the next directory through the handle of the one above with symbolic links
// refused. The operation itself (open, create, rename, unlink) then goes through the handle of
// the target's parent. No name is resolved a second time from the file system's root, so
// swapping a directory on the way for a symbolic link after the check cannot move the bytes:
// the walk either reaches the directory it checked or fails.
//
// golang.org/x/sys/unix is used because package syscall has neither openat2 nor the *at calls
// (renameat, mkdirat, unlinkat, readlinkat, fstatat) on every platform in the same shape.

// resolveBeneath is openat2's resolution for one walk: no escape above the handle, no symbolic
// link of any kind.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// useOpenat2 decides whether a new Workspace walks with one openat2 call; otherwise (old
// kernels, seccomp filters that answer ENOSYS or EPERM) it walks with openat and O_NOFOLLOW,
// one segment per call. It is a variable only so that tests can force the fallback.
var useOpenat2 = kernelHasOpenat2

// kernelHasOpenat2 asks the kernel once per process.
var kernelHasOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: resolveBeneath})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// dir is an open directory handle and the absolute path it had when it was opened (used for
// messages and to place a relative link target; never re-opened by that name).
type dir struct {
	fd   int
	path string
}

func (d dir) close() { unix.Close(d.fd) }

func (d dir) dup() (dir, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return dir{}, err
	}
	return dir{fd: fd, path: d.path}, nil
}

// stepError is a walk that met something other than a directory on the way.
type stepError struct {
	at   string // absolute path of the offending segment
	link bool   // a symbolic link (otherwise a file or other non-directory)
	err  error
}

func (e *stepError) Error() string {
	if e.link {
		return e.at + " is a symbolic link"
	}
	return e.at + " is not a directory"
}

func (e *stepError) Unwrap() error { return e.err }

// descend opens the directory segs below base (which stays open and owned by the caller) and
// returns it, owned by the caller. It stops at the first missing segment and returns the
// deepest directory reached with the missing segments; with create it makes them instead
// (mkdirat through the handle above). A symbolic link or a file on the way is a *stepError.
func (w *Workspace) descend(base dir, segs []string, create bool) (dir, []string, error) {
	if len(segs) == 0 {
		d, err := base.dup()
		return d, nil, err
	}
	if w.openat2 {
		fd, err := unix.Openat2(base.fd, strings.Join(segs, "/"), &unix.OpenHow{
			Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath})
		if err == nil {
			return dir{fd: fd, path: filepath.Join(append([]string{base.path}, segs...)...)}, nil, nil
		}
		// Any failure: walk again a segment at a time, which says which segment is missing,
		// a link or a file (and creates what is missing when asked to).
	}
	cur, err := base.dup()
	if err != nil {
		return dir{}, nil, err
	}
	for i, seg := range segs {
		fd, err := openDirAt(cur.fd, seg)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(cur.fd, seg, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				fd, err = openDirAt(cur.fd, seg)
			}
		}
		if errors.Is(err, unix.ENOENT) {
			return cur, segs[i:], nil
		}
		if err != nil {
			err = classify(cur, seg, err)
			cur.close()
			return dir{}, nil, err
		}
		cur.close()
		cur = dir{fd: fd, path: filepath.Join(cur.path, seg)}
	}
	return cur, nil, nil
}

func openDirAt(fd int, name string) (int, error) {
	return unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// classify turns a failed directory step into a *stepError when the entry is a link or a
// non-directory (openat answers ENOTDIR or ELOOP for both), or returns err.
func classify(parent dir, name string, err error) error {
	if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
		return err
	}
	var st unix.Stat_t
	if serr := unix.Fstatat(parent.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil {
		return err
	}
	return &stepError{at: filepath.Join(parent.path, name), link: st.Mode&unix.S_IFMT == unix.S_IFLNK, err: err}
}

// lstatAt is fstatat without following a final link; ok is false when nothing is there.
func lstatAt(d dir, name string) (st unix.Stat_t, ok bool, err error) {
	err = unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return st, false, nil
	}
	return st, err == nil, err
}

func isLink(st unix.Stat_t) bool    { return st.Mode&unix.S_IFMT == unix.S_IFLNK }
func isDir(st unix.Stat_t) bool     { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isRegular(st unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }

// readlinkAt reads the link name in d.
func readlinkAt(d dir, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// openFileAt opens name in d for reading without following a link (a link there is ELOOP).
// O_NONBLOCK keeps a FIFO from blocking the open; it does not change reads of a regular file.
func openFileAt(d dir, name string) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// readRegularAt returns the bytes of the regular file name in d.
func readRegularAt(d dir, name string) ([]byte, error) {
	f, err := openFileAt(d, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// tempPrefix names the temporary files of a write; tests look for leftovers by it.
const tempPrefix = ".zuno-write-"

// replaceAt writes content to name in d atomically: a temporary file created beside it through
// the same handle (O_EXCL), written, given its mode, synced, then renamed onto name through
// that handle. An existing regular file keeps its permission bits; mode applies otherwise.
// The temporary file is removed on every failure.
func replaceAt(d dir, name string, content []byte, mode fs.FileMode) error {
	if st, ok, _ := lstatAt(d, name); ok && isRegular(st) {
		mode = fs.FileMode(st.Mode & 0o777)
	}
	f, tmp, err := createTempAt(d)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	if _, err := f.Write(content); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		return &fs.PathError{Op: "rename", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

func createTempAt(d dir) (*os.File, string, error) {
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		tmp := tempPrefix + hex.EncodeToString(b[:]) + ".tmp"
		fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(d.path, tmp), Err: err}
		}
		return os.NewFile(uintptr(fd), filepath.Join(d.path, tmp)), tmp, nil
	}
	return nil, "", &fs.PathError{Op: "create", Path: d.path, Err: fs.ErrExist}
}

// splitRel splits a clean slash-separated relative path ("." has no segments).
func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}
