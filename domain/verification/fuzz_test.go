package verification_test

import (
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/zuno-run/zuno/domain/verification"
)

// FuzzAnalyze reads arbitrary shell text: the analysis never panics, answers the same twice,
// and never calls authoritative a text it could not read or one holding a construct the seeds
// say hides a failure (checked here on the syntax tree independently of the analyser).
func FuzzAnalyze(f *testing.F) {
	for _, r := range table {
		f.Add(r.cmd)
	}
	for _, s := range []string{"a | b || c", "f() { a || :; }; f", "select x in a; do b; done", "x=$((1+2)); [[ $x ]]",
		"cat <<-EOF\n\t$(a)\nEOF", "a &> /dev/null; b |& c", "bash -c \"$(cat)\"", "coproc { a; }", "$'a\\tb'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, p := range []verification.Policy{verification.Pipefail, verification.All, verification.Last} {
			an := verification.Analyze(cmd, p, "bash")
			if again := verification.Analyze(cmd, p, "bash"); !reflect.DeepEqual(an, again) {
				t.Fatalf("two answers for %q", cmd)
			}
			if !an.Authoritative {
				continue
			}
			if p == verification.Last {
				t.Fatalf("%q authoritative under last", cmd)
			}
			if verification.Analyze(cmd, p, "dash").Authoritative || verification.Analyze(cmd, p, "sh").Authoritative {
				t.Fatalf("%q authoritative under an interpreter not known to support pipefail", cmd)
			}
			if why := hides(cmd); why != "" {
				t.Fatalf("%q called authoritative under %s but it holds %s", cmd, p, why)
			}
		}
		verification.Analyze(cmd, verification.All, "pwsh")
	})
}

// hides names a construct in cmd that the seeds say keeps a claim from being authoritative,
// or "" when there is none (or the text does not parse, which is itself a finding).
func hides(cmd string) string {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "text bash cannot parse"
	}
	why := ""
	syntax.Walk(file, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			why = "a substitution"
		case *syntax.WhileClause:
			why = "a while/until condition"
		case *syntax.CoprocClause, *syntax.TestDecl:
			why = "a construct the analysis does not judge"
		case *syntax.Stmt:
			if x.Background {
				why = "a background command"
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.OrStmt && !endsInExitOrFalse(x.Y) {
				why = "a || fallback"
			}
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				if w := x.Args[0].Lit(); w == "eval" && len(x.Args) > 1 && x.Args[1].Lit() == "" {
					// eval of quoted text is read; eval of an expansion is not
					if _, ok := x.Args[1].Parts[0].(*syntax.ParamExp); ok {
						why = "eval of an expansion"
					}
				} else if w == "trap" || w == "source" || w == "." {
					why = w
				}
			}
		}
		return why == ""
	})
	return why
}

func endsInExitOrFalse(s *syntax.Stmt) bool {
	switch x := s.Cmd.(type) {
	case *syntax.Block:
		return len(x.Stmts) > 0 && endsInExitOrFalse(x.Stmts[len(x.Stmts)-1])
	case *syntax.Subshell:
		return len(x.Stmts) > 0 && endsInExitOrFalse(x.Stmts[len(x.Stmts)-1])
	case *syntax.CallExpr:
		if len(x.Args) == 0 {
			return false
		}
		switch x.Args[0].Lit() {
		case "false", "exit", "return":
			return !s.Negated
		}
	}
	return false
}
