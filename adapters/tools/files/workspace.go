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

	"golang.org/x/sys/unix"

	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
)

// Workspace runs the file tools inside Root. Create it with New; it is safe for concurrent
// use. Its mutation lock serialises write and apply_patch calls (reads take no lock: the
// credential they issue is checked against the file under the lock later).
type Workspace struct {
	Root string
	// Credentials is the model's read state; New sets a fresh store.
	Credentials *Credentials
	// Protected are the paths no call may change, and the hidden ones no call may read
	// (sandbox.Protections; the host sets it before the first call).
	Protected []sandbox.Protection
	// Editor, when set, is the editor's file system: the bytes of a file already placed and
	// checked are read from it, and written through it (editor.go, docs/acp.md).
	Editor *tools.Editor

	mu       sync.Mutex // the mutation lock
	realRoot string
	// root is the held handle on realRoot every workspace path is reached from; rootFile
	// owns it (and closes it when the Workspace is garbage, if Close was not called).
	root     dir
	rootFile *os.File
	// openat2: walk with one openat2 call (useOpenat2 at New), else openat per segment.
	openat2 bool

	// gone, when set, marks a Workspace opened by Detached: root has no handle, and each path
	// inside it authorised by its spelling alone is reported here.
	gone func(path string)

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
	fd, err := unix.Open(real, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("files: workspace root %s is not a directory", root)
		}
		return nil, fmt.Errorf("files: workspace root: %w", &fs.PathError{Op: "open", Path: real, Err: err})
	}
	f := os.NewFile(uintptr(fd), real)
	return &Workspace{Root: abs, Credentials: NewCredentials(), realRoot: real,
		root: dir{fd: fd, path: real}, rootFile: f, openat2: useOpenat2()}, nil
}

// Detached returns a Workspace over root, a directory that no longer exists, for a replay
// (docs/replay.md, "A workspace that is gone"): the tools are opened for their declarations,
// validation and per-session state only. With nothing on disk to look at, a path inside root
// is authorised by its spelling (no link can be followed where there is no directory), and
// assumed is told each such path, so the replay can say which step needed the disk. It reads
// and writes nothing: every call that would fails with a WorkspaceGone error.
func Detached(root string, assumed func(path string)) (*Workspace, error) {
	if root == "" {
		return nil, errNoRoot
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if assumed == nil {
		assumed = func(string) {}
	}
	return &Workspace{Root: abs, Credentials: NewCredentials(), realRoot: abs, root: dir{fd: -1, path: abs},
		gone: assumed}, nil
}

// errGone refuses I/O in a detached Workspace.
func (w *Workspace) errGone() error {
	return &Error{Kind: WorkspaceGone, Message: fmt.Sprintf(
		"the workspace %s no longer exists; nothing in it can be read or written. Recreate it, or move the session with --dir", w.Root)}
}

// Close releases the handle on the root. The Workspace must not be used afterwards.
func (w *Workspace) Close() error {
	if w.rootFile == nil {
		return nil
	}
	return w.rootFile.Close()
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}
