package gate

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// alwaysPattern is what an "always" answer to a shell command saves: the program and its
// subcommand ("git push *"), so the session stops asking about that kind of command. Only a
// single plain command has one: a list, a pipeline, a redirection, a substitution or any
// expansion is a one-off confirmation, because a pattern that matched its first words would
// also approve whatever follows them (docs/permissions.md, "Asking").
func alwaysPattern(command string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) != 1 {
		return ""
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return ""
	}
	var words []string
	for _, w := range call.Args {
		lit := w.Lit()
		if lit == "" || strings.ContainsAny(lit, "*?[]{}~$`\\\"'") {
			return ""
		}
		words = append(words, lit)
	}
	pattern := words[0]
	if len(words) > 1 && !strings.HasPrefix(words[1], "-") {
		pattern += " " + words[1]
	}
	return pattern + " *"
}
