package verification

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The runtime sets pipefail (and errexit under all) before the command's first statement. The
// command's text can turn them off again, or start a shell of its own with other options.

// set reads `set` options: +e and +o errexit drop errexit, +o pipefail drops pipefail. An
// option word known only at run time may be either.
func (a *analyzer) set(argv []string, exact []bool, s *syntax.Stmt) {
	for k := 1; k < len(argv); k++ {
		if !exact[k] {
			a.add(ConstructUnreadText, a.snip(s), "set with an argument known only when it runs may turn off the options the exit policy set",
				"write set's options literally")
			return
		}
		t := argv[k]
		if t == "--" || t == "-" || len(t) < 2 || (t[0] != '-' && t[0] != '+') {
			return // the positional parameters follow
		}
		off := t[0] == '+'
		for _, l := range t[1:] {
			switch l {
			case 'e':
				a.option("errexit", off, s)
			case 'o':
				if k+1 < len(argv) {
					k++
					if !exact[k] {
						a.add(ConstructUnreadText, a.snip(s), "set -o with an option known only when it runs may turn off the options the exit policy set",
							"write set's options literally")
						return
					}
					a.option(argv[k], off, s)
				}
			}
		}
	}
}

// shopt -u -o NAME… (bash) turns set -o options off.
func (a *analyzer) shopt(argv []string, exact []bool, s *syntax.Stmt) {
	var unset, setO bool
	k := 1
	for ; k < len(argv) && exact[k] && strings.HasPrefix(argv[k], "-"); k++ {
		unset = unset || strings.ContainsRune(argv[k], 'u')
		setO = setO || strings.ContainsRune(argv[k], 'o')
	}
	if !unset || !setO {
		return
	}
	for ; k < len(argv); k++ {
		if !exact[k] {
			a.add(ConstructUnreadText, a.snip(s), "shopt with an option known only when it runs may turn off the options the exit policy set",
				"write the option literally")
			return
		}
		a.option(argv[k], true, s)
	}
}

// zshOpt: unsetopt NAME, setopt NO_NAME (zsh option names ignore case and underscores).
func (a *analyzer) zshOpt(unset bool, argv []string, exact []bool, s *syntax.Stmt) {
	for k := 1; k < len(argv); k++ {
		if !exact[k] {
			a.add(ConstructUnreadText, a.snip(s), "an option known only when it runs may turn off the options the exit policy set",
				"write the option literally")
			return
		}
		n := zshName(argv[k])
		switch {
		case unset:
			a.option(n, true, s)
		case strings.HasPrefix(n, "no"):
			a.option(n[2:], true, s)
		}
	}
}

func zshName(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "") }

// option records an option turned off after the preamble, when the policy had set it.
func (a *analyzer) option(name string, off bool, s *syntax.Stmt) {
	if !off {
		return
	}
	switch zshName(name) {
	case "errexit":
		if a.policy == All {
			a.add(ConstructErrexitOff, a.snip(s), "this turns off errexit, which exitPolicy all set before the command, so later failures no longer stop it",
				"remove it; use exitPolicy pipefail if the command is meant to continue past failures")
		}
	case "pipefail":
		if a.policy != Last {
			a.add(ConstructPipefailOff, a.snip(s), "this turns off pipefail, which the exit policy set before the command, so a failing pipeline stage no longer fails it",
				"remove it; pass exitPolicy last if a stage is meant to fail")
		}
	}
}

// nestedShell: `bash -c '…'` runs its text under its own options, not the policy's. With the
// options the policy needs (-o pipefail, and -e under all) on a shell known to support them,
// the text is read as part of the command; otherwise the claim is derived. A shell that reads
// its commands from standard input is not read; one running a script file reports the
// script's own status, like any program.
func (a *analyzer) nestedShell(name string, argv []string, exact []bool, s *syntax.Stmt) {
	var hasC, stdin, pipefail, errexit bool
	k := 1
	for ; k < len(argv); k++ {
		if !exact[k] {
			break
		}
		t := argv[k]
		if t == "--" || t == "-" {
			k++
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				k++
			}
			continue
		}
		if len(t) < 2 || (t[0] != '-' && t[0] != '+') {
			break
		}
		on := t[0] == '-'
		for _, l := range t[1:] {
			switch l {
			case 'c':
				hasC = true
			case 's':
				stdin = true
			case 'e':
				errexit = on
			case 'o', 'O':
				if k+1 < len(argv) {
					k++
					switch zshName(argv[k]) {
					case "pipefail":
						pipefail = on
					case "errexit":
						errexit = on
					}
				}
			}
		}
	}
	fam := familyOf(name)
	switch {
	case fam == powerShell:
		a.add(ConstructNestedShell, a.snip(s), name+" runs commands under PowerShell's own rules, which the analysis does not read here",
			"run the inner command directly")
	case hasC && k < len(argv) && !exact[k]:
		a.add(ConstructNestedShell, a.snip(s), name+" -c runs text known only when it runs", "run the inner command directly")
	case hasC && k < len(argv):
		a.inner(name, fam, argv[k], pipefail, errexit, s)
	case hasC:
	case stdin || k >= len(argv):
		a.add(ConstructNestedShell, a.snip(s), name+" reads its commands from standard input, which the analysis does not read",
			"run the inner command directly")
	}
}

// inner reads a nested shell's text when its options give the claim the policy makes.
func (a *analyzer) inner(name string, fam family, text string, pipefail, errexit bool, s *syntax.Stmt) {
	switch {
	case fam == unknownShell && a.policy != Last:
		a.add(ConstructNestedShell, a.snip(s), name+" -c runs its text under "+name+", not known to support pipefail, so a failing stage may not reach the exit code",
			"run the inner command directly, or under bash -o pipefail -c")
	case (a.policy != Last && !pipefail) || (a.policy == All && !errexit):
		need := "-o pipefail"
		if a.policy == All {
			need = "-e -o pipefail"
		}
		a.add(ConstructNestedShell, a.snip(s), name+" -c runs its text under its own options, without the exit policy's "+need,
			"run the inner command directly, or pass the options: "+name+" "+need+" -c '…'")
	default:
		a.text(text, fam, a.depth+1)
	}
}
