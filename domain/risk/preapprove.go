package risk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Preapproves reports whether an allow rule with pattern, which matched command, pre-approves
// the command's destructive verdict v, so a headless run may run it without asking
// (docs/risk.md, "Pre-approval by a rule"). The seed's standard mode "applies the configured
// rules and the ordinary risk gate"; a rule pre-approves only what it names:
//
//   - the verdict is destructive: a catastrophic command is refused before any rule is read,
//     and a safe one needs no approval;
//   - the command is plain: one simple command whose every word is literal text (no ;, &&, |,
//     substitution, expansion, quoting, escape, redirection or assignment), so the words the
//     pattern's wildcard covers are read as written and nothing runs beside it;
//   - the pattern's first word is literal (no *) and is the command's program, the program of
//     the destructive finding: a bare `*`, `r*` or `*rm*` names no command, and `sudo *`, `env
//     *` or `xargs *` name a wrapper, not what it runs.
func Preapproves(pattern, command string, v Verdict) bool {
	if v.Level != Destructive {
		return false
	}
	words, ok := plainWords(command)
	if !ok {
		return false
	}
	named, _, _ := strings.Cut(strings.TrimLeft(pattern, " \t"), " ")
	program, _, _ := strings.Cut(v.Program, " ")
	return named != "" && !strings.Contains(named, "*") && named == words[0] && program == words[0]
}

// plainWords returns the words of a command that is one simple command of literal words.
func plainWords(command string) ([]string, bool) {
	if len(command) > maxCommand || strings.ContainsAny(command, "\x00\n\r") {
		return nil, false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil, false
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		lit := w.Lit()
		// Lit is "" for a word of more than one part (quotes, expansions). A backslash, a
		// brace or a tilde is expanded by bash, so the text would not be what runs.
		if lit == "" || len(w.Parts) != 1 || strings.ContainsAny(lit, "\\{}~") {
			return nil, false
		}
		words = append(words, lit)
	}
	return words, true
}

// Plain reports whether command is one simple command of literal words, the only kind an
// allow rule can pre-approve (Preapproves).
func Plain(command string) bool {
	_, ok := plainWords(command)
	return ok
}
