package risk

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// walk visits every statement of a parsed text in source order: lists, pipelines, subshells,
// blocks, conditions, loops, function bodies (whether or not the function is called), and
// the commands inside command and process substitutions and here-documents. Assignments and
// cd are remembered in text order, without following branches (docs/risk.md, "Limits").
func (a *assessor) walk(node syntax.Node, depth int) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			a.inSubshell(n.Stmts, depth)
			return false
		case *syntax.Subshell:
			a.inSubshell(n.Stmts, depth)
			return false
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				a.pipe(n)
			}
		case *syntax.Stmt:
			a.stmt(n, depth)
		case *syntax.FuncDecl:
			a.forkBomb(n)
		case *syntax.DeclClause:
			nameref := declaresNameref(n)
			for _, as := range n.Args {
				if nameref && as.Name != nil {
					// declare -n r=HOME: "$r" is HOME's value, which the gate does not follow.
					a.assign(as.Name.Value, []reading{{text: unknownMark, unread: true}})
					continue
				}
				a.assignNode(as)
			}
		case *syntax.ForClause:
			if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil {
				var rs []reading
				for _, w := range wi.Items {
					for _, g := range a.word(w) {
						rs = append(rs, g...)
					}
				}
				a.assign(wi.Name.Value, a.capReadings(rs))
			}
		}
		return true
	})
}

// inSubshell walks statements that run in a subshell (`$(…)`, `(…)`): a cd there does not
// move the commands after it.
func (a *assessor) inSubshell(stmts []*syntax.Stmt, depth int) {
	cwd, old := a.cwd, a.oldCwd
	for _, s := range stmts {
		a.walk(s, depth)
	}
	a.cwd, a.oldCwd = cwd, old
}

// collectFuncs remembers the functions a text defines, so a call can be followed with its
// arguments (`f() { rm -rf "$1"; }; f /`).
func (a *assessor) collectFuncs(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil && fd.Body != nil {
			a.funcs[fd.Name.Value] = fd.Body
		}
		return true
	})
}

// maxCalls bounds the function calls followed for one command; past it the command is
// refused, since an unfollowed call could hide its target. maxNested bounds recursion: a
// function's body was read where it was defined, and again for each outer call.
const (
	maxCalls  = 64
	maxNested = 2
)

// call follows a call of a function the text defines: its body is read again with the
// call's arguments as $1, $2, … and $@.
func (a *assessor) call(body *syntax.Stmt, args []arg, depth int) {
	if a.inCall >= maxNested {
		return
	}
	if a.calls++; a.calls > maxCalls {
		a.note(Catastrophic, "", "", "the command calls its functions more often than the gate follows; it refuses what it cannot read — split it into plain commands")
		return
	}
	a.positional(args)
	a.inCall++
	a.walk(body, depth)
	a.inCall--
}

// positional records the arguments a function or a shell -c text receives as $1, $2, …, $@
// and $*; every argument is a possible value of $@.
func (a *assessor) positional(args []arg) {
	var all []reading
	for k, g := range args {
		a.assign(strconv.Itoa(k+1), g)
		all = append(all, g...)
	}
	if len(all) > 0 {
		a.assign("@", all)
		a.assign("*", all)
		// "$@" is one argument per positional parameter, as "${x[@]}" is per element:
		// `set -- rm -rf ~; "$@"` runs rm.
		a.arrays["@"] = append([]arg(nil), args...)
	}
}

func (a *assessor) assignNode(as *syntax.Assign) {
	if as == nil || as.Name == nil || as.Naked {
		return
	}
	if as.Array != nil {
		a.assignArray(as.Name.Value, as.Array, as.Append)
		return
	}
	if as.Index != nil && as.Value != nil { // x[i]=v: one more possible element
		rs := a.unsplit(as.Value)
		a.assign(as.Name.Value, rs)
		if old, ok := a.arrays[as.Name.Value]; ok {
			a.arrays[as.Name.Value] = append(append([]arg(nil), old...), arg(rs))
		}
		return
	}
	if as.Value == nil || as.Index != nil {
		a.assign(as.Name.Value, []reading{{text: ""}})
		return
	}
	rs := a.unsplit(as.Value)
	if as.Append {
		old, ok := a.value(as.Name.Value)
		if !ok {
			old = []reading{{text: ""}}
		}
		rs = a.capReadings(join(old, rs))
	}
	a.assign(as.Name.Value, rs)
}

// stmt assesses one statement: its writing redirections and, for a simple command, the
// command itself with what it reads on standard input.
func (a *assessor) stmt(s *syntax.Stmt, depth int) {
	for _, r := range s.Redirs {
		if writes(r.Op) && r.Word != nil {
			a.redirect(r)
		}
		if a.onRedirect != nil && r.Word != nil && namesFile(r.Op) {
			a.onRedirect(r.Word)
		}
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		a.inherit(s)
		return
	}
	for _, as := range call.Assigns {
		a.assignNode(as)
	}
	if len(call.Args) == 0 {
		return
	}
	argv, stdin := a.args(call.Args), a.stdin(s)
	a.execRedirects(argv, s)
	if _, set := a.vars["IFS"]; set {
		// The IFS assignment may be in a branch not taken: read the words with the blanks too.
		a.defaultIFS = true
		blanks := a.args(call.Args)
		a.defaultIFS = false
		if !slices.EqualFunc(argv, blanks, slices.Equal) {
			a.command(blanks, stdin, depth)
		}
	}
	a.command(argv, stdin, depth)
}

// inherit passes what a compound statement reads on standard input (`while read d; do …;
// done <<< ~`, `find … | while read f; …`) to the statements inside it, which share it.
func (a *assessor) inherit(s *syntax.Stmt) {
	texts := a.stdin(s)
	if len(texts) == 0 || s.Cmd == nil {
		return
	}
	syntax.Walk(s.Cmd, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.Stmt:
			for _, t := range texts {
				if !slices.Contains(a.feeds[n], t) {
					a.feeds[n] = append(a.feeds[n], t)
				}
			}
		}
		return true
	})
}

func (a *assessor) args(ws []*syntax.Word) []arg {
	var argv []arg
	for _, w := range ws {
		argv = append(argv, a.word(w)...)
	}
	return argv
}

func writes(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrInOut,
		syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob,
		syntax.DplOut: // `>& FILE` is `&> FILE` (`>&2` reads as a file named 2 here: ordinary)
		return true
	}
	return false
}

func truncates(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob, syntax.DplOut:
		return true
	}
	return false
}

// redirect judges a redirection that writes: to a disk it is catastrophic, writing into a
// credential file is catastrophic (emptied, the key is gone; appended to, a key is added), and
// truncating another protected file (/etc/hosts) is destructive.
func (a *assessor) redirect(r *syntax.Redirect) {
	for _, rd := range a.unsplit(r.Word) {
		p, _, ok := a.target(rd)
		if !ok {
			continue
		}
		switch c := a.classify(p); {
		case c == device:
			a.note(Catastrophic, ">", p, "the redirection writes over the disk "+a.display(p)+", destroying its file systems; refused in every permission mode")
		case writeRefused(c):
			// Emptied, a key is gone; appended to, a key is added (authorized_keys) or a line
			// runs at the next login (~/.bashrc), as code that writes there is refused too
			// (review 25c).
			a.note(Catastrophic, ">", p, "the redirection writes into "+a.display(p)+" ("+c.String()+"); refused in every permission mode")
		case c == zunoData:
			// The event log and the auth file are Zuno's to write: even an append corrupts them.
			a.note(Catastrophic, ">", p, "the redirection writes into "+a.display(p)+" (Zuno's own data: the event log, the auth file); refused in every permission mode")
		case truncates(r.Op) && c != none:
			a.note(Destructive, ">", p, "the redirection overwrites "+a.display(p)+" ("+c.String()+")")
		}
	}
}

// stdin returns the texts a statement statically reads on standard input: its here-string
// or here-document, or what an earlier pipeline stage prints (echo, printf, cat of a
// here-document). nil means nothing known; a piped statement with nothing known gets one
// unknown text.
func (a *assessor) stdin(s *syntax.Stmt) []string {
	var texts []string
	for _, r := range s.Redirs {
		var rs []reading
		switch {
		case r.Op == syntax.WordHdoc && r.Word != nil:
			rs = a.unsplit(r.Word)
		case (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil:
			rs = a.hereDoc(r)
		case (r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut || r.Op == syntax.DplIn) && r.Word != nil:
			texts = append(texts, a.inputFrom(r)...) // < <(echo …), < FILE, <&3
		}
		for _, rd := range rs {
			if rd.exact {
				texts = append(texts, rd.text)
			} else {
				texts = append(texts, unknownMark)
			}
		}
	}
	texts = append(texts, a.feeds[s]...)
	if len(texts) == 0 {
		return a.shellStdin // `exec < FILE` moved every later command's input
	}
	return texts
}

// hereDoc reads a here-document's body: verbatim when its delimiter is quoted (<<'EOF'),
// otherwise expanded like text in double quotes.
func (a *assessor) hereDoc(r *syntax.Redirect) []reading {
	// Word.Lit is "" when the delimiter has quoted parts; E\OF is quoted too.
	if r.Word != nil && (r.Word.Lit() == "" || strings.Contains(r.Word.Lit(), `\`)) {
		var b strings.Builder
		for _, p := range r.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				b.WriteString(l.Value)
			}
		}
		return []reading{{text: b.String(), exact: true}}
	}
	return a.parts(r.Hdoc.Parts, true)
}

// pipe passes what the left side of a pipeline statically prints to the right side.
func (a *assessor) pipe(b *syntax.BinaryCmd) {
	from, to := lastStage(b.X), firstStage(b.Y)
	if from == nil || to == nil {
		return
	}
	out := asData(a.prints(from))
	if out == nil {
		out = []string{unknownMark}
	}
	// A pipeline inside a command substitution is fed once when its output is read and again
	// by the walker: keep each text once.
	for _, t := range out {
		if !slices.Contains(a.feeds[to], t) {
			a.feeds[to] = append(a.feeds[to], t)
		}
	}
}

func lastStage(s *syntax.Stmt) *syntax.Stmt {
	for s != nil {
		b, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			return s
		}
		s = b.Y
	}
	return nil
}

func firstStage(s *syntax.Stmt) *syntax.Stmt {
	for s != nil {
		b, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			return s
		}
		s = b.X
	}
	return nil
}

// prints returns what echo, printf or cat (of its here-document) print, when it is static.
func (a *assessor) prints(s *syntax.Stmt) []string {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	argv := a.args(call.Args)
	if len(argv) == 0 { // every word expanded to nothing
		return nil
	}
	name, ok := argv[0].exact()
	if !ok {
		return nil
	}
	if progName(name) == "basename" && len(argv) > 1 {
		if _, known := argv[1].exact(); !known {
			// One name without a slash; rm refuses . and .., so it cannot climb.
			return []string{fragment}
		}
	}
	var words []string
	for k, g := range argv[1:] {
		t, ok := g.exact()
		if !ok {
			return nil
		}
		if g[0].glob && (progName(name) == "echo" || (progName(name) == "printf" && k > 0)) {
			// bash expands the pattern before echo prints it: every name it matches
			// (`echo ~/* | xargs rm -rf`).
			t = globAsAll(t)
		}
		words = append(words, t)
	}
	switch progName(name) {
	case "echo":
		for len(words) > 0 && (words[0] == "-n" || words[0] == "-e" || words[0] == "-E") {
			words = words[1:]
		}
		return []string{strings.Join(words, " ")}
	case "printf":
		if len(words) > 0 {
			words[0] = ansiC(words[0])
		}
		return []string{strings.Join(words, " ")}
	case "cat":
		if len(words) == 0 {
			return asData(a.stdin(s))
		}
		var out []string
		for _, w := range words { // cat <(echo …)
			if !strings.HasPrefix(w, procMark) {
				return nil
			}
			out = append(out, a.procOut[w]...)
		}
		return out
	}
	return a.produces(progName(name), words, s)
}

// forkBomb recognises a function that calls itself in a pipeline or in the background,
// `:(){ :|:& };:` and its renamings: it multiplies processes until the host stops.
func (a *assessor) forkBomb(fd *syntax.FuncDecl) {
	if fd.Name == nil || fd.Body == nil {
		return
	}
	name := fd.Name.Value
	selfCall, spawns := false, false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 && n.Args[0].Lit() == name {
				selfCall = true
			}
		case *syntax.BinaryCmd:
			spawns = spawns || n.Op == syntax.Pipe || n.Op == syntax.PipeAll
		case *syntax.Stmt:
			spawns = spawns || n.Background
		}
		return true
	})
	if selfCall && spawns {
		a.note(Catastrophic, name, "", "function "+name+" calls itself in a pipeline or in the background: a fork bomb exhausts the host's processes; refused in every permission mode")
	}
}

// declaresNameref reports a declare, local or typeset given -n: its names refer to other
// variables.
func declaresNameref(n *syntax.DeclClause) bool {
	for _, as := range n.Args {
		if !as.Naked || as.Value == nil {
			continue
		}
		if lit := as.Value.Lit(); strings.HasPrefix(lit, "-") && strings.Contains(lit, "n") {
			return true
		}
	}
	return false
}
