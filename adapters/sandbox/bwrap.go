package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// Launcher wraps the argv of a command before it is executed. The shell runner and the
// background manager declare the same interface (adapters/tools/shell.Launcher).
type Launcher interface {
	Wrap(argv []string, dir string) ([]string, error)
}

// Native runs commands as they are: host execution, no OS confinement.
type Native struct{}

// Wrap returns argv unchanged.
func (Native) Wrap(argv []string, dir string) ([]string, error) { return argv, nil }

// Bubblewrap confines each command with bwrap as one resolution asks.
type Bubblewrap struct {
	path      string
	workspace string
	prefix    []string // every option before --chdir
}

// namespaceArgs are the namespace options of every sandboxed command and of the capability
// probe. A new user namespace in which no further one may be created (so nothing inside can
// build its own view of the filesystem), with every capability dropped (when Zuno runs as
// root, bwrap would keep them inside); private pid, ipc and uts namespaces; a private
// network namespace (loopback only) when the network is denied.
//
// Process lifetime: bwrap's --new-session is NOT used, because it moves the sandbox out of
// the runner's process group, and the kill would then depend on PR_SET_PDEATHSIG alone
// (which we saw lost in a race). Instead the runner starts the outer bwrap in a session of
// its own (NewSession), which takes the controlling terminal away just as well (no TIOCSTI),
// and the sandbox's init and the command stay in the group the runner signals: SIGTERM
// reaches the command, SIGKILL the init, and when the init ends the kernel kills every
// process of the pid namespace, including any that called setsid. --die-with-parent covers
// Zuno itself being killed.
func namespaceArgs(netDeny bool) []string {
	args := []string{"--unshare-user", "--disable-userns", "--assert-userns-disabled", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"}
	if netDeny {
		args = append(args, "--unshare-net")
	}
	return append(args, "--die-with-parent")
}

// NewBubblewrap builds the launcher of a confined resolution over workspace, with the
// launcher Probe.Check verified. The filesystem is the host's, read-only; /dev, /proc and
// /tmp are the sandbox's own (/tmp a private tmpfs that vanishes with the command); the
// workspace (and, for workspace-write, each writable root) is bound after them, writable
// only in workspace-write; each existing protected path is re-bound read-only after all of
// them. Paths are resolved through symbolic links, because bwrap binds the target.
func NewBubblewrap(launcher string, res sandbox.Resolution, workspace string) (*Bubblewrap, error) {
	if res.ResolutionKind != sandbox.KindConfined {
		return nil, fmt.Errorf("sandbox: resolution %s is not confined; use Native", res.ResolutionKind)
	}
	ws, err := realDir(workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	args := namespaceArgs(res.EffectiveNetwork != sandbox.NetworkAllow)
	args = append(args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	switch res.EffectiveAuthority {
	case sandbox.ModeWorkspaceWrite:
		args = append(args, "--bind", ws, ws)
		for _, r := range res.WritableRoots {
			real, err := realDir(r)
			if err != nil {
				return nil, fmt.Errorf("sandbox: writable root %s: %w (create it, or remove it from sandbox.writableRoots)", r, err)
			}
			args = append(args, "--bind", real, real)
		}
	case sandbox.ModeReadOnly:
		// Re-bound after the tmpfs, so a workspace under /tmp is still seen.
		args = append(args, "--ro-bind", ws, ws)
	default:
		return nil, fmt.Errorf("sandbox: cannot confine authority %q", res.EffectiveAuthority)
	}
	for _, p := range res.ProtectedPaths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws, p)
		}
		real, err := filepath.EvalSymlinks(abs)
		if errors.Is(err, os.ErrNotExist) {
			// Nothing to protect yet: binding would create it on the host (docs/sandbox.md).
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox: protected path %s: %w", p, err)
		}
		args = append(args, "--ro-bind", real, real)
	}
	return &Bubblewrap{path: launcher, workspace: ws, prefix: args}, nil
}

// NewSession asks the runner to start the command in a session of its own, with no
// controlling terminal (see namespaceArgs).
func (b *Bubblewrap) NewSession() bool { return true }

// Wrap returns bwrap's argv running argv in dir (the workspace when empty).
func (b *Bubblewrap) Wrap(argv []string, dir string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if dir == "" {
		dir = b.workspace
	}
	out := make([]string, 0, len(b.prefix)+len(argv)+5)
	out = append(out, b.path)
	out = append(out, b.prefix...)
	out = append(out, "--chdir", dir, "--")
	return append(out, argv...), nil
}

func realDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", real)
	}
	return real, nil
}
