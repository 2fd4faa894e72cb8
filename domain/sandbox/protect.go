package sandbox

import (
	"fmt"
	"path"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// Stable error codes of the protected paths (docs/sandbox.md, "Protected by default").
const (
	// CodeProtectedPath: a tool call would change a protected path, or read a hidden one.
	CodeProtectedPath = "protected_path"
	// CodeLogInWorkspace: Zuno's event database or data directory lies inside the turn's
	// workspace (or the workspace inside it), where the agent could rewrite its own log.
	CodeLogInWorkspace = "log_in_workspace"
	// CodeReadOnlyMode: a tool that writes was called while the user asked for the
	// read-only sandbox mode.
	CodeReadOnlyMode = "sandbox_read_only"
)

// Sources of a protection.
const (
	SourceDefault = "default" // built in: git's and Zuno's files in every workspace
	SourceData    = "data"    // Zuno's own files outside the workspace, as the host resolved them
	SourceConfig  = "config"  // sandbox.protectedPaths
	SourceGit     = "git"     // where the repository's .git and configuration point git, as the host found it
)

// What the shell's sandbox puts at a protected path that is missing inside a writable mount
// (Protection.Cover), so a command cannot create it there (docs/sandbox.md, "Protected by
// default"). The mount point stays on the host, empty: git takes an empty .git directory for
// no repository, an empty hooks directory for no hooks, an empty file for no configuration.
const (
	CoverDir  = "dir"
	CoverFile = "file"
)

// Protection is one path the agent may not change through any door (the shell's sandbox and
// the file tools consume the same list): when Hidden, it may not read, list or stat it either.
type Protection struct {
	// Path is absolute, or relative to the workspace (slash-separated, clean).
	Path string `json:"path"`
	// Hidden: Zuno's secrets and log, invisible to the agent, not just read-only.
	Hidden bool   `json:"hidden"`
	Source string `json:"source"`
	// Cover, when the path is missing, is what the shell's sandbox mounts there (CoverDir,
	// CoverFile; "" for nothing): a path git would read once it exists.
	Cover string `json:"cover,omitempty"`
	// Why says what an agent's change (or read) would do, for the refusal and debug sandbox.
	Why string `json:"why"`
}

// Locations are Zuno's own files as the host resolved them: absolute and clean ("" for what
// does not apply).
type Locations struct {
	// DataDir holds the auth file, the default database, and every session's artifacts and
	// background output.
	DataDir string `json:"dataDir,omitempty"`
	// DB is the embedded SQLite file (events or read models); its -wal, -shm and -journal
	// files are protected with it.
	DB string `json:"db,omitempty"`
	// Config are the trusted configuration's places: the global directory, a --config or
	// ZUNO_CONFIG file, the managed policy directory. A missing one is covered by an empty
	// directory where a command could create it (docs/sandbox.md, "A trusted layer that does
	// not exist yet").
	Config []string `json:"config,omitempty"`
	// ConfigFiles are the trusted configuration's files (a --config or ZUNO_CONFIG file): as
	// Config, but a missing one is covered by an empty file.
	ConfigFiles []string `json:"configFiles,omitempty"`
	// Repository is the root of the git repository the workspace lies in, when that is above
	// the workspace: git there reads the enclosing .git, and the project configuration
	// lives beside it.
	Repository string `json:"repository,omitempty"`
	// Anchor is the anchor file zuno verify compares and records (--anchor): only
	// OutsideWorkspace reads it, since Zuno learns it per verify.
	Anchor string `json:"anchor,omitempty"`
	// Git are the places besides the work tree's .git that git on the host runs or reads
	// configuration from, as the host found them (adapters/sandbox.GitPaths): the git
	// directory a .git file points to, the files and directories the configuration names
	// (core.hooksPath, include.path, core.attributesFile, commands), submodules' .git.
	Git []GitPath `json:"git,omitempty"`
}

// GitPath is one place git reads or runs, absolute, clean and resolved.
type GitPath struct {
	Path  string `json:"path"`
	Cover string `json:"cover,omitempty"`
	Why   string `json:"why"`
}

// Why each default is protected (docs/sandbox.md, "Protected by default").
const (
	whyGit = "git runs hooks and reads its configuration (core.hooksPath, core.fsmonitor, filters, aliases) from .git " +
		"when the user next runs git on the host, outside any sandbox; a .git file (a worktree or submodule pointer) " +
		"would point git at a directory of the agent's choosing; where the workspace has none, an empty read-only .git stands " +
		"in its place, so a command cannot make one"
	whyZuno = "Zuno's project configuration: a change here loosens the gates of the next session; reports are " +
		"published under .zuno/reports only by report_write"
	whyProject = "the project configuration layer: the next session reads it"
	whyData    = "Zuno's data directory: the auth file (provider keys), the default event database, and every " +
		"session's artifacts and background output"
	whyDB     = "Zuno's event database (the audit log and read models): reading it shows other sessions, changing it rewrites the log"
	whyConfig = "Zuno's trusted configuration: it may hold provider keys and endpoint passwords (options.apiKey, a " +
		"store URL's password), and a change here loosens every gate of every later session"
	whyProc = "the processes' own view of themselves: /proc/self/environ and /proc/<pid>/environ of the runtime hold its " +
		"keys (ZUNO_*), /proc/<pid>/fd its open database; the shell sees only its own sandbox's processes there"
)

// ProcRoot is where the kernel shows every process of the host, the runtime's included: the
// file tools may not read under it (the runtime's environment holds its keys). The shell's
// sandbox needs no mount for it: bubblewrap gives it a procfs of its own pid namespace, in
// which the runtime does not appear (docs/sandbox.md, "Protected by default").
const ProcRoot = "/proc"

// fdLinks name the runtime's own open files through /dev (links into /proc/self/fd): the file
// tools check the path as spelled as well as where it leads, so these are hidden by name.
var fdLinks = []string{"/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr"}

// ProcOnly reports whether p is /proc or one of the /dev links into it: the file tools' door
// only, since the shell's sandbox has a procfs and a /dev of its own.
func ProcOnly(p string) bool {
	for _, root := range append([]string{ProcRoot}, fdLinks...) {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

// dbSuffixes are the files SQLite keeps beside a database.
var dbSuffixes = []string{"", "-wal", "-shm", "-journal"}

// Protections is the one list both doors enforce: git's and Zuno's files in the workspace,
// Zuno's own files where the host put them (hidden when they hold secrets or the log), and the
// configured sandbox.protectedPaths.
func Protections(cfg Config, own Locations) []Protection {
	out := []Protection{
		{Path: ".git", Source: SourceDefault, Cover: CoverDir, Why: whyGit},
		{Path: ".zuno", Source: SourceDefault, Why: whyZuno},
		{Path: "zuno.json", Source: SourceDefault, Why: whyProject},
		{Path: "zuno.jsonc", Source: SourceDefault, Why: whyProject},
	}
	if own.Repository != "" {
		for _, d := range out[:4] {
			out = append(out, Protection{Path: path.Join(own.Repository, d.Path), Source: SourceDefault, Why: d.Why + " (the repository the workspace lies in)"})
		}
	}
	for _, g := range own.Git {
		if g.Path != "" {
			out = append(out, Protection{Path: path.Clean(g.Path), Source: SourceGit, Cover: g.Cover, Why: g.Why})
		}
	}
	if own.DataDir != "" {
		out = append(out, Protection{Path: path.Clean(own.DataDir), Hidden: true, Source: SourceData, Why: whyData})
	}
	if own.DB != "" {
		for _, s := range dbSuffixes {
			out = append(out, Protection{Path: path.Clean(own.DB) + s, Hidden: true, Source: SourceData, Why: whyDB})
		}
	}
	for _, c := range own.Config {
		if c != "" {
			out = append(out, Protection{Path: path.Clean(c), Hidden: true, Source: SourceData, Cover: CoverDir, Why: whyConfig})
		}
	}
	for _, c := range own.ConfigFiles {
		if c != "" {
			out = append(out, Protection{Path: path.Clean(c), Hidden: true, Source: SourceData, Cover: CoverFile, Why: whyConfig})
		}
	}
	out = append(out, Protection{Path: ProcRoot, Hidden: true, Source: SourceDefault, Why: whyProc})
	for _, l := range fdLinks {
		out = append(out, Protection{Path: l, Hidden: true, Source: SourceDefault, Why: whyProc})
	}
	layer := "a trusted layer"
	if l, ok := cfg.SetBy(KeyProtectedPaths); ok {
		layer = "the " + string(l) + " layer"
	}
	for _, p := range cfg.ProtectedPaths {
		out = append(out, Protection{Path: path.Clean(p), Source: SourceConfig, Why: "listed in sandbox.protectedPaths (" + layer + ")"})
	}
	return out
}

// Abs is p's absolute path for the workspace ws (absolute, clean).
func (p Protection) Abs(ws string) string {
	if path.IsAbs(p.Path) {
		return p.Path
	}
	return path.Join(ws, p.Path)
}

// Guard finds the protection abs falls under: for a write any, for a read only a hidden one.
// ws is the workspace and abs the path a call reaches, both absolute, clean and spelled as
// the caller resolved them (links followed). Names are compared without regard to case, so
// .GIT on a case-insensitive file system is .git (over-protecting on a case-sensitive one is
// harmless).
func Guard(list []Protection, ws, abs string, write bool) (Protection, bool) {
	for _, p := range list {
		if (write || p.Hidden) && within(p.Abs(ws), abs) {
			return p, true
		}
	}
	return Protection{}, false
}

// Refusal is the typed error of a call refused by p; shown is the path as the call gave it.
func (p Protection) Refusal(shown string, write bool) *domain.Error {
	what, fix := "changed", "leave it alone; the user changes it on the host"
	if !write {
		what, fix = "read", "the agent cannot see it; ask the user for what you need from it"
	}
	under := ""
	if p.Path != shown {
		under = fmt.Sprintf(" (it lies under %s)", p.Path)
	}
	e := domain.NewError(CodeProtectedPath, fmt.Sprintf("%s is protected and cannot be %s by the agent%s: %s", shown, what, under, p.Why), fix)
	e.Field, e.ID = "path", shown
	return e
}

// OutsideWorkspace refuses a workspace that holds Zuno's log or data directory, or lies
// inside them: the agent would work where the audit log is (docs/sandbox.md, "The log
// outside the agent's reach"). ws is absolute, clean and resolved as own is.
func (own Locations) OutsideWorkspace(ws string) error {
	refuse := func(what, p, fix string) error {
		e := domain.NewError(CodeLogInWorkspace, fmt.Sprintf("%s %s and the workspace %s overlap: commands the agent runs there "+
			"could read, rewrite or delete Zuno's log and keys", what, p, ws), fix)
		e.ID = p
		return e
	}
	if own.DB != "" && (within(ws, own.DB) || within(own.DB, ws)) {
		return refuse("the event database", own.DB, fmt.Sprintf("put the database outside %s: leave ZUNO_DB unset (the default is "+
			"zuno.db in Zuno's data directory) or set ZUNO_DB or db in a trusted layer to a path outside it, or work in another directory", ws))
	}
	if own.Anchor != "" && within(ws, own.Anchor) {
		return refuse("the anchor", own.Anchor, fmt.Sprintf("keep anchors outside every workspace: in Zuno's data directory, "+
			"or where only the user writes; %s is where a session's agent works", ws))
	}
	if own.DataDir != "" && (within(ws, own.DataDir) || within(own.DataDir, ws)) {
		return refuse("Zuno's data directory", own.DataDir, fmt.Sprintf("set XDG_DATA_HOME to a directory outside %s, "+
			"or work in a directory outside %s", ws, own.DataDir))
	}
	return nil
}

// within reports whether p is root or below it (absolute clean slash paths), ignoring case.
func within(root, p string) bool {
	root, p = strings.ToLower(root), strings.ToLower(p)
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// UnenforcedNotice says, for a resolution the OS does not confine, which protections hold
// for the file tools only: the shell runs with the Zuno user's authority and can reach them
// all. Empty when confined. The host shows it once at the start of a turn.
func UnenforcedNotice(res Resolution, list []Protection) string {
	if res.ResolutionKind == KindConfined || len(list) == 0 {
		return ""
	}
	var changed, hidden []string
	for _, p := range list {
		if p.Hidden {
			hidden = append(hidden, p.Path)
		} else {
			changed = append(changed, p.Path)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the shell runs natively (%s), so the OS does not enforce the protected paths for it: ", res.ResolutionKind)
	fmt.Fprintf(&b, "shell commands can change %s", strings.Join(changed, ", "))
	if len(hidden) > 0 {
		fmt.Fprintf(&b, ", and read or change %s (Zuno's keys and log)", strings.Join(hidden, ", "))
	}
	b.WriteString("; the file tools (read, write, apply_patch) still refuse them, and the permission rules and the shell risk gate remain")
	return b.String()
}
