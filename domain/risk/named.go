package risk

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Paths a command names, for the permission gate's external_directory check (docs/permissions.md,
// "Shell commands outside the workspace"). The line it draws: an argument is a path when,
// as the gate reads it (quotes removed, ~, $HOME, $PWD and the text's own variables
// expanded, relative to the directory the text's own cd left), it is absolute or starts
// with ~, ./ or ../, or holds a slash, or is . or ..; so is the file of every redirection.
// Arguments of the form --opt=PATH are read after the =. The program a command runs (its
// first word) is not: running /usr/bin/python3 reads nothing the user keeps. An argument
// whose start the text alone cannot tell ("$DIR/x", "$(pwd)/x") is undecided. A bare word
// (`cat notes`) is relative to where the command runs; a bare expansion (`echo $X`,
// `echo "$(date)"`) is not taken for a path: what a program makes of an argument the text
// does not spell is beyond reading.

// Named is what a command names: Paths resolved (absolute, clean), Undecided the arguments
// that may be paths the text does not spell, as written.
type Named struct {
	Paths     []string
	Undecided []string
}

// PathsNamed returns the paths command names, read as Assess reads it (wrappers, nested
// shells, functions and variables looked through). ok is false when the text is not bash the
// parser can read: the caller must not treat it as naming nothing.
func PathsNamed(command string, env Env) (n Named, ok bool) {
	if len(command) > maxCommand || strings.ContainsRune(command, 0) {
		return Named{}, false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Named{}, false
	}
	a := newAssessor(env)
	a.markUnknown = true
	c := &namer{a: a, seenPath: map[string]bool{}, seenWord: map[string]bool{}}
	if a.cwd != nil {
		c.cwd = a.cwd.text
	}
	a.onCall = func(_ string, argv []arg) {
		c.seeCwd()
		for _, g := range argv[1:] {
			for _, r := range g {
				c.argument(r)
			}
		}
	}
	a.onRedirect = func(w *syntax.Word) {
		c.seeCwd()
		for _, g := range a.word(w) {
			for _, r := range g {
				c.add(r, true)
			}
		}
	}
	a.texts++ // as text would count it
	a.file(f, 0)
	slices.Sort(c.n.Paths)
	return c.n, true
}

// namer collects what one command names.
type namer struct {
	a                  *assessor
	n                  Named
	seenPath, seenWord map[string]bool
	cwd                string // the directory the last call ran in, as read
	lostCwd            bool   // a cd went where the text does not spell
}

// seeCwd names the directory a call runs in when the text moved there (cd, pushd, popd, a
// wrapper's -C or --chdir, cd with no directory to $HOME): what it reads by a bare name is
// read there.
func (c *namer) seeCwd() {
	switch cur := c.a.cwd; {
	case cur == nil:
		if !c.lostCwd {
			c.lostCwd = true
			c.undecided("…") // `cd "$(cat where)"; cat id_rsa`
		}
	case cur.text != c.cwd:
		c.cwd = cur.text
		c.add(*cur, true)
	}
}

// argument takes one argument's reading and the paths inside it: after the = of --opt=PATH
// or if=PATH, after the @ of curl's @FILE, after a short option glued to its value
// (-C.., -f/etc/shadow).
func (c *namer) argument(r reading) {
	c.add(r, false)
	t := r.text
	var parts []string
	if i := strings.IndexByte(t, '='); i > 0 {
		parts = append(parts, t[i+1:])
	}
	if len(t) > 2 && t[0] == '-' && t[1] != '-' {
		parts = append(parts, t[2:])
	}
	parts = append(parts, t)
	for _, p := range parts {
		if q, ok := strings.CutPrefix(p, "@"); ok {
			c.add(reading{text: q, exact: r.exact, glob: r.glob, unread: r.unread}, false)
		} else if p != t {
			c.add(reading{text: p, exact: r.exact, glob: r.glob, unread: r.unread}, false)
		}
	}
}

// add names one reading if it is taken for a path (see above).
func (c *namer) add(r reading, redirect bool) {
	t := c.expand(r.text)
	if !pathLike(t, redirect) || redirect && descriptor(t) {
		return
	}
	unknown := strings.Index(t, unknownMark)
	if unknown >= 0 || r.unread || !r.exact {
		c.partlyKnown(t, unknown)
		return
	}
	if r.glob && (hasDotDot(t) || dotPattern(t)) { // `cat */../../.bashrc`, `.*/x`: a pattern climbing out
		c.undecided(t)
		return
	}
	p, _, ok := c.a.target(reading{text: t, exact: true, glob: r.glob})
	switch {
	case !ok:
		c.undecided(t)
	case strings.ContainsRune(p, 0): // ~user, or ~ with no home known: somewhere in a home
		c.undecided(strings.NewReplacer(homeSentinel, "~", otherHome, "~").Replace(p))
	case !c.seenPath[p]:
		c.seenPath[p] = true
		c.n.Paths = append(c.n.Paths, p)
	}
}

// expand maps what the shell (or the kernel) would: ~ and ~/… after an = or a glued option,
// which the reading of the word left as written, to the home directory; /proc/self/root and
// /proc/self/cwd to the root and the directory the command is in.
func (c *namer) expand(t string) string {
	if t == "~" || strings.HasPrefix(t, "~/") {
		t = c.a.home + t[1:]
	}
	for _, self := range []string{"/proc/self/", "/proc/thread-self/"} {
		if rest, ok := strings.CutPrefix(t, self+"root"); ok && (rest == "" || rest[0] == '/') {
			t = "/" + rest
		}
		if rest, ok := strings.CutPrefix(t, self+"cwd"); ok && (rest == "" || rest[0] == '/') && c.a.cwd != nil {
			t = c.a.cwd.text + "/" + rest
		}
	}
	return t
}

// partlyKnown names a reading with a part the gate cannot know: the directory before that
// part when the rest stays below it ("/home/$WHO/x" is somewhere in /home), else the
// reading as undecided ("$(cat f)/x", "/tmp/$((1))/../../etc").
func (c *namer) partlyKnown(t string, unknown int) {
	known := t[:max(unknown, 0)]
	// Only an unknown part inside a segment stays below the known directory: a whole unknown
	// segment may be .. itself (`$PWD/${!x}/.bashrc`).
	if unknown > 0 && strings.HasPrefix(known, "/") && !strings.HasSuffix(known, "/") && !hasDotDot(t[unknown:]) {
		c.add(reading{text: known[:strings.LastIndex(known, "/")+1] + "x", exact: true}, false)
		return
	}
	w := strings.ReplaceAll(t, unknownMark, "…")
	if unknown < 0 { // a variable or output the gate cannot know, taken as empty: say where
		w = "…" + w
	}
	c.undecided(w)
}

func (c *namer) undecided(w string) {
	if !c.seenWord[w] {
		c.seenWord[w] = true
		c.n.Undecided = append(c.n.Undecided, w)
	}
}

// hasDotDot says whether a path climbs with a .. segment.
func hasDotDot(t string) bool {
	return t == ".." || strings.HasPrefix(t, "../") || strings.Contains(t, "/../") || strings.HasSuffix(t, "/..")
}

// dotPattern says whether a segment is a pattern that may match .. (`.*`, `.?`, `.[.]`:
// with dotglob off bash skips . and .., but sh and bash with globskipdots off do not).
func dotPattern(t string) bool {
	for seg := range strings.SplitSeq(t, "/") {
		if len(seg) > 1 && seg[0] == '.' && strings.ContainsAny(seg[1:2], "*?[") {
			return true
		}
	}
	return false
}

// descriptor says whether a redirection's word names a descriptor (`>&2`, `<&-`), not a file.
func descriptor(t string) bool {
	if t == "-" {
		return true
	}
	for _, r := range t {
		if r < '0' || r > '9' {
			return false
		}
	}
	return t != ""
}

// pathLike says whether an argument's reading is taken for a path (see above). A
// redirection's file always is, unless it is a descriptor (`>&2`).
func pathLike(t string, redirect bool) bool {
	if t == "" {
		return false
	}
	if redirect {
		return true
	}
	if strings.HasPrefix(t, unknownMark) {
		return strings.HasPrefix(strings.TrimLeft(t, unknownMark), "/") // "$DIR/x"
	}
	return t == "." || t == ".." || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") ||
		strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") || strings.Contains(t, "/")
}

// namesFile says whether a redirection's word is a file (not a descriptor, a here-document
// or a here-string).
func namesFile(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrInOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob,
		syntax.AppClob, syntax.RdrAllClob, syntax.AppAllClob, syntax.DplOut, syntax.DplIn: // `>& FILE` writes a file; `>&2` is a descriptor (descriptor)
		return true
	}
	return false
}
