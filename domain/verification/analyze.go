package verification

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/zuno-run/zuno/domain/risk"
)

// analyzer walks one command text (and the texts nested in it) collecting limitations.
type analyzer struct {
	policy Policy
	lims   []Limitation
	seen   map[string]bool
	src    string // the text being walked, for excerpts
	fam    family // the interpreter of the text being walked
	depth  int    // 0 for the command, 1 inside bash -o pipefail -c '…', …
	texts  int
}

// ctx is where a statement stands.
type ctx struct {
	// final: the statement's status is the status of the text it is in.
	final bool
	// errexit: under all, a failure here ends the run (false in a condition, on the left of
	// && or ||, under !).
	errexit bool
	// cond: the statement is a condition (if, while, the left of && or ||).
	cond bool
}

// condCtx is the context of a condition inside c.
func condCtx() ctx { return ctx{cond: true} }

// maxDepth bounds shell text nested in shell text; maxTexts the texts one command may make the
// analysis parse. Past either the claim is derived: the rest is not read.
const (
	maxDepth = 4
	maxTexts = 64
)

// text parses src as fam reads it and walks it in c.
func (a *analyzer) text(src string, fam family, depth int) {
	if depth > maxDepth || a.texts >= maxTexts {
		a.add(ConstructUnreadText, src, "shell text nested this deep is not read, so its claim is unknown",
			"run the inner command directly")
		return
	}
	a.texts++
	f, err := syntax.NewParser(syntax.Variant(language(fam))).Parse(strings.NewReader(src), "")
	if err != nil {
		a.add(ConstructUnreadable, firstLine(err.Error()), "the command text cannot be read as the interpreter reads it; "+
			"the shell may run part of it before stopping", "fix the command's syntax")
		return
	}
	prevSrc, prevFam, prevDepth := a.src, a.fam, a.depth
	a.src, a.fam, a.depth = src, fam, depth
	defer func() { a.src, a.fam, a.depth = prevSrc, prevFam, prevDepth }()
	a.nodes(f)
	a.list(f.Stmts, ctx{final: true, errexit: a.policy == All})
}

func language(fam family) syntax.LangVariant {
	// ksh93 reads (( )), [[ ]] and <( ) as bash does; mvdan's Korn variant is mksh, which
	// does not, so ksh is read as bash.
	switch fam {
	case zshShell:
		return syntax.LangZsh
	case unknownShell:
		return syntax.LangPOSIX
	}
	return syntax.LangBash
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// nodes finds what the structural walk does not judge: substitutions, whose commands' exit
// statuses never reach the code, and any node type the analysis does not know, which is
// never called authoritative.
func (a *analyzer) nodes(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n.(type) {
		case nil:
		case *syntax.CmdSubst, *syntax.ProcSubst:
			a.add(ConstructSubstitution, a.snip(n), "the exit status of a command inside $(…) or <(…) never reaches the exit code",
				"run that command as its own statement and pass its output through a file")
		case *syntax.File, *syntax.Comment, *syntax.Stmt, *syntax.Assign, *syntax.Redirect, *syntax.CallExpr,
			*syntax.Subshell, *syntax.Block, *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause,
			*syntax.WordIter, *syntax.CStyleLoop, *syntax.BinaryCmd, *syntax.FuncDecl, *syntax.Word,
			*syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted, *syntax.ParamExp, *syntax.ArithmExp,
			*syntax.ArithmCmd, *syntax.BinaryArithm, *syntax.BinaryTest, *syntax.UnaryArithm,
			*syntax.UnaryTest, *syntax.ParenArithm, *syntax.FlagsArithm, *syntax.ParenTest,
			*syntax.CaseClause, *syntax.CaseItem, *syntax.TestClause, *syntax.DeclClause,
			*syntax.ArrayExpr, *syntax.ArrayElem, *syntax.ExtGlob, *syntax.TimeClause,
			*syntax.CoprocClause, *syntax.LetClause, *syntax.BraceExp:
		default:
			a.add(ConstructUnknown, a.snip(n), "the command uses a construct the analysis does not read",
				"write the command without it")
		}
		return true
	})
}

// snip is the source text of a node of the text being walked.
func (a *analyzer) snip(n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || to > len(a.src) || from >= to {
		return ""
	}
	return a.src[from:to]
}

func (a *analyzer) list(stmts []*syntax.Stmt, c ctx) {
	for i, s := range stmts {
		sc := c
		sc.final = c.final && i == len(stmts)-1
		a.stmt(s, sc)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, c ctx) {
	if s == nil {
		return
	}
	if s.Negated && !c.cond {
		a.add(ConstructNegation, a.snip(s), "! turns a failure into success, so the exit code cannot show the failure",
			"drop the ! and let the command's own status stand")
	}
	if s.Negated {
		c.errexit = false
	}
	if s.Background {
		a.add(ConstructBackground, a.snip(s), "a command run with & in the background never reports its status to the exit code",
			"run it in the foreground, or as its own call with background: true and read its status with bg")
	}
	switch x := s.Cmd.(type) {
	case nil, *syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause, *syntax.DeclClause:
	case *syntax.CallExpr:
		a.call(x, s)
	case *syntax.BinaryCmd:
		a.binary(x, c)
	case *syntax.Subshell:
		a.list(x.Stmts, c)
	case *syntax.Block:
		a.list(x.Stmts, c)
	case *syntax.IfClause:
		a.ifClause(x, c)
	case *syntax.WhileClause:
		word := "while"
		if x.Until {
			word = "until"
		}
		a.add(ConstructCondition, word+" "+a.snipList(x.Cond), "a check written as a "+word+" condition ends the loop normally when it fails, exiting 0",
			"run the check as a statement of its own")
		a.list(x.Cond, condCtx())
		a.loop(x, x.Do, c)
	case *syntax.ForClause:
		a.loop(x, x.Do, c)
	case *syntax.CaseClause:
		for _, it := range x.Items {
			a.list(it.Stmts, c)
		}
	case *syntax.FuncDecl:
		// The body runs where the function is called; it is read as one of the statements
		// before the last.
		a.stmt(x.Body, ctx{errexit: a.policy == All})
	case *syntax.TimeClause:
		a.stmt(x.Stmt, c)
	case *syntax.CoprocClause:
		a.add(ConstructBackground, a.snip(s), "a coprocess runs in the background and never reports its status to the exit code",
			"run the command in the foreground")
	default:
		a.add(ConstructUnknown, a.snip(s), "the command uses a construct the analysis does not read", "write the command without it")
	}
}

func (a *analyzer) snipList(stmts []*syntax.Stmt) string {
	if len(stmts) == 0 {
		return ""
	}
	from, to := int(stmts[0].Pos().Offset()), int(stmts[len(stmts)-1].End().Offset())
	if from < 0 || to > len(a.src) || from >= to {
		return ""
	}
	return a.src[from:to]
}

// loop: a loop's status is its last iteration's. Under all a failing iteration stops the run
// (errexit reaches the body), unless the loop itself sits in a condition.
func (a *analyzer) loop(n syntax.Node, body []*syntax.Stmt, c ctx) {
	if !(a.policy == All && c.errexit) {
		a.add(ConstructLoop, firstLine(a.snip(n)), "a loop reports only its last iteration, so an earlier failing iteration is not in the exit code",
			"pass exitPolicy all so the first failing iteration stops the command, or end the failing step with || exit 1")
	}
	a.list(body, ctx{errexit: c.errexit, cond: c.cond})
}

func (a *analyzer) binary(x *syntax.BinaryCmd, c ctx) {
	switch x.Op {
	case syntax.AndStmt:
		if a.policy == All && c.errexit && !c.final {
			a.add(ConstructAndChain, a.snip(x), "under exitPolicy all a failure on the left of && before the last statement does not stop the run (set -e ignores it)",
				"split the chain into separate statements, or make it the last statement")
		}
		a.stmt(x.X, condCtx())
		a.stmt(x.Y, c)
	case syntax.OrStmt:
		if !alwaysFails(x.Y) {
			a.add(ConstructFallback, a.snip(x), "the fallback after || runs when the command fails and its status replaces the failure",
				"drop the fallback, or end it with exit 1 so the failure still reaches the exit code")
		}
		a.stmt(x.X, condCtx())
		a.stmt(x.Y, c)
	default: // | and |&: pipefail (or its absence, under last) decides
		a.stmt(x.X, c)
		a.stmt(x.Y, c)
	}
}

// ifClause: a check written as an if condition exits 0 when it fails, unless the branch its
// failure takes always fails (if ! check; then …; exit 1; fi, or else exit 1).
func (a *analyzer) ifClause(x *syntax.IfClause, c ctx) {
	if !failureFails(x) {
		a.add(ConstructCondition, "if "+a.snipList(x.Cond), "a check written as an if condition exits 0 when it fails",
			"run the check as a statement of its own, or end the branch its failure takes with exit 1")
	}
	a.list(x.Cond, condCtx())
	a.list(x.Then, c)
	if e := x.Else; e != nil {
		if len(e.Cond) == 0 {
			a.list(e.Then, c)
		} else {
			a.ifClause(e, c)
		}
	}
}

// failureFails reports whether the branch an if condition's failure takes always fails.
func failureFails(x *syntax.IfClause) bool {
	if len(x.Cond) == 0 {
		return false
	}
	if x.Cond[len(x.Cond)-1].Negated {
		return endsFailing(x.Then)
	}
	return x.Else != nil && len(x.Else.Cond) == 0 && endsFailing(x.Else.Then)
}

func endsFailing(stmts []*syntax.Stmt) bool {
	return len(stmts) > 0 && alwaysFails(stmts[len(stmts)-1])
}

// alwaysFails: false, exit/return with no status (the failure's own) or a non-zero literal,
// or a block or subshell that ends with one.
func alwaysFails(s *syntax.Stmt) bool {
	if s == nil || s.Negated || s.Background {
		return false
	}
	switch x := s.Cmd.(type) {
	case *syntax.Block:
		return endsFailing(x.Stmts)
	case *syntax.Subshell:
		return endsFailing(x.Stmts)
	case *syntax.CallExpr:
		if len(x.Assigns) > 0 || len(x.Args) == 0 {
			return false
		}
		name, ok := lit(x.Args[0])
		if !ok {
			return false
		}
		switch name {
		case "false":
			return len(x.Args) == 1
		case "exit", "return":
			if len(x.Args) == 1 {
				return true
			}
			v, ok := lit(x.Args[1])
			n, err := strconv.Atoi(v)
			return ok && len(x.Args) == 2 && err == nil && n%256 != 0
		}
	}
	return false
}

// lit is a word's value when the text alone decides it as one argument: literal text,
// quoted or not, with nothing bash would expand, split or glob.
func lit(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			v := x.Value
			if strings.ContainsAny(v, "\\*?{~") || (strings.Contains(v, "[") && strings.Contains(v, "]")) {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar && strings.Contains(x.Value, `\`) {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(l.Value, `\`) {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// words are a call's arguments with whether each is known statically.
func words(args []*syntax.Word) ([]string, []bool) {
	argv, exact := make([]string, len(args)), make([]bool, len(args))
	for i, w := range args {
		argv[i], exact[i] = lit(w)
	}
	return argv, exact
}

// call judges one simple command: the builtins that change the shell's options, eval and
// source, and shells started with text of their own, looked through wrappers (sudo, timeout,
// env, command …).
func (a *analyzer) call(x *syntax.CallExpr, s *syntax.Stmt) {
	if len(x.Args) == 0 {
		return
	}
	argv, exact := words(x.Args)
	i, ok := unwrap(argv, exact)
	if !ok {
		a.add(ConstructDynamicProgram, a.snip(s), "the program is named by an expansion, so the analysis cannot tell what runs",
			"name the program literally")
		return
	}
	if i >= len(argv) {
		return
	}
	argv, exact = argv[i:], exact[i:]
	switch name := risk.ProgramName(argv[0]); name {
	case "set":
		a.set(argv, exact, s)
	case "shopt":
		a.shopt(argv, exact, s)
	case "setopt", "unsetopt":
		a.zshOpt(name == "unsetopt", argv, exact, s)
	case "eval":
		if text, ok := joinExact(argv[1:], exact[1:]); ok {
			a.text(text, a.fam, a.depth+1)
		} else {
			a.add(ConstructUnreadText, a.snip(s), "eval runs text known only when it runs, which the analysis cannot read",
				"run the command directly instead of through eval")
		}
	case "source", ".":
		a.add(ConstructUnreadText, a.snip(s), "the sourced file runs under the command's options and may lower them; the analysis reads the command, not files",
			"run the checks directly, after the source statement, in a call of their own")
	case "trap":
		a.add(ConstructTrap, a.snip(s), "a trap can run commands that replace the exit status when the shell exits",
			"leave traps out of a command whose status is evidence")
	default:
		if isShell(name) {
			a.nestedShell(name, argv, exact, s)
		}
	}
}

// unwrap skips wrappers (sudo, timeout 5, nice …, env NAME=V, command): the index of the
// program that runs; false when a program word is not known statically.
func unwrap(argv []string, exact []bool) (int, bool) {
	i := 0
	for n := 0; n < 16 && i < len(argv); n++ {
		if !exact[i] {
			return i, false
		}
		if j, ok := risk.Unwrap(argv[i:], exact[i:]); ok {
			i += j
			continue
		}
		switch risk.ProgramName(argv[i]) {
		case "env":
			j := i + 1
			for j < len(argv) && exact[j] && (strings.HasPrefix(argv[j], "-") || strings.Contains(argv[j], "=")) {
				if argv[j] == "-u" || argv[j] == "-C" || argv[j] == "--unset" || argv[j] == "--chdir" {
					j++
				}
				j++
			}
			if j == i+1 && j >= len(argv) {
				return len(argv), true
			}
			i = j
			continue
		case "command":
			if i+1 < len(argv) && exact[i+1] && (argv[i+1] == "-v" || argv[i+1] == "-V") {
				return len(argv), true // prints what a name is; runs nothing
			}
			i++
			if i < len(argv) && exact[i] && argv[i] == "-p" {
				i++
			}
			continue
		}
		return i, true
	}
	return i, i >= len(argv) || exact[i]
}

func joinExact(argv []string, exact []bool) (string, bool) {
	for _, e := range exact {
		if !e {
			return "", false
		}
	}
	return strings.Join(argv, " "), true
}

var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "ksh93": true,
	"mksh": true, "ash": true, "yash": true, "posh": true, "pwsh": true, "powershell": true}

func isShell(name string) bool { return shells[name] }
