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
	seenPath, seenWord := map[string]bool{}, map[string]bool{}
	add := func(r reading, redirect bool) {
		t := r.text
		if k := strings.IndexByte(t, '='); k > 0 && strings.HasPrefix(t, "-") {
			t = t[k+1:] // --file=/etc/passwd
		}
		if !pathLike(t, redirect) {
			return
		}
		if i := strings.Index(t, unknownMark); i >= 0 || r.unread || !r.exact {
			if known := t[:max(i, 0)]; i > 0 && strings.HasPrefix(known, "/") && strings.Contains(known, "/") {
				t = known[:strings.LastIndex(known, "/")+1] + "x" // "/home/$USER/x": somewhere in /home
			} else {
				w := strings.ReplaceAll(t, unknownMark, "…")
				if i < 0 { // a variable or output the gate cannot know, taken as empty: say where
					w = "…" + w
				}
				if !seenWord[w] {
					seenWord[w] = true
					n.Undecided = append(n.Undecided, w)
				}
				return
			}
		}
		p, _, ok := a.target(reading{text: t, exact: true, glob: r.glob})
		if ok && strings.ContainsRune(p, 0) { // ~user, or ~ with no home known: somewhere in a home
			w := strings.NewReplacer(homeSentinel, "~", otherHome, "~").Replace(p)
			if !seenWord[w] {
				seenWord[w] = true
				n.Undecided = append(n.Undecided, w)
			}
			return
		}
		if ok && !seenPath[p] {
			seenPath[p] = true
			n.Paths = append(n.Paths, p)
		}
	}
	a.onCall = func(name string, argv []arg) {
		for _, g := range argv[1:] {
			for _, r := range g {
				add(r, false)
			}
		}
		if name == "cd" || name == "pushd" {
			a.changedDir(argv, add)
		}
	}
	a.onRedirect = func(w *syntax.Word) {
		for _, g := range a.word(w) {
			for _, r := range g {
				add(r, true)
			}
		}
	}
	a.texts++ // as text would count it
	a.file(f, 0)
	slices.Sort(n.Paths)
	return n, true
}

// changedDir names where a cd with no directory goes (the home directory, which `cd; cat
// notes` then reads from) and takes `cd -` (the directory before) as undecided: neither
// spells a path.
func (a *assessor) changedDir(argv []arg, add func(reading, bool)) {
	var ops []string
	for _, g := range argv[1:] {
		if t, ok := g.exact(); !ok || !strings.HasPrefix(t, "-") || t == "-" {
			ops = append(ops, t)
		}
	}
	switch {
	case len(ops) == 0:
		add(reading{text: a.home, exact: true}, true)
	case ops[0] == "-":
		add(reading{text: unknownMark + "/", exact: false}, true)
	}
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
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrInOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		return true
	}
	return false
}
