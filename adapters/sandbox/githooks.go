package sandbox

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// Bounds of the look at hooks and git directories (docs/sandbox.md, "Where git is pointed").
const (
	hookBytes      = 256 << 10 // a hook larger than this is a program, not a script that names files
	hookFiles      = 256       // hooks read per directory
	gitDirEntries  = 5000      // entries of a git directory looked at for links
	managerConfigs = 64 << 10  // bytes of a hook manager's configuration read
)

// hooks protects what the hooks in dir name (dir itself is protected: it is .git/hooks or
// core.hooksPath). A hook runs on the host at the user's next commit: a script it runs or
// sources from the work tree runs just as well, and so does the configuration of the hook
// manager it starts (pre-commit, lefthook). husky v9 sets core.hooksPath to .husky/_, whose
// stubs run .husky/<hook>: the directory above is protected whole.
func (g *gitScan) hooks(root, dir string) {
	dir = resolved(dir)
	if dir == "" || g.scanned["hooks:"+dir] {
		return
	}
	g.scanned["hooks:"+dir] = true
	if filepath.Base(dir) == "_" && within(resolved(root), dir) {
		g.add(filepath.Dir(dir), sandbox.CoverDir, "husky's hooks: the stubs in "+dir+" (core.hooksPath) run the hooks of the directory above")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		if n++; n > hookFiles {
			g.warn("more than " + strconv.Itoa(hookFiles) + " files in the hooks directory " + dir + ": the rest are not read, so what they name is not protected")
			return
		}
		g.hook(root, filepath.Join(dir, e.Name()))
	}
}

// hook protects what one hook script names, and its hook manager's configuration. A hook
// that is a link (githooks/pre-commit -> ../scripts/pc.sh) runs what it leads to.
func (g *gitScan) hook(root, p string) {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(p); err == nil {
			g.add(target, "", "the hook "+p+" is a link to it: git runs it when the user commits on the host")
		}
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	unread := "the hook " + p + " is a program or larger than " + strconv.Itoa(hookBytes>>10) + " KiB, not a script read here: " +
		"what it runs from the work tree is not protected"
	if fi.Size() > hookBytes {
		g.note(unread)
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	if bytes.IndexByte(b, 0) >= 0 {
		g.note(unread)
		return
	}
	if interp := hookInterpreter(b); interp != "" {
		g.note("the hook " + p + " is a " + interp + " script: what it imports or runs from the work tree is not read here, " +
			"so only the files its words name are protected (docs/sandbox.md, \"What the hooks run\")")
	}
	why := "the hook " + p + " runs it when the user commits on the host"
	g.named(namesOf(string(b)), []string{root, filepath.Dir(p)}, why)
	text := strings.ToLower(string(b))
	if strings.Contains(text, "lefthook") {
		g.manager(root, lefthookFiles, "lefthook, which the hook "+p+" runs, reads it and runs the commands it lists")
		g.lefthookScripts(root)
	}
	if strings.Contains(text, "hook-impl") || strings.Contains(text, "pre_commit") || strings.Contains(text, "pre-commit run") {
		g.manager(root, preCommitFiles, "pre-commit, which the hook "+p+" runs, reads it and runs the hooks it lists (repo: local)")
	}
	if strings.Contains(text, "overcommit") {
		g.manager(root, overcommitFiles, "overcommit, which the hook "+p+" runs, reads it and runs the commands it lists")
	}
}

// A hook manager's configuration files, relative to the work tree: the ones a missing file
// of which the agent could create are covered (cover), the others protected when present.
type managerFile struct {
	name  string
	cover bool
}

var lefthookFiles = []managerFile{
	{"lefthook.yml", true}, {".lefthook.yml", true}, {"lefthook-local.yml", true}, {".lefthook-local.yml", true},
	{"lefthook.yaml", false}, {".lefthook.yaml", false}, {"lefthook-local.yaml", false}, {".lefthook-local.yaml", false},
	{"lefthook.toml", false}, {".lefthook.toml", false}, {"lefthook.json", false}, {".lefthook.json", false},
	{"lefthook.jsonc", false}, {".lefthook.jsonc", false}, {".config/lefthook.yml", false}, {".config/lefthook.yaml", false},
}

var preCommitFiles = []managerFile{{".pre-commit-config.yaml", true}, {".pre-commit-config.yml", false}}

var overcommitFiles = []managerFile{{".overcommit.yml", true}}

// manager protects a hook manager's configuration files and what the commands they list
// name.
func (g *gitScan) manager(root string, files []managerFile, why string) {
	for _, f := range files {
		p := filepath.Join(root, f.name)
		if _, err := os.Stat(p); err == nil {
			g.add(p, "", why)
			g.managerCommands(root, p, why)
		} else if f.cover {
			g.add(p, sandbox.CoverFile, why)
		}
	}
}

// lefthookScripts protects lefthook's script directories (source_dir, source_dir_local):
// the scripts its configuration lists by name run from there.
func (g *gitScan) lefthookScripts(root string) {
	for _, d := range []string{".lefthook", ".lefthook-local"} {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			g.add(filepath.Join(root, d), "", "lefthook runs the scripts its configuration lists from "+d+"/<hook>/")
		}
	}
}

// commandKey finds the lines of a hook manager's configuration (YAML, TOML or JSON) whose
// key holds a command: pre-commit's entry, lefthook's run.
var commandKey = regexp.MustCompile(`^(\s*)(?:-\s*)?"?(run|entry|script|command)"?\s*[:=]\s*(.*?)\s*,?\s*$`)

// managerCommands reads the commands a hook manager's configuration lists, line by line
// (a block scalar's lines too), as command lines: no YAML parser of ours decides what is
// code, so a command is found wherever its key is.
func (g *gitScan) managerCommands(root, file, why string) {
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	if len(b) > managerConfigs {
		b = b[:managerConfigs]
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		m := commandKey.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		value := flowList(unquote(m[3]))
		if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") {
			var block []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indent(lines[i+1]) > len(m[1])) {
				i++
				block = append(block, lines[i])
			}
			value = strings.Join(block, "\n")
		}
		g.named(namesOf(value), []string{root}, why+": "+file+" runs it")
	}
}

// flowList turns a YAML or JSON list of words (overcommit's command: ['bin/x', '--fix'])
// into a command line; other values are returned as they are.
func flowList(s string) string {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return s
	}
	var words []string
	for _, w := range strings.Split(s[1:len(s)-1], ",") {
		words = append(words, unquote(strings.TrimSpace(w)))
	}
	return strings.Join(words, " ")
}

func indent(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// gitData are the parts of a git directory that hold data git does not run or read
// configuration from (objects, refs, reflogs), or that are scanned as repositories of their
// own (modules: each submodule's git directory, reached through its gitlink).
var gitData = map[string]bool{"objects": true, "lfs": true, "refs": true, "logs": true, "modules": true}

// linksIn protects where the symbolic links inside a git directory lead (.git/hooks ->
// ../githooks, .git/config -> ../shared.cfg): git follows them, and the directory they
// lead to may be the agent's to write. gitData is not looked at.
func (g *gitScan) linksIn(dir string) {
	dir = resolved(dir)
	if dir == "" || g.scanned["links:"+dir] {
		return
	}
	g.scanned["links:"+dir] = true
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if n++; n > gitDirEntries {
			g.warn("more than " + strconv.Itoa(gitDirEntries) + " entries in the git directory " + dir + ": links beyond them are not followed, " +
				"so where they lead is not protected")
			return filepath.SkipAll
		}
		if err != nil {
			return nil
		}
		if d.IsDir() && p != dir && gitData[d.Name()] {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if target, err := filepath.EvalSymlinks(p); err == nil {
				g.add(target, "", "the link "+p+" inside the git directory leads there: git reads and runs what it finds through it")
			}
		}
		return nil
	})
}

// hookInterpreter names the interpreter of a hook that is not a shell script (python3, node,
// ruby, perl...), "" for a shell script or one without a #! line (git runs it with sh).
func hookInterpreter(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte("#!"))
	if !ok {
		return ""
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return ""
	}
	name := filepath.Base(fields[0])
	if name == "env" { // #!/usr/bin/env [-S] [VAR=x] python3
		name = ""
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
				name = filepath.Base(f)
				break
			}
		}
	}
	if name == "" || shells[name] || name == "busybox" {
		return ""
	}
	return name
}
