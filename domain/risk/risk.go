// Package risk is the shell tool's risk gate: it reads a model-assembled command the way bash
// will read it (a real parser, mvdan.cc/sh/v3/syntax, never string matching) and says whether
// the command is safe, destructive (it irreversibly deletes or overwrites something: the
// destructive command table) or catastrophic (it destroys the machine, the home directory or
// the user's credentials). Catastrophic commands are denied in every permission mode,
// allow_all included; destructive ones are asked about in standard mode. The rules, the
// protected locations and the deliberate limits are listed in docs/risk.md.
//
// The package is pure: no I/O, no environment. The caller resolves the home directory with
// the platform fallback (HOME, then the platform's own answer) and passes it in Env.
package risk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Level is how bad a command is.
type Level string

const (
	// Safe: nothing in the command is in the destructive command table.
	Safe Level = "safe"
	// Destructive: the command deletes or overwrites something and cannot be undone, but
	// nothing the gate protects. Asked about in standard mode.
	Destructive Level = "destructive"
	// Catastrophic: the command destroys /, a system location, a home directory, the user's
	// credentials or a disk, or cannot be read at all. Denied in every mode.
	Catastrophic Level = "catastrophic"
)

// rank orders the levels so the worst finding wins.
func (l Level) rank() int {
	switch l {
	case Catastrophic:
		return 2
	case Destructive:
		return 1
	}
	return 0
}

// Env is what the gate needs to know about the host.
type Env struct {
	// Home is the user's home directory: HOME when it is set, otherwise the platform's own
	// answer (os.UserHomeDir, then the passwd entry), resolved by the adapter. Empty means no
	// home could be found; ~ and $HOME are still recognised as "the home directory".
	Home string
	// Cwd is the directory the command starts in: the shell call's working directory (the
	// workspace root, or the call's workdir inside it), absolute. Relative paths, `..`, $PWD
	// and pwd resolve against it (`rm -rf ../*` from ~/proj is `rm -rf ~/*`). Empty means
	// unknown: relative paths are then ordinary until the text's own cd.
	Cwd string
	// Zuno lists Zuno's own directories (its data directory: the auth file, the event log,
	// artifacts), resolved by the caller. Each, everything in it and every directory above it
	// is protected like a credential store (docs/risk.md, "Protected locations").
	Zuno []string
}

// Verdict is the gate's reading of one command text.
type Verdict struct {
	Level Level `json:"level"`
	// Reason is one sentence a person or a model can act on.
	Reason string `json:"reason"`
	// Program is the program of the worst finding ("rm", "dd", "mkfs.ext4"), after the
	// wrappers (sudo, env, xargs, bash -c …) were looked through.
	Program string `json:"program,omitempty"`
	// Target is the location the worst finding acts on, as resolved ("/", "~/.ssh").
	Target string `json:"target,omitempty"`
}

// Assess reads command as bash will and returns the worst thing it can do. It never panics
// and returns the same verdict for the same input.
func Assess(command string, env Env) Verdict {
	a := newAssessor(env)
	switch {
	case len(command) > maxCommand:
		a.note(Catastrophic, "", "", "the command is longer than 1 MiB, more than the gate reads; split it into smaller commands")
	case strings.ContainsRune(command, 0):
		// No process argument can carry a NUL, and the gate's own markers start with one.
		a.note(Catastrophic, "", "", "the command contains a NUL byte, which no shell command can carry; remove it")
	default:
		a.text(command, 0)
	}
	return a.worst
}

// maxCommand bounds the text the gate reads.
const maxCommand = 1 << 20

// maxDepth bounds the nesting of shell text inside shell text (bash -c, eval, sh <<<, …).
// Text nested deeper is refused rather than read half-way.
const maxDepth = 4

// maxTexts bounds how many nested texts one command may make the gate parse.
const maxTexts = 64

type assessor struct {
	home            string               // env.Home, or homeSentinel when it is unknown
	zuno            []string             // env.Zuno, clean and absolute
	vars            map[string][]reading // values a variable was statically assigned, in text order
	cwd             *reading             // the directory of the last static cd, nil when unknown
	feeds           map[*syntax.Stmt][]string
	texts           int
	substs          int                           // command substitutions being evaluated, one inside another
	funcs           map[string]*syntax.Stmt       // the functions the text defines, by name
	calls           int                           // function calls followed so far
	inCall          int                           // function calls being followed, one inside another
	procs           map[*syntax.ProcSubst]string  // the name of each <(…) read so far
	aliases         map[string]string             // the aliases the text defines, by name
	arrays          map[string][]arg              // the elements of the arrays the text assigns, by name
	links           []link                        // the symbolic links the text creates
	oldCwd          *reading                      // the directory before the last static cd ($OLDPWD, ~-)
	defaultIFS      bool                          // split at blanks whatever the text assigned to IFS
	procOut         map[string][]string           // what each <(…) prints, by name
	onCall          func(name string, argv []arg) // Calls: told of every program invocation
	onRedirect      func(w *syntax.Word)          // PathsNamed: told of every file redirection
	markUnknown     bool                          // PathsNamed: a variable the text does not set reads as unknownMark
	lang            string                        // the language of the code being read (interpreters.go)
	netted          bool                          // reading an unknown program's arguments as a command (unknownWrapper)
	shellStdin      []string                      // standard input `exec < FILE` gave the commands after it (inputs.go)
	requireForceOff bool                          // `git config clean.requireForce false` in the text
	worst           Verdict
}

// homeSentinel stands for the home directory when Env.Home is empty: it is absolute, matches
// no real path, and the classifier knows it is the home directory.
const homeSentinel = "/\x00home"

func newAssessor(env Env) *assessor {
	a := &assessor{home: cleanHome(env.Home), vars: map[string][]reading{},
		feeds: map[*syntax.Stmt][]string{}, funcs: map[string]*syntax.Stmt{},
		procs: map[*syntax.ProcSubst]string{}, aliases: map[string]string{}, procOut: map[string][]string{}, arrays: map[string][]arg{}}
	if d, ok := absolute(env.Cwd); ok {
		a.cwd = &reading{text: d, exact: true}
	}
	for _, z := range env.Zuno {
		if d, ok := absolute(z); ok && d != "/" {
			a.zuno = append(a.zuno, d)
		}
	}
	a.worst = Verdict{Level: Safe, Reason: "no command in the destructive command table"}
	return a
}

// absolute cleans a directory the caller passed (a POSIX or a Windows path); ok is false for
// an empty or relative one, which the gate cannot place.
func absolute(d string) (string, bool) {
	if w, ok := windowsPath(d); ok {
		return cleanPath(w), true
	}
	if !strings.HasPrefix(d, "/") || strings.ContainsAny(d, "\x00\x01") {
		return "", false
	}
	return cleanPath(d), true
}

func cleanHome(h string) string {
	if w, ok := windowsPath(h); ok {
		return cleanPath(w)
	}
	if h == "" || !strings.HasPrefix(h, "/") {
		return homeSentinel
	}
	return cleanPath(h)
}

// note records a finding; the first finding of the worst level wins, so the verdict is
// deterministic.
func (a *assessor) note(level Level, program, target, reason string) {
	if level.rank() > a.worst.Level.rank() {
		a.worst = Verdict{Level: level, Program: program, Target: a.display(target), Reason: reason}
	}
}

// display shows a path with the sentinels for unknown home directories written as ~ and
// ~NAME, and unknown parts as "…".
func (a *assessor) display(p string) string {
	p = strings.ReplaceAll(p, otherHome, "~")
	p = strings.ReplaceAll(p, winPrefix+"unc/", "//")
	p = strings.ReplaceAll(p, winPrefix+"device/", "//./")
	p = strings.ReplaceAll(p, winPrefix, "")
	p = strings.ReplaceAll(p, homeSentinel, "~")
	p = strings.ReplaceAll(p, "\x02", "")
	p = strings.ReplaceAll(p, allMark, "*")
	return strings.ReplaceAll(p, unknownMark, "…")
}

// text parses one shell text and walks it. depth is the nesting level (0 for the command
// itself). Text that does not parse is refused: bash runs a script statement by statement,
// so a prefix can run before the syntax error stops it, and the gate cannot vouch for text it
// cannot read.
func (a *assessor) text(src string, depth int) {
	if depth > maxDepth {
		a.note(Catastrophic, "", "", "shell text is nested more than 4 levels deep (bash -c, eval, …); the gate refuses what it cannot read — run the inner command directly")
		return
	}
	if a.texts++; a.texts > maxTexts {
		a.note(Catastrophic, "", "", "the command nests too many shell texts for the gate to read; split it into plain commands")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.note(Catastrophic, "", "", "the risk gate cannot read this command as bash ("+firstLine(err.Error())+"); fix the syntax or split it into plain commands")
		return
	}
	a.file(f, depth)
}

// file reads a parsed text: its functions first, then its statements in order.
func (a *assessor) file(f *syntax.File, depth int) {
	a.collectFuncs(f)
	a.walk(f, depth)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Exceeds reports whether l is worse than o (catastrophic over destructive over safe).
func (l Level) Exceeds(o Level) bool { return l.rank() > o.rank() }
