package risk

import (
	"encoding/base64"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What a command substitution or a pipeline stage prints, when the text decides it: besides
// echo, printf and cat (walk.go), the working directory (pwd after a cd inside the
// substitution), paths computed from known paths (dirname, realpath, readlink -f, basename),
// base64 -d of known text, and programs that print names the gate can place without knowing
// them (mktemp: a fresh name; find: START or names under it; ls: names in a directory; git
// ls-files, grep -l: names under the working directory; date, whoami …: a word without a
// slash). Anything else is unreadable (unknownMark), and deleting what it names is
// catastrophic (docs/risk.md, "How the command is read").

// allMark stands for every name in a directory, as an unquoted glob does: `ls` prints the
// names in the working directory, so `rm -rf $(ls)` from ~ empties it.
const allMark = "\x04"

// fragment is a printed word the gate does not know but that holds no slash and is not "..":
// it cannot climb out of the directory it is appended to (`/tmp/build-$(date +%s)`).
const fragment = unknownMark + unknownMark

// sequenceOutput is what a list of statements prints, one after another; nil when a part
// is unreadable.
func (a *assessor) sequenceOutput(stmts []*syntax.Stmt) []string {
	acc := []string{""}
	for _, s := range stmts {
		out, ok := a.stmtOutput(s)
		if !ok {
			return nil
		}
		if acc = cross(acc, out); len(acc) > maxReadings {
			return nil
		}
	}
	return acc
}

func cross(prefix, next []string) []string {
	out := make([]string, 0, len(prefix)*len(next))
	for _, p := range prefix {
		for _, n := range next {
			out = append(out, p+n)
		}
	}
	return out
}

// stmtOutput is what one statement prints: both sides of && and || (either may run), the last
// stage of a pipeline fed by the ones before it, a subshell or block's statements, a simple
// command's static output. cd prints nothing and moves the directory pwd prints.
func (a *assessor) stmtOutput(s *syntax.Stmt) ([]string, bool) {
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
			x, ok := a.stmtOutput(c.X)
			if !ok {
				return nil, false
			}
			y, ok := a.stmtOutput(c.Y)
			return cross(x, y), ok
		}
		a.feedPipes(s)
		out := a.prints(lastStage(s))
		return out, out != nil
	case *syntax.Subshell:
		out := a.sequenceOutput(c.Stmts)
		return out, out != nil
	case *syntax.Block:
		out := a.sequenceOutput(c.Stmts)
		return out, out != nil
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			a.assignNode(as)
		}
		argv := a.args(c.Args)
		if len(argv) == 0 {
			return []string{""}, true
		}
		if name, ok := argv[0].exact(); ok && (progName(name) == "cd" || progName(name) == "pushd") {
			a.cd(name, argv, nil, 0)
			return []string{""}, true
		}
		out := a.prints(s)
		return out, out != nil
	}
	return nil, false
}

// feedPipes passes each stage's output to the next, left to right, before the last stage's
// output is read.
func (a *assessor) feedPipes(s *syntax.Stmt) {
	b, ok := s.Cmd.(*syntax.BinaryCmd)
	if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
		return
	}
	a.feedPipes(b.X)
	a.pipe(b)
	a.feedPipes(b.Y)
}

// silent programs print nothing.
var silent = map[string]bool{"true": true, "false": true, ":": true, "exit": true, "return": true,
	"set": true, "shopt": true, "export": true, "unset": true, "local": true, "mkdir": true, "touch": true}

// wordPrinters print a word without a slash whatever their (static) arguments: a number, a
// date, a user or host name.
var wordPrinters = map[string]bool{"date": true, "whoami": true, "id": true, "uname": true,
	"hostname": true, "nproc": true, "seq": true, "wc": true, "expr": true, "uuidgen": true, "logname": true}

// produces is what name prints, given its static arguments (words, without the name) and the
// statement (for standard input); nil when the gate cannot read it.
func (a *assessor) produces(name string, words []string, s *syntax.Stmt) []string {
	switch {
	case silent[name]:
		return []string{""}
	case wordPrinters[name]:
		for _, w := range words {
			if strings.Contains(w, "/") || strings.Contains(w, "..") {
				return nil // date +../.. prints a path
			}
		}
		return []string{fragment}
	}
	switch name {
	case "pwd":
		if a.cwd == nil || a.cwd.unread {
			return nil
		}
		return []string{a.cwd.text}
	case "dirname", "basename":
		return pathOps(name, words)
	case "realpath", "grealpath", "readlink", "greadlink":
		return a.resolvePaths(name, words)
	case "base64", "gbase64":
		return a.decodeBase64(words, s)
	case "mktemp":
		return []string{mktempDir(words) + "/" + unknownMark}
	case "find":
		return a.findOutput(words)
	case "ls":
		return lsOutput(words)
	case "git":
		if len(words) > 0 && (words[0] == "ls-files" || (words[0] == "diff" && contains(words, "--name-only"))) {
			return []string{"./" + unknownMark}
		}
	case "grep", "egrep", "fgrep", "rg":
		if contains(words, "-l") || contains(words, "--files-with-matches") || contains(words, "-rl") || contains(words, "-lr") {
			return []string{"./" + unknownMark}
		}
	}
	return nil
}

// operands drops the options of a path program's arguments.
func operands(words []string) (flags, ops []string) {
	for i, w := range words {
		if w == "--" {
			return flags, append(ops, words[i+1:]...)
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			flags = append(flags, w)
			continue
		}
		ops = append(ops, w)
	}
	return flags, ops
}

// pathOps: dirname and basename of static paths, one line each.
func pathOps(name string, words []string) []string {
	_, ops := operands(words)
	if name == "basename" && len(ops) > 1 {
		ops = ops[:1] // basename NAME SUFFIX
	}
	var lines []string
	for _, o := range ops {
		if name == "dirname" {
			lines = append(lines, path.Dir(o))
		} else {
			lines = append(lines, path.Base(o))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return []string{strings.Join(lines, "\n")}
}

// resolvePaths: realpath and readlink -f/-e/-m print the absolute path an operand names (the
// links the text made are followed; the file system's are not known). readlink without them
// prints a link's target, which the gate cannot read.
func (a *assessor) resolvePaths(name string, words []string) []string {
	flags, ops := operands(words)
	if strings.Contains(name, "readlink") && !strings.ContainsAny(strings.Join(flags, ""), "fem") {
		return nil
	}
	var lines []string
	for _, o := range ops {
		if a.viaDescriptor(reading{text: strings.TrimSuffix(o, "/") + "/"}) {
			return nil // `realpath /dev/fd/3`: what the descriptor is open on
		}
		// A trailing slash makes target follow a link the text made at o itself, as
		// realpath does (`ln -s ~ h; rm -rf "$(realpath h)"`).
		p, _, ok := a.target(reading{text: strings.TrimSuffix(o, "/") + "/", exact: true})
		if !ok {
			return nil
		}
		lines = append(lines, p)
	}
	if len(lines) == 0 {
		return nil
	}
	return []string{strings.Join(lines, "\n")}
}

// decodeBase64: base64 -d (--decode, -D) of known standard input.
func (a *assessor) decodeBase64(words []string, s *syntax.Stmt) []string {
	flags, ops := operands(words)
	decode := false
	for _, f := range flags {
		decode = decode || f == "--decode" || (!strings.HasPrefix(f, "--") && strings.ContainsAny(f, "dD"))
	}
	if !decode || len(ops) > 0 {
		return nil
	}
	var out []string
	for _, t := range a.stdin(s) {
		if strings.Contains(t, unknownMark) {
			return nil
		}
		clean := strings.Join(strings.Fields(t), "")
		b, err := base64.StdEncoding.DecodeString(clean)
		if err != nil {
			if b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "=")); err != nil {
				return nil
			}
		}
		out = append(out, string(b))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mktempDir is where mktemp makes its fresh name: -p DIR, --tmpdir=DIR, the directory of a
// template with a slash, else the temporary directory.
func mktempDir(words []string) string {
	for i, w := range words {
		switch {
		case (w == "-p" || w == "--tmpdir") && i+1 < len(words):
			return words[i+1]
		case strings.HasPrefix(w, "--tmpdir="):
			return strings.TrimPrefix(w, "--tmpdir=")
		case strings.HasPrefix(w, "-p") && len(w) > 2:
			return w[2:]
		case !strings.HasPrefix(w, "-") && strings.Contains(w, "/"):
			return path.Dir(w)
		}
	}
	return "/tmp"
}

// findOutput is what find prints: the paths its actions would get (find.go), START itself
// when nothing narrows the search.
func (a *assessor) findOutput(words []string) []string {
	args := make([]arg, len(words))
	for i, w := range words {
		args[i] = arg{{text: w, exact: true}}
	}
	starts, expr := findStarts(args)
	var out []string
	for _, g := range a.found(starts, expr) {
		for _, r := range g {
			out = append(out, r.text)
		}
	}
	return out
}

// lsOutput: ls prints the names in the working directory (or in each operand, without its
// path: rm then resolves them in the working directory), or with -d the operands themselves.
func lsOutput(words []string) []string {
	flags, ops := operands(words)
	dirs := false
	for _, f := range flags {
		dirs = dirs || f == "--directory" || (!strings.HasPrefix(f, "--") && strings.Contains(f, "d"))
	}
	if len(ops) == 0 {
		ops = []string{"."}
	}
	var out []string
	for _, o := range ops {
		if dirs {
			out = append(out, globAsAll(o)) // ls -d ~/* prints every name the glob matches
		} else {
			out = append(out, allMark, o)
		}
	}
	return out
}

// globAsAll rewrites a path from its first segment with a pattern as "every name" (allMark),
// so what ls -d prints from a glob stays the directory's contents once it is printed.
func globAsAll(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if hasGlobMeta(seg) {
			return strings.Join(append(segs[:i:i], allMark), "/")
		}
	}
	return p
}
