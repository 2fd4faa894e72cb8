package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What a command git runs names (docs/sandbox.md, "What a command names"). A configuration
// value git runs through a shell (core.fsmonitor, core.editor, an alias's !command, a
// filter, a diff or merge driver, ...) and a hook script are read as shell command lines,
// and every path they name is protected: the agent would otherwise edit the file and the
// user's next git on the host would run it. The text is the repository's, which the agent
// may have shaped before the session: nothing here may fail on it.

// maxCommandDepth bounds the nesting followed: sh -c '…', an option's =value, git -c k=v.
const maxCommandDepth = 4

// namedPath is one path a command line names, as written (absolute, ~/…, or relative to the
// directory the command runs in).
type namedPath struct {
	path string
	// must: protect it even when it does not exist yet (covered), since the command runs it
	// once it does: the program itself spelled with a slash, an interpreter's script, a
	// sourced file. Otherwise it is protected only when it exists: a regular file, or a
	// directory spelled with a slash (tools/, ./bin) or listed in a PATH-like assignment.
	must bool
	// dir: covered by a directory when missing (git --exec-path, --git-dir).
	dir bool
	// dirOK: an existing directory named without a slash still counts.
	dirOK bool
	// glob: the path is a pattern over the command's own directory (t*/x.sh): what it
	// matches when the scan runs is protected.
	glob bool
	// tail: the path is what follows an expansion ("$(git rev-parse --show-toplevel)/x.sh",
	// "$(dirname "$0")/h"): relative to each directory the command may have meant.
	tail bool
}

// commandNames is what one command line names, and whether all of it could be read.
type commandNames struct {
	paths []namedPath
	// dirs are the directories a cd or pushd earlier in the line may have moved to: a
	// relative path named after one is also read relative to each (the line's own directory
	// stays a candidate: a cd in a subshell or a branch may not have run).
	dirs []string
	// unread says what could not be read (a syntax error, an expansion): the paths are then
	// the ones read conservatively, and debug sandbox says so.
	unread []string
}

// namesOf reads value as a shell command line (a leading ! of an alias dropped).
func namesOf(value string) commandNames {
	var c commandNames
	c.line(strings.TrimPrefix(strings.TrimSpace(value), "!"), 0)
	return c
}

// gitArgsNames reads a git alias without !: git's own arguments, of which only the global
// options before the subcommand point git somewhere (-c, -C, --exec-path, --git-dir).
func gitArgsNames(value string) commandNames {
	var c commandNames
	f, err := parse(value)
	if err != nil {
		c.unreadable(value, err)
		return c
	}
	if len(f.Stmts) == 1 {
		if call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok {
			c.gitOptions(c.words(call.Args), 0)
			return c
		}
	}
	c.unread = append(c.unread, "an alias that is not one git command line")
	c.tokens(value)
	return c
}

func parse(text string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
}

// line reads one shell command line; a line that does not parse is read token by token.
func (c *commandNames) line(text string, depth int) {
	if depth > maxCommandDepth || strings.TrimSpace(text) == "" {
		return
	}
	f, err := parse(text)
	if err != nil {
		c.unreadable(text, err)
		return
	}
	// The directories first: a cd anywhere in the line (a function defined before it, a loop,
	// a branch) may come before any command when it runs.
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			c.directoryChange(c.unwrap(c.words(call.Args)))
		}
		return true
	})
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			c.assigns(n.Assigns, depth)
			c.call(c.words(n.Args), depth)
		case *syntax.DeclClause: // export PATH="node_modules/.bin:$PATH" (husky's runner)
			c.assigns(n.Args, depth)
		case *syntax.WordIter: // for f in tools/hooks.d/*.sh: what the loop may run
			for _, w := range n.Items {
				c.maybe(c.word(w))
			}
		case *syntax.Redirect:
			if n.Op == syntax.RdrIn && n.Word != nil {
				c.maybe(c.word(n.Word))
			}
		}
		return true
	})
}

// unreadable protects conservatively what a text that is no shell line names: every token
// that is an existing file, and every token spelled as a path even before it exists.
func (c *commandNames) unreadable(text string, err error) {
	c.unread = append(c.unread, "not a shell command line ("+err.Error()+")")
	c.tokens(text)
}

func (c *commandNames) tokens(text string) {
	for _, t := range strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(" \t\n;&|()<>'\"`=:!$", r) }) {
		c.add(namedPath{path: t, must: strings.Contains(t, "/") && looksLikeFile(t)})
	}
}

// word is one argument as far as the text decides it: its text with quotes removed, and,
// when an expansion ($VAR, $(…)) makes part of it unknown, the literal tail after the last
// one (the "/tools/x.sh" of "$(git rev-parse --show-toplevel)/tools/x.sh").
type word struct {
	text  string
	exact bool
	// parts are the literal pieces between the unknown parts (text is the last).
	parts []string
}

func (c *commandNames) words(ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		out = append(out, c.word(w))
	}
	return out
}

func (c *commandNames) word(w *syntax.Word) word {
	var b strings.Builder
	exact := literalParts(&b, w.Parts, false)
	parts := strings.Split(b.String(), unknownPart)
	return word{text: parts[len(parts)-1], exact: exact, parts: parts}
}

// unknownPart stands for a part of a word an expansion makes unknown.
const unknownPart = "\x00"

// literalParts writes the parts' text, unknownPart for each part an expansion makes
// unknown.
func literalParts(b *strings.Builder, parts []syntax.WordPart, quoted bool) bool {
	exact := true
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, quoted))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			exact = literalParts(b, p.Parts, true) && exact
		case *syntax.ParamExp:
			// ${VAR:-dir} and ${VAR-dir}: the default is what it names when VAR is unset,
			// as it is for the user's git.
			if e := p.Exp; e != nil && e.Word != nil && (e.Op == syntax.DefaultUnsetOrNull || e.Op == syntax.DefaultUnset) {
				exact = literalParts(b, e.Word.Parts, quoted) && exact
				continue
			}
			b.WriteString(unknownPart)
			exact = false
		default:
			b.WriteString(unknownPart)
			exact = false
		}
	}
	return exact
}

// unescape removes the backslashes the shell removes: any in an unquoted word, and those
// before $ ` " \ in a double-quoted one.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\", s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// assigns reads VAR=value prefixes (assignValue); an array's elements are arguments
// (pre-commit's hook: ARGS=(hook-impl --config=…)).
func (c *commandNames) assigns(as []*syntax.Assign, depth int) {
	for _, a := range as {
		if a.Array != nil {
			for _, e := range a.Array.Elems {
				if e.Value != nil {
					c.argument(c.word(e.Value), depth)
				}
			}
		}
		if a.Value != nil {
			c.assignValue(c.word(a.Value).parts)
		}
	}
}

// assignValue reads an assigned value: each :-separated part may name a directory of
// programs (PATH=bin:$PATH) or a file.
// A package manager's directory (node_modules/.bin) is left alone: the package manager writes
// it, and the packages its links lead to are the agent's to change anyway (docs/sandbox.md,
// "Deviations and limits").
func (c *commandNames) assignValue(pieces []string) {
	for _, piece := range pieces {
		for _, part := range strings.Split(piece, ":") {
			if !slices.Contains(strings.Split(filepath.ToSlash(part), "/"), "node_modules") {
				c.add(namedPath{path: part, dirOK: true})
			}
		}
	}
}

// wrappers run the rest of their arguments as a command.
var wrappers = map[string]bool{"env": true, "exec": true, "command": true, "nohup": true, "nice": true, "time": true,
	"timeout": true, "builtin": true, "stdbuf": true, "xargs": true, "sudo": true, "doas": true, "setsid": true,
	"ionice": true, "chrt": true, "taskset": true, "flock": true, "runuser": true}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "fish": true}

// interpreters run their first argument that is no option as a script; the value lists
// their options that take the next word.
var interpreters = map[string]string{
	"python": "-m -W -X", "perl": "-I -M -m", "ruby": "-I -r -C -E", "node": "-r --require --import --loader -C",
	"nodejs": "-r --require", "deno": "", "bun": "", "php": "-c -d -z", "lua": "-l", "luajit": "-l", "tclsh": "",
	"wish": "", "ts-node": "-r --require", "tsx": "", "source": "", ".": "",
}

// inline are the options after which an interpreter runs code given in the command line, not
// a script file: what follows is not its script.
var inline = map[string]bool{"-c": true, "-e": true, "-E": true, "-p": true, "--eval": true, "--print": true}

// call reads one simple command: its program, what it runs as a script, and its arguments.
func (c *commandNames) call(args []word, depth int) {
	args = c.unwrap(args)
	if len(args) == 0 {
		return
	}
	prog := args[0]
	name := strings.ToLower(filepath.Base(prog.text))
	rest := args[1:]
	switch {
	case name == "cd" || name == "pushd":
		return // read before the line's paths (directoryChange)
	case name == "eval" || name == "trap":
		// eval TEXT… runs its words as a command line; trap 'TEXT' SIGNAL runs TEXT.
		texts := rest
		if name == "trap" && len(rest) > 0 {
			texts = rest[:1]
		}
		for _, t := range texts {
			c.line(t.text, depth+1)
		}
		return
	}
	c.program(prog)
	switch {
	case name == "git":
		c.gitOptions(rest, depth)
		return
	case shells[name]:
		c.shell(rest, depth)
	case isInterpreter(name):
		c.script(name, rest, depth)
	}
	for _, a := range rest {
		c.argument(a, depth)
	}
}

// unwrap drops wrappers (env, exec, timeout, ...) with their options and, for env, its
// VAR=value words (read as assignments).
func (c *commandNames) unwrap(args []word) []word {
	for len(args) > 0 && wrappers[filepath.Base(args[0].text)] {
		wrapper := filepath.Base(args[0].text)
		args = args[1:]
		for len(args) > 0 && (strings.HasPrefix(args[0].text, "-") || strings.Contains(args[0].text, "=") ||
			(wrapper == "timeout" || wrapper == "nice") && isNumberish(args[0].text)) {
			if split, ok := envSplitString(wrapper, args); ok { // env -S "sh tools/x.sh": a command line
				c.line(split, 1)
				return nil
			}
			if dir, ok := envChdir(wrapper, args); ok { // env -C tools sh x.sh
				c.moveTo(dir)
			}
			if takesValue(wrapper, args[0].text) && len(args) > 1 { // timeout -s KILL, env -u HOME
				args = args[1:]
			}
			if _, v, ok := strings.Cut(args[0].text, "="); ok && !strings.HasPrefix(args[0].text, "-") {
				c.assignValue([]string{v})
			}
			args = args[1:]
		}
	}
	return args
}

// envSplitString is the command line of env -S STRING (also -SSTRING, --split-string=STRING,
// and -S ending a cluster of options: -vS STRING).
func envSplitString(wrapper string, args []word) (string, bool) {
	if wrapper != "env" {
		return "", false
	}
	a := args[0].text
	switch {
	case (a == "-S" || a == "--split-string" || shortEnds(a, 'S')) && len(args) > 1:
		return strings.Join(texts(args[1:]), " "), true
	case strings.HasPrefix(a, "--split-string="):
		return strings.TrimPrefix(a, "--split-string="), true
	case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "S"):
		_, rest, _ := strings.Cut(a, "S")
		return rest, rest != ""
	}
	return "", false
}

// envChdir is env -C DIR's (--chdir=DIR) directory.
func envChdir(wrapper string, args []word) (word, bool) {
	if wrapper != "env" {
		return word{}, false
	}
	a := args[0].text
	switch {
	case (a == "-C" || a == "--chdir") && len(args) > 1:
		return args[1], true
	case strings.HasPrefix(a, "--chdir="):
		return word{text: strings.TrimPrefix(a, "--chdir="), exact: args[0].exact}, true
	case strings.HasPrefix(a, "-C") && len(a) > 2:
		return word{text: a[2:], exact: args[0].exact}, true
	}
	return word{}, false
}

// shortEnds reports a cluster of short options ending in flag (-vS).
func shortEnds(a string, flag byte) bool {
	return len(a) > 2 && a[0] == '-' && a[1] != '-' && a[len(a)-1] == flag
}

// wrapperValues are the options of each wrapper that take the next word as their value.
var wrapperValues = map[string]string{
	"env": "uC", "timeout": "sk", "nice": "n", "xargs": "nLPdIsaE", "stdbuf": "ioe", "ionice": "cnp",
	"chrt": "p", "taskset": "", "flock": "wEn", "runuser": "ugc", "sudo": "ugCDhprtTU",
}

// takesValue reports whether option a of wrapper takes the next word (-s KILL), not its own
// inline value (-sKILL).
func takesValue(wrapper, a string) bool {
	return len(a) == 2 && a[0] == '-' && strings.IndexByte(wrapperValues[wrapper], a[1]) >= 0
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

func isNumberish(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.smhd") == ""
}

// family is an interpreter's name without its version (python3.12, perl5).
func family(name string) string {
	if f := strings.TrimRight(name, "0123456789."); f != "" {
		return f
	}
	return name
}

func isInterpreter(name string) bool {
	_, ok := interpreters[family(name)]
	return ok
}

// interpreterOptions are the options of an interpreter that take a word.
func interpreterOptions(name string) []string {
	return strings.Fields(interpreters[family(name)])
}

// program is the command word: spelled with a slash it is a file git runs, protected even
// before it exists.
func (c *commandNames) program(w word) {
	c.add(namedPath{path: w.text, must: strings.Contains(w.text, "/") && looksLikeFile(w.text), tail: !w.exact})
}

// shell reads sh's arguments: -c's text is a command line, otherwise the first argument is
// the script it runs.
func (c *commandNames) shell(args []word, depth int) {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "-o" || a == "+o":
			i++
		case strings.HasPrefix(a, "-") && a != "-" && a != "--" && !strings.HasPrefix(a, "--") && strings.Contains(a, "c"):
			if i+1 < len(args) {
				c.line(args[i+1].text, depth+1)
			}
			return
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			c.add(namedPath{path: a, must: looksLikeFile(a), tail: !args[i].exact})
			return
		}
	}
}

// looksLikeFile: a word that can be a script's file name (no blanks, quotes or shell
// syntax), so covering it when missing cannot hide what the user meant as code.
func looksLikeFile(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\n'\"`$;&|(){}<>*?[]=")
}

// script reads an interpreter's arguments: its script (the first that is no option, or the
// word after an option that names a file), unless the code is given inline.
func (c *commandNames) script(name string, args []word, depth int) {
	takes := interpreterOptions(name)
	for i := 0; i < len(args); i++ {
		a := args[i].text
		if inline[a] {
			return
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if slices.Contains(takes, a) && i+1 < len(args) {
				i++
				c.module(args[i].text)
			}
			continue
		}
		if (family(name) == "deno" || family(name) == "bun") && (a == "run" || a == "x" || a == "test") {
			continue
		}
		c.add(namedPath{path: a, must: looksLikeFile(a), tail: !args[i].exact})
		return
	}
}

// module is what an option's word may name: a file or directory (-I lib, -r ./setup.js),
// or a Python module (-m tools.check: tools/check.py, or the package tools/check).
func (c *commandNames) module(m string) {
	c.add(namedPath{path: m, dirOK: true})
	if m != "" && !strings.Contains(m, "/") {
		p := strings.ReplaceAll(m, ".", "/")
		c.add(namedPath{path: p + ".py"})
		c.add(namedPath{path: p, dirOK: true})
	}
}

// gitOptions reads git's global options before its subcommand: -c key=value is a
// configuration entry (its value read again), -C a directory git works in (its .git),
// --exec-path where it finds its programs, --git-dir its directory.
func (c *commandNames) gitOptions(args []word, depth int) {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i].text
			}
			return ""
		}
		switch {
		case a == "-c":
			c.configValue(next(), depth)
		case strings.HasPrefix(a, "-c"):
			c.configValue(a[2:], depth)
		case a == "-C":
			if d := next(); d != "" {
				c.add(namedPath{path: filepath.Join(d, ".git"), must: true, dir: true})
			}
		case a == "--exec-path" || a == "--git-dir":
			c.add(namedPath{path: next(), must: true, dir: true})
		case strings.HasPrefix(a, "--exec-path=") || strings.HasPrefix(a, "--git-dir="):
			_, v, _ := strings.Cut(a, "=")
			c.add(namedPath{path: v, must: true, dir: true})
		case strings.HasPrefix(a, "-"):
		default:
			return // the subcommand: what follows are its arguments
		}
	}
}

// configValue reads a -c key=value: a value git runs is a command line, a path it reads
// (include.path, core.hooksPath) a path.
func (c *commandNames) configValue(kv string, depth int) {
	key, value, ok := strings.Cut(kv, "=")
	if !ok {
		return
	}
	key = strings.ToLower(key)
	switch {
	case runsCommand(key):
		c.line(strings.TrimPrefix(value, "!"), depth+1)
	case key == "core.hookspath" || key == "core.worktree":
		c.add(namedPath{path: value, must: true, dir: true})
	default:
		c.add(namedPath{path: value, dirOK: true})
	}
}

// argument reads one argument: an existing file it names, and, for --opt=value or
// key=value, the value read again as a command line (--config=.pre-commit-config.yaml,
// -c core.fsmonitor=…).
func (c *commandNames) argument(a word, depth int) {
	if !strings.HasPrefix(a.text, "-") {
		c.maybe(a)
	}
	if _, v, ok := strings.Cut(a.text, "="); ok && v != "" {
		c.line(v, depth+1)
	}
}

// maybe records an argument as a path it may name (protected when it exists).
func (c *commandNames) maybe(a word) {
	c.add(namedPath{path: a.text, tail: !a.exact})
}

func (c *commandNames) add(p namedPath) {
	p.path = strings.TrimSpace(p.path)
	if p.path == "" || p.path == "." || p.path == ".." || p.path == "/" || p.path == "-" || strings.ContainsRune(p.path, 0) ||
		strings.Contains(p.path, "://") {
		return
	}
	if expanded := braces(p.path); len(expanded) > 1 { // tools/{a,b}.sh names tools/a.sh and tools/b.sh
		for _, e := range expanded {
			q := p
			q.path = e
			c.add(q)
		}
		return
	}
	if i := strings.IndexAny(p.path, "*?["); i >= 0 {
		// A glob runs whatever matches it: the directory it matches in is protected whole
		// (tools/hooks.d/*.sh: tools/hooks.d, covered when missing); a glob over the command's
		// own directory (t*/x.sh), what it matches now.
		dir := filepath.Dir(p.path[:i] + "x")
		if dir == "." || dir == "/" {
			c.unread = append(c.unread, "a glob over the command's own directory ("+p.path+"): what it matches now is protected")
			p.glob, p.must = true, false
			c.paths = append(c.paths, p)
			return
		}
		p = namedPath{path: dir, must: true, dir: true, tail: p.tail}
	}
	if len(c.dirs) == 0 || filepath.IsAbs(p.path) || strings.HasPrefix(p.path, "~") {
		c.paths = append(c.paths, p)
		return
	}
	// After a cd the line's own directory stays a candidate, covered too: the cd may fail
	// (the agent can remove its directory), and the command then runs here.
	c.paths = append(c.paths, p)
	for _, d := range c.dirs {
		moved := p
		moved.path = filepath.Join(d, p.path)
		c.paths = append(c.paths, moved)
	}
}

// directoryChange reads a cd, pushd, or env -C/--chdir of one simple command.
func (c *commandNames) directoryChange(args []word) {
	if len(args) < 2 {
		return
	}
	switch strings.ToLower(filepath.Base(args[0].text)) {
	case "cd", "pushd":
		c.moveTo(args[len(args)-1])
	case "builtin", "command":
		c.directoryChange(args[1:])
	}
}

// moveTo reads cd DIR or pushd DIR: later relative paths may be relative to DIR. A directory
// the text decides only in part ("$(git rev-parse --show-toplevel)/tools", "$(dirname
// "$0")/../tools") counts by its literal tail; one it does not decide at all ($VAR, cd -) is
// said in what could not be read.
func (c *commandNames) moveTo(dir word) {
	if !dir.exact {
		tail := strings.TrimPrefix(dir.text, "/")
		if tail == "" || tail == "." {
			c.unread = append(c.unread, "a cd to a directory the text does not name")
			return
		}
		dir = word{text: tail, exact: true}
		for strings.HasPrefix(dir.text, "../") { // relative to the hook's directory: read from the root too
			c.dirs = append(c.dirs, dir.text)
			dir.text = strings.TrimPrefix(dir.text, "../")
		}
	}
	if dir.text == "-" || dir.text == "" {
		c.unread = append(c.unread, "a cd to a directory the text does not name")
		return
	}
	for _, d := range append([]string{""}, c.dirs...) {
		if !filepath.IsAbs(dir.text) && !strings.HasPrefix(dir.text, "~") {
			c.dirs = append(c.dirs, filepath.Join(d, dir.text))
		} else {
			c.dirs = append(c.dirs, dir.text)
			break
		}
	}
}

// braces expands the first brace list of p (tools/{a,b}.sh: tools/a.sh, tools/b.sh), as bash
// does before globbing; p itself when it has none.
func braces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	close := strings.IndexByte(p[open:], '}')
	if close < 0 || !strings.Contains(p[open:open+close], ",") {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:open+close], ",") {
		out = append(out, braces(p[:open]+alt+p[open+close+1:])...)
	}
	return out
}
