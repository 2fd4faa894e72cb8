// Package gitcheck is the pure half of the shell tool's git pre-flight (docs/shell-execution.md,
// "git pre-flight"): which invocations in a command are `git add` or `git commit`, which
// repository reads the pre-flight makes before it lets the command run, and which of the
// paths those invocations would deliver are generated artifacts the call refuses to deliver.
// The command is read through the risk gate's syntax-tree reading (risk.Calls), never by
// string matching: `echo 'git add .'` runs no git. The reads themselves, under one budget,
// are the adapter's (adapters/tools/preflight).
package gitcheck

import (
	"path"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain/risk"
)

// Invocation is one `git add` or `git commit` of the command.
type Invocation struct {
	// Sub is "add" or "commit".
	Sub string
	// Dir is where git runs, relative to the call's working directory ("" for it): the
	// -C options joined. DirUnknown: a -C the text cannot decide.
	Dir        string
	DirUnknown bool
	// Whole: the invocation takes every change it is shown (add -A/--all/-u or the pathspec
	// "."; commit -a/--all). Tracked: it takes tracked files only (add -u, commit -a).
	Whole   bool
	Tracked bool
	// Pathspecs are the literal pathspecs, relative to Dir. AnyPath: a pathspec the text
	// cannot decide (an expansion, a glob, a magic pathspec): it is taken to match every path.
	Pathspecs []string
	AnyPath   bool
	// DryRun: add -n / commit --dry-run deliver nothing.
	DryRun bool
}

// Find returns the git add and git commit invocations of command. ok is false when the
// command cannot be read as bash; the caller then refuses rather than guess.
func Find(command string) (invs []Invocation, ok bool) {
	calls, ok := risk.Calls(command)
	if !ok {
		return nil, false
	}
	for _, c := range calls {
		if c.Program != "git" {
			continue
		}
		// The gate reads a function's body where it is defined and again where it is called:
		// one invocation, met twice.
		if inv, found := parse(c.Args); found && !slices.ContainsFunc(invs, inv.equal) {
			invs = append(invs, inv)
		}
	}
	return invs, true
}

func (inv Invocation) equal(o Invocation) bool {
	return inv.Sub == o.Sub && inv.Dir == o.Dir && inv.DirUnknown == o.DirUnknown && inv.Whole == o.Whole &&
		inv.Tracked == o.Tracked && inv.AnyPath == o.AnyPath && inv.DryRun == o.DryRun && slices.Equal(inv.Pathspecs, o.Pathspecs)
}

// gitValueOptions are git's global options that take the next argument as their value.
var gitValueOptions = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--exec-path": true, "--config-env": true, "--super-prefix": true, "--attr-source": true}

// parse reads git's global options, then the subcommand and its arguments.
func parse(args []risk.Arg) (Invocation, bool) {
	var inv Invocation
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.Exact {
			return inv, false // the subcommand itself is unknown: not known to be add or commit
		}
		if !strings.HasPrefix(a.Text, "-") {
			break
		}
		name, _, attached := strings.Cut(a.Text, "=")
		if !gitValueOptions[name] || attached {
			continue
		}
		i++
		if name == "-C" {
			inv.chdir(args, i)
		}
	}
	if i >= len(args) {
		return inv, false
	}
	inv.Sub = args[i].Text
	switch inv.Sub {
	case "add":
		inv.addArgs(args[i+1:])
	case "commit":
		inv.commitArgs(args[i+1:])
	default:
		return inv, false
	}
	return inv, true
}

func (inv *Invocation) chdir(args []risk.Arg, i int) {
	if i >= len(args) || !args[i].Exact {
		inv.DirUnknown = true
		return
	}
	if d := args[i].Text; path.IsAbs(d) || inv.Dir == "" {
		inv.Dir = d
	} else {
		inv.Dir = path.Join(inv.Dir, d)
	}
}

// addArgs: git add [options] [--] [<pathspec>…].
func (inv *Invocation) addArgs(args []risk.Arg) {
	operands := inv.options(args, "", map[string]func(){
		"-A": inv.whole, "--all": inv.whole, "--no-ignore-removal": inv.whole,
		"-u": inv.tracked, "--update": inv.tracked,
		"-n": inv.dryRun, "--dry-run": inv.dryRun,
	}, "--chmod", "--pathspec-from-file")
	inv.pathspecs(operands)
}

// commitArgs: git commit [options] [--] [<pathspec>…]; -m, -F, -C, -c, … take values.
func (inv *Invocation) commitArgs(args []risk.Arg) {
	operands := inv.options(args, "mFCctS", map[string]func(){
		"-a": inv.trackedWhole, "--all": inv.trackedWhole, "--dry-run": inv.dryRun,
	}, "--message", "--file", "--reuse-message", "--reedit-message", "--fixup", "--squash",
		"--author", "--date", "--template", "--cleanup", "--trailer", "--pathspec-from-file")
	inv.pathspecs(operands)
}

func (inv *Invocation) whole()        { inv.Whole = true }
func (inv *Invocation) tracked()      { inv.Whole, inv.Tracked = true, true }
func (inv *Invocation) trackedWhole() { inv.Whole, inv.Tracked = true, true }
func (inv *Invocation) dryRun()       { inv.DryRun = true }

// options applies the flags it knows and returns the operands. shortVal are the short
// options that take a value; longVal the long ones (unless written --name=value). An
// argument the text cannot decide is an operand of unknown meaning.
func (inv *Invocation) options(args []risk.Arg, shortVal string, flags map[string]func(), longVal ...string) []risk.Arg {
	var operands []risk.Arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.Exact || a.Text == "-" || !strings.HasPrefix(a.Text, "-"):
			operands = append(operands, a)
		case a.Text == "--":
			return append(operands, args[i+1:]...)
		case strings.HasPrefix(a.Text, "--"):
			name, _, attached := strings.Cut(a.Text, "=")
			if name == "--pathspec-from-file" {
				inv.AnyPath = true
			}
			if f, ok := flags[name]; ok {
				f()
			} else if !attached && slices.Contains(longVal, name) {
				i++
			}
		default:
			for j := 1; j < len(a.Text); j++ {
				if f, ok := flags["-"+a.Text[j:j+1]]; ok {
					f()
				}
				if strings.IndexByte(shortVal, a.Text[j]) >= 0 {
					if j == len(a.Text)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return operands
}

func (inv *Invocation) pathspecs(operands []risk.Arg) {
	for _, a := range operands {
		switch {
		case !a.Exact || strings.ContainsAny(a.Text, "*?[") || strings.HasPrefix(a.Text, ":"):
			inv.AnyPath = true
		default:
			inv.Pathspecs = append(inv.Pathspecs, path.Clean(a.Text))
		}
	}
}
