package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
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
	prefix    []string // every option before the protected paths' mounts
	filter    []byte   // the network-deny system-call filter; nil under network allow
	protected []sandbox.Protection
	writable  []string // the writable mounts, resolved
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

// FileLauncher is a Launcher whose wrapped command needs open files (the network-deny
// system-call filter): WrapFiles returns the argv and the files it expects at fd 3, 4, ...
// of the launched process (exec.Cmd.ExtraFiles, in this order). The caller closes them once
// the command started, or failed to. Wrap refuses a command that needs files, so a caller
// that does not know this interface fails closed. The shell runner declares the same
// interface (adapters/tools/shell.FileLauncher).
type FileLauncher interface {
	Launcher
	WrapFiles(argv []string, dir string) ([]string, []*os.File, error)
}

// NewBubblewrap builds the launcher of a confined resolution over workspace, with the
// launcher Probe.Check verified. The filesystem is the host's, read-only; /dev, /proc and
// /tmp are the sandbox's own (/tmp a private tmpfs that vanishes with the command); under
// network deny the host's runtime socket directories are hidden behind empty tmpfs mounts
// and a system-call filter refuses network sockets and connect(2) (seccomp.go); the
// workspace (and, for workspace-write, each writable root) is bound after them, writable
// only in workspace-write; then, per command (protectedArgs), each existing path of protected
// (sandbox.Protections: the defaults, git's places, Zuno's own files and
// sandbox.protectedPaths) is re-bound read-only, or hidden, and a missing one covered when it
// asks to be, after all of them, its ancestors inside a writable root pinned as mount points
// first (pinArgs). Paths are resolved through symbolic links, because bwrap binds the target.
func NewBubblewrap(launcher string, res sandbox.Resolution, workspace string, protected []sandbox.Protection) (*Bubblewrap, error) {
	if res.ResolutionKind != sandbox.KindConfined {
		return nil, fmt.Errorf("sandbox: resolution %s is not confined; use Native", res.ResolutionKind)
	}
	ws, err := realDir(workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	netDeny := res.EffectiveNetwork != sandbox.NetworkAllow
	var filter []byte
	if netDeny {
		if filter, err = nativeNetworkFilter(); err != nil {
			return nil, &SeccompError{Err: err}
		}
	}
	args := namespaceArgs(netDeny)
	args = append(args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	if netDeny {
		for _, d := range runtimeDirs(ws, os.Getenv("XDG_RUNTIME_DIR")) {
			args = append(args, "--tmpfs", d)
		}
	}
	writable := []string{}
	switch res.EffectiveAuthority {
	case sandbox.ModeWorkspaceWrite:
		args = append(args, "--bind", ws, ws)
		writable = append(writable, ws)
		for _, r := range res.WritableRoots {
			real, err := realDir(r)
			if err != nil {
				return nil, fmt.Errorf("sandbox: writable root %s: %w (create it, or remove it from sandbox.writableRoots)", r, err)
			}
			args = append(args, "--bind", real, real)
			writable = append(writable, real)
		}
	case sandbox.ModeReadOnly:
		// Re-bound after the tmpfs, so a workspace under /tmp is still seen.
		args = append(args, "--ro-bind", ws, ws)
	default:
		return nil, fmt.Errorf("sandbox: cannot confine authority %q", res.EffectiveAuthority)
	}
	b := &Bubblewrap{path: launcher, workspace: ws, prefix: args, filter: filter, protected: protected, writable: writable}
	if _, err := b.protectedArgs(false); err != nil {
		return nil, err
	}
	return b, nil
}

// protectedArgs mount the protected paths as they are when a command starts (not when the
// session was assembled): an existing one re-bound read-only or hidden, a missing one
// covered or skipped, its ancestors inside a writable root pinned as mount points first
// (pinArgs), and the directory of a protected link frozen (freezeArgs). A path the user
// makes on the host during the session (git init) is then bound, not covered. create makes
// the covers' mount points on the host (for a command about to start; not for the check at
// assembly, which leaves nothing behind).
func (b *Bubblewrap) protectedArgs(create bool) ([]string, error) {
	mounts, frozen, err := protectedMounts(b.protected, b.workspace, b.writable)
	if err != nil {
		return nil, err
	}
	if create {
		makeCoverPoints(mounts)
	}
	var args []string
	var reals []string
	for _, m := range mounts {
		reals = append(reals, m.real)
	}
	args = append(args, structureArgs(reals, b.writable, frozen)...)
	// Read-only binds first, hiding mounts last: a hidden path below a protected one (the
	// data directory inside a protected configuration directory) stays hidden.
	for _, m := range mounts {
		if !m.hidden {
			args = append(args, m.readOnly()...)
		}
	}
	for _, m := range mounts {
		if m.hidden {
			args = append(args, m.hide()...)
		}
	}
	return args, nil
}

// protectedMount is one existing protected path, resolved, or a missing one covered.
type protectedMount struct {
	real   string
	hidden bool
	dir    bool
	// cover: the path is missing and the sandbox creates it, empty and read-only
	// (sandbox.CoverDir, sandbox.CoverFile).
	cover string
}

// readOnly keeps a protected path from being changed: an existing one re-bound read-only, a
// missing one covered by an empty read-only directory (tmpfs) or file (/dev/null), so a
// command cannot create it. bwrap makes the cover's mount point on the host, where it stays
// empty: git takes an empty .git directory for no repository (it looks further up), an
// empty hooks directory for no hooks, an empty file for no configuration.
func (m protectedMount) readOnly() []string {
	switch m.cover {
	case sandbox.CoverDir:
		return []string{"--tmpfs", m.real, "--remount-ro", m.real}
	case sandbox.CoverFile:
		return []string{"--ro-bind", "/dev/null", m.real}
	}
	return []string{"--ro-bind", m.real, m.real}
}

// hide covers a hidden path inside the sandbox: a directory by an empty tmpfs remounted
// read-only, a file by /dev/null (reads are empty, writes vanish, and neither its content nor
// its metadata is seen). A mount point cannot be removed or renamed (EBUSY), and a hard link
// to it crosses mounts (EXDEV).
func (m protectedMount) hide() []string {
	if m.dir {
		return []string{"--tmpfs", m.real, "--remount-ro", m.real}
	}
	return []string{"--ro-bind", "/dev/null", m.real}
}

// protectedMounts resolves each protection that exists. A missing one is covered when it
// asks to be (Protection.Cover) and a writable mount holds it (coverMount); otherwise it is
// skipped, because binding would create it on the host (docs/sandbox.md, "Deviations and
// limits"). The same real path listed twice is mounted once, hidden when any listing hides it.
// A protection that is itself a symbolic link (a .git that links elsewhere) is bound where
// it leads, and its directory is frozen (frozenDirs), so the link stays in place.
func protectedMounts(protected []sandbox.Protection, ws string, writable []string) ([]protectedMount, []string, error) {
	var out []protectedMount
	var links []string
	index := map[string]int{}
	for _, p := range protected {
		abs := filepath.FromSlash(p.Path)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws, abs)
		}
		if sandbox.ProcOnly(abs) {
			continue // the sandbox's own procfs (--proc) and /dev show only its pid namespace
		}
		if fi, err := os.Lstat(abs); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if dir, err := realDir(filepath.Dir(abs)); err == nil {
				links = append(links, dir)
			}
		}
		real, err := filepath.EvalSymlinks(abs)
		if errors.Is(err, os.ErrNotExist) {
			if m, ok := coverMount(abs, p.Cover, writable); ok {
				if i, dup := index[m.real]; dup {
					out[i].hidden = out[i].hidden || p.Hidden
				} else {
					m.hidden = p.Hidden
					index[m.real] = len(out)
					out = append(out, m)
				}
			}
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: protected path %s: %w", p.Path, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: protected path %s: %w", p.Path, err)
		}
		if i, ok := index[real]; ok {
			out[i].hidden = out[i].hidden || p.Hidden
			continue
		}
		index[real] = len(out)
		out = append(out, protectedMount{real: real, hidden: p.Hidden, dir: fi.IsDir()})
	}
	out = withoutHiddenBelow(out)
	return out, frozenDirs(links, out, writable), nil
}

// frozenDirs are the directories holding a protected link that a command could otherwise
// replace: inside a writable mount, and not inside a protected directory (whose read-only
// bind already keeps the link).
func frozenDirs(links []string, mounts []protectedMount, writable []string) []string {
	var out []string
	for _, d := range links {
		inWritable, kept := false, false
		for _, w := range writable {
			inWritable = inWritable || within(w, d)
		}
		for _, m := range mounts {
			kept = kept || m.dir && m.cover == "" && within(m.real, d)
		}
		if inWritable && !kept && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// maxFrozenEntries bounds the entries of a frozen directory re-bound writable: past it the
// rest stay read-only (more protection, never less).
const maxFrozenEntries = 512

// freezeArgs keep a directory's entries in place: the directory re-bound read-only, so no
// entry of it can be created, removed, renamed or re-pointed, and each entry that is no
// link re-bound writable onto itself, so the files and directories in it still take writes
// (docs/sandbox.md, "A protected link"). A bind mount cannot be put on a link itself; this
// is how the link is kept.
func freezeArgs(dir string) []string {
	args := []string{"--ro-bind", dir, dir}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return args
	}
	for i, e := range entries {
		if i >= maxFrozenEntries {
			break
		}
		if e.Type()&os.ModeSymlink != 0 {
			continue // kept as it is: a link's bind would follow it
		}
		p := filepath.Join(dir, e.Name())
		args = append(args, "--bind-try", p, p)
	}
	return args
}

// makeCoverPoints makes each missing cover's mount point on the host before the command
// starts, as bwrap would: inside a frozen directory, bound read-only by then, bwrap could
// not. Made without following a link; one that appeared meanwhile is left as it is (the
// cover mount then fails the command, closed).
func makeCoverPoints(mounts []protectedMount) {
	for _, m := range mounts {
		if m.cover == "" {
			continue
		}
		if _, err := os.Lstat(m.real); err == nil {
			continue
		}
		if m.dir {
			os.Mkdir(m.real, 0o755)
			continue
		}
		if f, err := os.OpenFile(m.real, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o644); err == nil {
			f.Close()
		}
	}
}

// coverMount is the cover of the missing path abs: its first missing component (the path
// itself, or the directory that would hold it) below its deepest existing ancestor, resolved,
// when that ancestor lies in a writable mount. A command can then create neither the path
// nor a directory holding it.
func coverMount(abs, cover string, writable []string) (protectedMount, bool) {
	if cover == "" {
		return protectedMount{}, false
	}
	first := abs
	for {
		up := filepath.Dir(first)
		if up == first {
			return protectedMount{}, false
		}
		if _, err := os.Lstat(up); err == nil {
			break
		}
		first, cover = up, sandbox.CoverDir
	}
	if _, err := os.Lstat(first); err == nil {
		return protectedMount{}, false // a dangling link: bwrap would create its target
	}
	parent, err := realDir(filepath.Dir(first))
	if err != nil {
		return protectedMount{}, false
	}
	real := filepath.Join(parent, filepath.Base(first))
	for _, w := range writable {
		if within(w, parent) {
			return protectedMount{real: real, cover: cover, dir: cover == sandbox.CoverDir}, true
		}
	}
	return protectedMount{}, false
}

// withoutHiddenBelow drops the mounts inside a hidden directory: the directory's empty
// read-only tmpfs already covers them, and bwrap could not create their mount points in it
// (the database inside the data directory).
func withoutHiddenBelow(ms []protectedMount) []protectedMount {
	var out []protectedMount
	for _, m := range ms {
		covered := false
		for _, h := range ms {
			if h.hidden && h.dir && h.real != m.real && within(h.real, m.real) {
				covered = true
			}
		}
		if !covered {
			out = append(out, m)
		}
	}
	return out
}

// SeccompError is a network-deny filter that cannot be built (an architecture without one).
type SeccompError struct{ Err error }

func (e *SeccompError) Error() string { return "sandbox: network deny: " + e.Err.Error() }
func (e *SeccompError) Unwrap() error { return e.Err }

// runtimeDirs are the directories where host daemons keep their sockets, hidden under
// network deny: /run, /var/run when it is not /run itself, and xdgRuntime (the user's
// $XDG_RUNTIME_DIR: D-Bus session bus, rootless Docker, gpg-agent) when it is an absolute
// existing directory that neither holds the workspace's contents (it is not the workspace
// and not inside it) nor is already hidden (/run, /tmp). A workspace or writable root below
// one of them is bound after the tmpfs and stays visible.
func runtimeDirs(ws, xdgRuntime string) []string {
	var out []string
	hidden := func(p string) bool {
		for _, h := range append([]string{"/tmp"}, out...) {
			if within(h, p) {
				return true
			}
		}
		return false
	}
	for _, d := range []string{"/run", "/var/run", xdgRuntime} {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		real, err := realDir(d)
		if err != nil || real == "/" || hidden(real) || within(ws, real) {
			continue
		}
		out = append(out, real)
	}
	return out
}

// pinArgs makes each ancestor of a protected path that lies strictly inside a writable
// mount a mount point of its own (bound onto itself, still writable), shallowest first. The
// kernel refuses to rename or remove a mount point (EBUSY), so a command can no longer move
// a protected path's parent aside (mv .git .git.old) and recreate the path, unprotected, in
// a fresh directory. The ancestors stay writable: .git/hooks protects the hooks, and the
// rest of .git still takes commits. A consequence: a rename between a pinned directory and
// its parent crosses a mount and fails with EXDEV (mv falls back to copying).
func pinArgs(protected, writable []string) []string {
	return structureArgs(protected, writable, nil)
}

// structureArgs are the pins of pinArgs and the freezes of frozen (freezeArgs), shallowest
// first, so a mount never covers one made after it below: a frozen directory is not pinned
// (its freeze holds it in place), and the pins and freezes below it come after it.
func structureArgs(protected, writable, frozen []string) []string {
	seen := map[string]bool{}
	for _, f := range frozen {
		seen[f] = true
	}
	pins := slices.Clone(frozen)
	for _, p := range protected {
		for a := filepath.Dir(p); a != "/" && a != "."; a = filepath.Dir(a) {
			inside := false
			for _, w := range writable {
				if a != w && within(w, a) {
					inside = true
				}
			}
			if inside && !seen[a] {
				seen[a] = true
				pins = append(pins, a)
			}
		}
	}
	sort.Slice(pins, func(i, j int) bool {
		di, dj := strings.Count(pins[i], "/"), strings.Count(pins[j], "/")
		if di != dj {
			return di < dj
		}
		return pins[i] < pins[j]
	})
	var args []string
	for _, a := range pins {
		if slices.Contains(frozen, a) {
			args = append(args, freezeArgs(a)...)
			continue
		}
		args = append(args, "--bind", a, a)
	}
	return args
}

// within reports whether p is root or below it (both clean absolute paths).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// NewSession asks the runner to start the command in a session of its own, with no
// controlling terminal (see namespaceArgs).
func (b *Bubblewrap) NewSession() bool { return true }

// Wrap returns bwrap's argv running argv in dir (the workspace when empty). Under network
// deny the command needs the filter as an open file: Wrap refuses it (use WrapFiles).
func (b *Bubblewrap) Wrap(argv []string, dir string) ([]string, error) {
	if b.filter != nil {
		return nil, errors.New("sandbox: network deny needs its system-call filter passed as an open file; this caller cannot (WrapFiles)")
	}
	return b.wrap(argv, dir, nil)
}

// WrapFiles returns bwrap's argv running argv in dir and the files it reads at fd 3, ...:
// under network deny a fresh pipe holding the system-call filter (--seccomp 3).
func (b *Bubblewrap) WrapFiles(argv []string, dir string) ([]string, []*os.File, error) {
	if b.filter == nil {
		out, err := b.wrap(argv, dir, nil)
		return out, nil, err
	}
	if len(argv) == 0 {
		return nil, nil, errors.New("sandbox: empty command")
	}
	f, err := filterFile(b.filter)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: system-call filter: %w", err)
	}
	out, err := b.wrap(argv, dir, []string{"--seccomp", "3"})
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return out, []*os.File{f}, nil
}

// WrapStatus is WrapFiles with the command run under a status reporter inside the sandbox
// (adapters/tools/shell.StatusLauncher; docs/sandbox.md, "How a confined command ended").
// With --unshare-pid, bwrap's init waits for the command and exits 128+N when signal N
// killed it, and --json-status-fd reports that same number, so bwrap's status cannot tell a
// `kill -9 $$` from an `exit 137`. The reporter is the guard's program (guard.Program: the
// dedicated zuno-guard, or this binary), executed through a descriptor, because its path may
// be hidden inside (a test binary under /tmp); it waits for the command and writes the real wait status on a
// pipe whose read end is returned. The files are WrapFiles' (the filter, under network
// deny), then the binary, then the pipe's write end.
func (b *Bubblewrap) WrapStatus(argv []string, dir string) ([]string, []*os.File, *os.File, error) {
	if len(argv) == 0 {
		return nil, nil, nil, errors.New("sandbox: empty command")
	}
	var files []*os.File
	var extra []string
	if b.filter != nil {
		f, err := filterFile(b.filter)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("sandbox: system-call filter: %w", err)
		}
		files, extra = append(files, f), []string{"--seccomp", "3"}
	}
	exe, err := os.Open(guard.Program())
	if err != nil {
		closeFiles(files)
		return nil, nil, nil, fmt.Errorf("sandbox: the status reporter's binary: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		closeFiles(append(files, exe))
		return nil, nil, nil, fmt.Errorf("sandbox: the status reporter's pipe: %w", err)
	}
	exeFD, statusFD := 3+len(files), 4+len(files)
	files = append(files, exe, w)
	inner := append([]string{"/proc/self/fd/" + strconv.Itoa(exeFD), guard.StatusName, strconv.Itoa(statusFD), "--"}, argv...)
	out, err := b.wrap(inner, dir, extra)
	if err != nil {
		closeFiles(append(files, r))
		return nil, nil, nil, err
	}
	return out, files, r, nil
}

func (b *Bubblewrap) wrap(argv []string, dir string, extra []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if dir == "" {
		dir = b.workspace
	}
	protected, err := b.protectedArgs(true)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(b.prefix)+len(protected)+len(extra)+len(argv)+5)
	out = append(out, b.path)
	out = append(out, b.prefix...)
	out = append(out, protected...)
	out = append(out, extra...)
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
