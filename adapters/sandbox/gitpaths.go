package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// Bounds of the host's look at git (GitPaths): a repository too large for them keeps the
// protections found within them (docs/sandbox.md, "Protected by default").
const (
	gitTimeout      = 10 * time.Second
	gitWalkDirs     = 20000 // directories read looking for nested .git
	gitNestedRepos  = 64    // submodules and nested repositories scanned
	gitIncludeDepth = 8     // include.path followed this deep
)

// GitPaths is ScanGit's places alone.
func GitPaths(ws, repository string) []sandbox.GitPath {
	return ScanGit(ws, repository).Paths
}

// GitScan is what the host found git would run or read besides a work tree's own .git, and
// what it could not look at.
type GitScan struct {
	Paths []sandbox.GitPath
	// Notes say what was protected conservatively (a command line that does not parse):
	// debug sandbox shows them.
	Notes []string
	// Warnings say what was not looked at (a bound reached): said at the start of a turn
	// too, never silently.
	Warnings []string
}

// ScanGit finds on the host every place besides a work tree's own .git that git, run by
// the user in ws or in the repository enclosing it (repository, "" for none), executes or
// reads configuration from (docs/sandbox.md, "Protected by default"):
//   - the git directory a .git file or link points to (gitdir:, relative to the file's
//     directory) and its commondir, and what links inside them point to;
//   - every configuration file git reads (each origin git config --show-origin names), each
//     include.path and includeIf.*.path (relative to the including file's directory, followed
//     even when the condition does not hold now), core.hooksPath (relative to the work tree),
//     core.attributesFile, and every path named by a command the configuration gives git to
//     run (gitcommands.go);
//   - what the hooks name, and the configuration of the hook managers they run (husky,
//     pre-commit, lefthook: githooks.go);
//   - each submodule's and nested repository's .git (gitlinks of the index, and .git entries
//     found by a bounded walk), scanned the same way: git status at the top runs git in them.
//
// The configuration is read by the real git (git config --list --show-origin --includes),
// not a parser of ours: git alone knows its quoting, its includes and its conditions, and
// reading configuration runs nothing (no hook, no fsmonitor). Nothing here fails: what cannot
// be read is not listed, and the .git defaults still stand; what a bound cut short is said.
func ScanGit(ws, repository string) GitScan {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	g := &gitScan{ctx: ctx, ws: resolved(ws), seen: map[string]bool{}, scanned: map[string]bool{}}
	for _, root := range []string{repository, ws} {
		if root != "" {
			g.repo(root, "")
		}
	}
	g.userConfig()
	g.nested(ws)
	if ctx.Err() != nil {
		g.warn(fmt.Sprintf("the look at git's places stopped after %s: places found later are not protected", gitTimeout))
	}
	return GitScan{Paths: g.out, Notes: g.notes, Warnings: g.warnings}
}

type gitScan struct {
	ctx      context.Context
	ws       string // the workspace, resolved
	out      []sandbox.GitPath
	seen     map[string]bool // paths listed
	scanned  map[string]bool // configuration files, hooks and work trees read
	repos    int
	notes    []string
	warnings []string
}

// add lists p where it leads (links followed), and, when p itself is a symbolic link, the
// link too: replaced, it would point git elsewhere (the sandbox keeps it in place,
// docs/sandbox.md, "A protected link").
func (g *gitScan) add(p, cover, why string) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return
	}
	if up := resolved(filepath.Dir(abs)); up != "" {
		link := filepath.Join(up, filepath.Base(abs))
		if fi, err := os.Lstat(link); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			g.list(link, "", why+" (a symbolic link: kept in place, and what it points to protected)")
		}
	}
	g.list(resolved(abs), cover, why)
}

func (g *gitScan) list(p, cover, why string) {
	if p == "" || g.seen[p] {
		return
	}
	g.seen[p] = true
	g.out = append(g.out, sandbox.GitPath{Path: filepath.ToSlash(p), Cover: cover, Why: why})
	if n := hardLinks(p); n > 1 {
		// A read-only mount protects a name, not the file: another name of it in the
		// workspace stays writable (review 25c). Said, since it cannot be mounted over.
		g.warn(fmt.Sprintf("%s has %d hard links: its other names are writable and change it; remove them (git runs it)", p, n))
	}
}

// hardLinks is how many names a regular file has; 0 for anything else.
func hardLinks(p string) uint64 {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

func (g *gitScan) note(s string) {
	if !slices.Contains(g.notes, s) {
		g.notes = append(g.notes, s)
	}
}

func (g *gitScan) warn(s string) {
	if !slices.Contains(g.warnings, s) {
		g.warnings = append(g.warnings, s)
	}
}

// repo scans the work tree root: its .git (listed unless it is the workspace's own, which
// the defaults protect), the git directory it points to, the configuration, and gitlinks.
func (g *gitScan) repo(root, dotgitWhy string) {
	root = resolved(root)
	if root == "" || g.scanned[root] {
		return
	}
	if g.repos >= gitNestedRepos {
		if dotgitWhy != "" {
			g.add(filepath.Join(root, ".git"), sandbox.CoverDir, dotgitWhy)
		}
		g.warn(fmt.Sprintf("more than %d repositories (submodules and nested ones) in the workspace: the rest are not "+
			"scanned, so what their configuration names is not protected (their .git is, read-only)", gitNestedRepos))
		return
	}
	g.scanned[root], g.repos = true, g.repos+1
	dotgit := filepath.Join(root, ".git")
	if dotgitWhy != "" {
		g.add(dotgit, sandbox.CoverDir, dotgitWhy)
	}
	if fi, err := os.Lstat(dotgit); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		g.add(dotgit, "", "the .git of "+root+" is a symbolic link: git runs the hooks and reads the configuration of the "+
			"directory it points to when the user runs git there")
	}
	gitdir := dotgit
	if fi, err := os.Lstat(dotgit); err == nil && fi.Mode().IsRegular() {
		gitdir = gitFileTarget(dotgit)
		if gitdir == "" {
			return
		}
		g.add(gitdir, "", "the git directory "+dotgit+" points to (gitdir:): git runs its hooks and reads its configuration "+
			"when the user runs git in "+root)
	}
	common := gitdir
	if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = relativeTo(gitdir, strings.TrimSpace(string(b)))
		g.add(common, "", "the common git directory of "+gitdir+" (commondir): its hooks and configuration are the repository's")
	}
	g.config(root, []string{"-C", root, "config", "--list"}, 0)
	for _, f := range []string{filepath.Join(common, "config"), filepath.Join(gitdir, "config.worktree")} {
		g.configFile(root, f, 0)
	}
	g.linksIn(gitdir)
	g.linksIn(common)
	g.hooks(root, filepath.Join(common, "hooks"))
	g.gitlinks(root, gitdir)
}

// userConfig protects the user's configuration files git reads when they exist
// (~/.gitconfig, $XDG_CONFIG_HOME/git/config, the default core.attributesFile) where they
// are missing inside the workspace (a workspace that holds the home directory): a command
// would make one, and every git of the user would read it. The existing ones are listed as
// git's origins already.
func (g *gitScan) userConfig() {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string
	if global := os.Getenv("GIT_CONFIG_GLOBAL"); global != "" {
		files = append(files, global)
	} else if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(xdg, "git", "attributes"),
			filepath.Join(xdg, "husky", "init.sh"))
	}
	for _, f := range files {
		if _, err := os.Lstat(f); err != nil && filepath.IsAbs(f) && within(g.ws, resolved(f)) {
			g.add(f, sandbox.CoverFile, "git (and husky's hooks, init.sh) read it for every repository of the user once it exists")
		}
	}
}

// configFile reads one configuration file with its includes (followed or not).
func (g *gitScan) configFile(root, file string, depth int) {
	if depth > gitIncludeDepth || g.scanned[file] {
		return
	}
	g.scanned[file] = true
	if _, err := os.Stat(file); err != nil {
		return
	}
	g.config(root, []string{"config", "--file", file, "--list"}, depth)
}

// config lists the configuration git reads with args (--show-origin --includes -z added)
// and protects what it names. The environment keeps the user's global and system files, so
// what they include is listed too.
func (g *gitScan) config(root string, args []string, depth int) {
	out, err := g.gitErr(append(args, "--show-origin", "--includes", "-z")...)
	if err != nil && g.ctx.Err() == nil {
		// git on the host fails the same way, so it runs nothing from this configuration now;
		// but what it names is not protected if it is made readable later.
		g.note(fmt.Sprintf("git could not read the configuration (git %s in %s: %v): what it names is not protected",
			strings.Join(args, " "), root, err))
	}
	for _, e := range parseConfigList(out, root) {
		g.add(e.origin, "", "git reads it as configuration (core.fsmonitor, aliases, filters and hooks run commands)")
		g.entry(root, e.origin, e.key, e.value, depth)
	}
}

// configEntry is one entry of git config --list --show-origin -z: the file it came from
// (absolute), its key (lower case) and value.
type configEntry struct{ origin, key, value string }

// parseConfigList reads git config --list --show-origin -z output, whose entries are
// "file:<origin>\0<key>\n<value>\0" (a key without a value has no newline); origins other
// than files (the command line, standard input, blobs) are skipped, relative ones joined to
// root. The input is a repository's configuration: the agent may have shaped it.
func parseConfigList(out []byte, root string) []configEntry {
	var entries []configEntry
	parts := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(parts); i += 2 {
		origin, ok := strings.CutPrefix(string(parts[i]), "file:")
		if !ok || origin == "" {
			continue
		}
		if !filepath.IsAbs(origin) {
			origin = filepath.Join(root, origin)
		}
		key, value, _ := strings.Cut(string(parts[i+1]), "\n")
		entries = append(entries, configEntry{origin: filepath.Clean(origin), key: normKey(key), value: value})
	}
	return entries
}

// entry protects what one configuration entry points git at.
func (g *gitScan) entry(root, origin, key, value string, depth int) {
	if value == "" {
		return
	}
	in := " (" + key + " in " + origin + ")"
	switch {
	case key == "include.path" || (strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path")):
		p := relativeTo(filepath.Dir(origin), expandHome(value))
		g.add(p, sandbox.CoverFile, "git reads it as configuration"+in)
		g.configFile(root, p, depth+1)
	case key == "core.hookspath":
		dir := relativeTo(root, expandHome(value))
		g.add(dir, sandbox.CoverDir, "git runs the hooks there"+in)
		g.hooks(root, dir)
	case key == "core.attributesfile":
		g.add(relativeTo(root, expandHome(value)), sandbox.CoverFile, "git reads it to choose filters and diff drivers, which run commands"+in)
	case key == "init.templatedir":
		g.add(relativeTo(root, expandHome(value)), sandbox.CoverDir, "git init and git clone copy its hooks into every new repository"+in)
	case strings.HasPrefix(key, "url.") && (strings.HasSuffix(key, ".insteadof") || strings.HasSuffix(key, ".pushinsteadof")):
		// url.<base>.insteadOf rewrites a URL to <base>: an ext:: base is a command line
		// git runs, spelled in the key itself.
		base := strings.TrimPrefix(key[:strings.LastIndex(key, ".")], "url.")
		if cmd, ok := strings.CutPrefix(base, "ext::"); ok {
			g.named(namesOf(cmd), []string{root, g.ws}, "git runs it to reach the remote"+in)
		}
	case strings.HasPrefix(value, "ext::"):
		// A remote of the ext transport is a command line git runs (once protocol.ext.allow
		// lets it; the user's setting).
		g.named(namesOf(strings.TrimPrefix(value, "ext::")), []string{root, g.ws}, "git runs it to reach the remote"+in)
	case strings.HasPrefix(key, "alias.") && !strings.HasPrefix(strings.TrimSpace(value), "!"):
		g.named(gitArgsNames(value), []string{root, g.ws}, "git runs what the alias names"+in)
	case runsCommand(key):
		g.named(namesOf(value), []string{root, g.ws}, "git runs a command that names it"+in)
	}
}

// runsCommand reports whether git runs a configuration key's value as a command (through
// a shell for most: git config's documentation, each key's entry).
func runsCommand(key string) bool {
	switch key {
	case "core.fsmonitor", "core.sshcommand", "core.editor", "core.pager", "core.askpass", "core.gitproxy",
		"core.alternaterefscommand", "sequence.editor", "gpg.program", "credential.helper", "diff.external",
		"interactive.difffilter", "web.browser", "sendemail.smtpserver", "imap.tunnel", "uploadpack.packobjectshook":
		return true
	}
	for _, suffix := range []string{".clean", ".smudge", ".process", ".textconv", ".command", ".driver", ".program", ".helper",
		".cmd", ".sendmailcmd", ".tocmd", ".cccmd", ".uploadpack", ".receivepack", ".defaultkeycommand", ".update"} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return strings.HasPrefix(key, "alias.") || strings.HasPrefix(key, "pager.") ||
		(strings.HasSuffix(key, ".path") && (strings.HasPrefix(key, "mergetool.") || strings.HasPrefix(key, "difftool.") ||
			strings.HasPrefix(key, "browser.") || strings.HasPrefix(key, "man.")))
}

// named protects each path a command line names, relative to bases (the first is where the
// command runs): an existing file, an existing directory named as one, and what the command
// runs even before it exists (covered there). What could not be read is said (debug sandbox).
func (g *gitScan) named(names commandNames, bases []string, why string) {
	for _, n := range names.paths {
		g.namedPath(n, bases, why)
	}
	for _, u := range names.unread {
		g.note(why + ": " + u + "; every existing file its words name is protected instead")
	}
}

func (g *gitScan) namedPath(n namedPath, bases []string, why string) {
	if n.glob {
		for _, b := range bases {
			matches, _ := filepath.Glob(filepath.Join(b, n.path))
			for _, m := range matches {
				g.namedPath(namedPath{path: m, dirOK: true}, bases, why)
			}
		}
		return
	}
	p := expandHome(n.path)
	candidates := []string{filepath.Clean(p)}
	if n.tail || !filepath.IsAbs(p) {
		candidates = candidates[:0]
		for _, b := range bases {
			candidates = append(candidates, filepath.Join(b, p))
		}
	}
	found := false
	for _, c := range candidates {
		fi, err := os.Stat(c)
		if err != nil || g.holdsWorkTree(c, bases) || !n.must && !within(bases[0], c) && !within(g.ws, c) {
			continue
		}
		if fi.Mode().IsRegular() || fi.IsDir() && (n.dirOK || n.dir || n.must || strings.Contains(n.path, "/")) {
			g.add(c, "", why)
			found = true
		}
	}
	if !found && n.must && (!n.tail || strings.HasPrefix(n.path, "/")) && !g.holdsWorkTree(candidates[0], bases) {
		cover := sandbox.CoverFile
		if n.dir {
			cover = sandbox.CoverDir
		}
		g.add(candidates[0], cover, why)
	}
}

// holdsWorkTree: p is the work tree or the workspace, or above one: protecting it would
// make the whole work tree read-only (a command that names "." or its own directory).
func (g *gitScan) holdsWorkTree(p string, bases []string) bool {
	p = resolved(p)
	for _, b := range []string{g.ws, resolved(bases[0])} {
		if b != "" && within(p, b) {
			return true
		}
	}
	return false
}

// gitlinks protects each submodule's .git named by the index (mode 160000), populated or
// not, and scans the populated ones.
func (g *gitScan) gitlinks(root, gitdir string) {
	out := g.git("--git-dir="+gitdir, "--work-tree="+root, "ls-files", "-s", "-z")
	for _, e := range bytes.Split(out, []byte{0}) {
		meta, p, ok := strings.Cut(string(e), "\t")
		if !ok || !strings.HasPrefix(meta, "160000 ") {
			continue
		}
		sub := filepath.Join(root, filepath.FromSlash(p))
		why := "the .git of the submodule " + sub + ": git status in " + root + " runs git there, with its hooks and configuration"
		if _, err := os.Lstat(filepath.Join(sub, ".git")); err != nil {
			g.add(filepath.Join(sub, ".git"), sandbox.CoverDir, why)
			continue
		}
		g.repo(sub, why)
	}
}

// nested finds .git entries below ws by a bounded walk (not into a .git): nested
// repositories and submodules the index does not name. The walk is breadth-first and looks
// for a directory's .git when it meets the directory, so the repositories nearest the top
// are found before a large tree (node_modules) spends the bound; where the bound stops it,
// the warning says so.
func (g *gitScan) nested(ws string) {
	root := resolved(ws)
	queue := []string{root}
	for read := 0; len(queue) > 0 && g.ctx.Err() == nil; read++ {
		if read >= gitWalkDirs {
			g.warn(fmt.Sprintf("the workspace has more than %d directories: the look for nested repositories (a .git below "+
				"the workspace) stopped there, so a repository further on is not protected, and git run in it on the host would "+
				"run what the agent writes there (docs/sandbox.md, \"Where git is pointed\")", gitWalkDirs))
			return
		}
		dir := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Name() == ".git" || !e.IsDir() {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(sub, ".git")); err == nil {
				g.repo(sub, "the .git of the repository "+sub+" inside the workspace: git run there (git status at the top "+
					"for a submodule) runs its hooks and reads its configuration")
			}
			queue = append(queue, sub)
		}
	}
}

// git runs git on the host with no pager, no prompt and fsmonitor off (none of these reads
// run a command anyway); its output, nil on failure.
func (g *gitScan) git(args ...string) []byte {
	out, _ := g.gitErr(args...)
	return out
}

// gitErr is git's output and, on failure, an error holding the first line it wrote.
func (g *gitScan) gitErr(args ...string) ([]byte, error) {
	cmd := exec.CommandContext(g.ctx, "git", append([]string{"-c", "core.fsmonitor=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if line := firstLine(stderr.String()); line != "" {
			err = fmt.Errorf("%w: %s", err, line)
		}
		return nil, err
	}
	return out, nil
}

// gitFileTarget is the directory a .git file names (gitdir:, relative to the file's
// directory), "" when the file says none.
func gitFileTarget(dotgit string) string {
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	return parseGitFile(b, filepath.Dir(dotgit))
}

// parseGitFile is the directory a .git file's content names, relative to dir (absolute):
// its first line "gitdir: <path>"; "" when it names none. The content is the agent's to
// shape where the file is not yet protected.
func parseGitFile(content []byte, dir string) string {
	line, _, _ := strings.Cut(string(content), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok || strings.TrimSpace(target) == "" || strings.ContainsRune(target, 0) {
		return ""
	}
	return relativeTo(dir, strings.TrimSpace(target))
}

func relativeTo(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// expandHome expands a leading ~/ as git does for pathnames.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// resolved is p absolute with the links of its longest existing part followed: where the
// file is, or will be, as the file tools and bwrap see it.
func resolved(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	rest := ""
	for cur := abs; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		up := filepath.Dir(cur)
		if up == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = up
	}
}

// normKey lowers a configuration key's section and name, which git compares without case,
// and keeps its subsection, which git compares with it (url.<ext::sh Tools/x.sh>.insteadOf
// names Tools/x.sh).
func normKey(key string) string {
	first, last := strings.Index(key, "."), strings.LastIndex(key, ".")
	if first < 0 || first == last {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}
