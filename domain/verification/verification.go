// Package verification decides what a shell command's exit status proves. A pipeline's exit
// code is its last stage's, so `cargo test | tail -5` exits 0 when the tests fail; the exit
// policy (pipefail, all, last), the interpreter and the command's own text decide whether the
// code is evidence (authoritative) or only recorded (derived). The analysis reads the
// command's syntax tree with mvdan.cc/sh/v3, never its characters, so `echo 'a || true'`
// hides nothing. Nothing here changes what runs: only the claim made about it.
//
// The package also builds the verification receipt every shell result carries, and says
// which receipts may satisfy an evidence requirement (Evidence). It is pure: the execution
// facts come in as a plain struct (Facts), filled by the shell adapter. The rules and their
// deliberate limits are in docs/tools.md, "Exit policies and verification receipts".
package verification

import (
	"path"
	"strings"

	"github.com/zuno-run/zuno/events"
)

// Policy is the shell tool's exitPolicy.
type Policy string

const (
	// Pipefail (the default): any failing pipeline stage fails the command.
	Pipefail Policy = "pipefail"
	// All additionally stops at the first failing command of a sequence (errexit).
	All Policy = "all"
	// Last is the POSIX default: only a pipeline's last stage decides.
	Last Policy = "last"
)

// Authority is how far a receipt's exit code may be relied on.
type Authority string

const (
	// Authoritative: the exit code saw every failure its coverage names. Evidence.
	Authoritative Authority = "authoritative"
	// Derived: recorded, but the code may come from a part that did not see a failure.
	Derived Authority = "derived"
	// NoAuthority: there is no verdict of the command to rely on (never started, killed,
	// guard failure, unsettled).
	NoAuthority Authority = "none"
)

// Coverage is what an exit code covers.
type Coverage string

const (
	// EveryCommand: under all, the first failing command (or pipeline stage) ends the run.
	EveryCommand Coverage = "every_command"
	// LastStatement: under pipefail, every stage of the pipelines of the statement that
	// ran last; an earlier statement's failure is not in the code.
	LastStatement Coverage = "last_statement"
	// LastStage: under last, only the last stage of the last pipeline.
	LastStage Coverage = "last_stage"
	// NoCoverage: there is no exit code of the command.
	NoCoverage Coverage = "none"
)

// Limitation is one reason a claim is derived: the construct, where, what it does, the remedy.
type Limitation = events.VerificationLimitation

// Stable names of the constructs a limitation is about.
const (
	ConstructPolicyLast       = "exit_policy_last"
	ConstructInterpreter      = "interpreter"
	ConstructUnreadable       = "unreadable"
	ConstructUnknown          = "unknown_construct"
	ConstructFallback         = "fallback"
	ConstructErrexitOff       = "errexit_off"
	ConstructPipefailOff      = "pipefail_off"
	ConstructNestedShell      = "nested_shell"
	ConstructCondition        = "condition"
	ConstructLoop             = "loop"
	ConstructAndChain         = "and_chain"
	ConstructNegation         = "negation"
	ConstructBackground       = "background"
	ConstructSubstitution     = "substitution"
	ConstructUnreadText       = "unread_text"
	ConstructDynamicProgram   = "dynamic_program"
	ConstructTrap             = "trap"
	ConstructNativePipeline   = "native_pipeline"
	ConstructPowerShellUnread = "powershell_unread"
)

// Analysis is what the exit policy, the interpreter and the command text allow the exit code
// to claim.
type Analysis struct {
	Interpreter   string
	Policy        Policy
	Authoritative bool
	Coverage      Coverage
	Limitations   []Limitation
}

// family is what the analysis knows about an interpreter.
type family int

const (
	// unknownShell: not known to support pipefail (dash, plain sh, anything unnamed): derived.
	unknownShell family = iota
	bashShell
	kshShell
	zshShell
	powerShell
)

// InterpreterName is the name an interpreter path is judged by: its base name without .exe.
// The name is not resolved further: sh stays sh whatever it links to, since the name does not
// say what is behind it.
func InterpreterName(p string) string {
	n := path.Base(strings.ReplaceAll(p, `\`, "/"))
	if len(n) > 4 && strings.EqualFold(n[len(n)-4:], ".exe") {
		n = n[:len(n)-4]
	}
	if n == "." || n == "/" {
		return ""
	}
	return n
}

func familyOf(name string) family {
	switch strings.ToLower(name) {
	case "bash":
		return bashShell
	case "ksh", "ksh93":
		return kshShell
	case "zsh":
		return zshShell
	case "pwsh", "powershell":
		return powerShell
	}
	return unknownShell
}

// Analyze reads command as interpreter will under policy and says what its exit code may
// claim. It never panics, returns the same answer for the same input, and never calls a
// construct it does not understand authoritative.
func Analyze(command string, policy Policy, interpreter string) Analysis {
	name := InterpreterName(interpreter)
	a := &analyzer{policy: policy, seen: map[string]bool{}}
	fam := familyOf(name)
	base := a.base(policy, fam, name)
	switch {
	case fam == powerShell:
		a.powerShell(command)
	default:
		a.text(command, fam, 0)
	}
	return Analysis{Interpreter: name, Policy: policy, Authoritative: base && len(a.lims) == 0,
		Coverage: coverage(policy), Limitations: a.lims}
}

func coverage(p Policy) Coverage {
	switch p {
	case All:
		return EveryCommand
	case Last:
		return LastStage
	}
	return LastStatement
}

// base is the claim the policy and the interpreter allow before the text is read (the
// seeds' table: pipefail and all authoritative on bash, ksh and zsh; last derived; any other
// interpreter derived, naming itself; PowerShell authoritative only under all).
func (a *analyzer) base(p Policy, fam family, name string) bool {
	shown := name
	if shown == "" {
		shown = "(unnamed)"
	}
	switch {
	case p != Pipefail && p != All && p != Last:
		a.add(ConstructUnknown, string(p), "exitPolicy "+string(p)+" is not one the analysis knows",
			"use pipefail (the default), all or last")
		return false
	case fam == unknownShell:
		a.add(ConstructInterpreter, shown, "the interpreter "+shown+" is not known to support pipefail (dash refuses the option and runs nothing; "+
			"sh names no particular shell), so a failing pipeline stage may not reach the exit code",
			"run the command under bash, ksh or zsh")
		return false
	case fam == powerShell && p != All:
		a.add(ConstructInterpreter, shown, "PowerShell has no pipefail: only exitPolicy all makes its exit code authoritative",
			"pass exitPolicy all")
		return false
	case p == Last:
		a.add(ConstructPolicyLast, "last", "exitPolicy last lets only a pipeline's last stage decide, so an earlier stage's failure is not in the code",
			"leave exitPolicy at pipefail (the default) unless a stage is meant to fail")
		return false
	}
	return true
}

// maxLimitations bounds what one receipt lists; past it the claim is derived anyway.
const maxLimitations = 16

// add records a limitation once per construct and text.
func (a *analyzer) add(construct, text, note, remedy string) {
	text = excerpt(text)
	key := construct + "\x00" + text
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	if len(a.lims) >= maxLimitations {
		return
	}
	a.lims = append(a.lims, Limitation{Construct: construct, Text: text, Note: note, Remedy: remedy})
}

// excerpt keeps a construct's text readable in a receipt: one line, at most 80 bytes, cut at
// a rune boundary.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 80 {
		cut := 80
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
