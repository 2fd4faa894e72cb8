package risk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Call is one program invocation found in a command text, read exactly as the gate reads
// it: wrappers (sudo, env, timeout, xargs, …), nested shells (bash -c, eval, sh <<<) and the
// text's own functions and variables are looked through. Other policies that must know what
// a command runs (the git pre-flight, docs/shell-execution.md) read it from here rather than
// from the raw text.
type Call struct {
	// Program is the program's base name ("git" for /usr/bin/git).
	Program string
	// Args are the arguments after the program name.
	Args []Arg
}

// Arg is one argument: its text when the command alone decides it (Exact), else unknown.
type Arg struct {
	Text  string
	Exact bool
}

// Calls returns the program invocations of command in the order the gate meets them. ok is
// false when the text is not bash the parser can read: the caller must not treat it as
// running nothing.
func Calls(command string) (calls []Call, ok bool) {
	if len(command) > maxCommand || strings.ContainsRune(command, 0) {
		return nil, false
	}
	if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), ""); err != nil {
		return nil, false
	}
	a := newAssessor(Env{})
	a.onCall = func(name string, argv []arg) {
		c := Call{Program: name}
		for _, g := range argv[1:] {
			t, exact := g.exact()
			c.Args = append(c.Args, Arg{Text: t, Exact: exact})
		}
		calls = append(calls, c)
	}
	a.text(command, 0)
	return calls, true
}
