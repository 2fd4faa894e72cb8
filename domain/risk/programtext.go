package risk

import (
	"regexp"
	"strings"
)

// Code the gate cannot follow call by call: a program read from standard input, a deleting
// function under another name, and the languages and editors that run shell text in ways the
// call scanner (interpreters.go) does not list: tcl's exec, sed's e, awk printing into a
// shell. A command the gate cannot read stays catastrophic under allow_all (docs/risk.md,
// "Editors and interpreters").

// stdinProgram reads the program an interpreter takes from standard input (`python3 - <<<
// '…'`, a here-document, `… | node`): each text the statement statically reads, and text
// from a command the gate cannot read refused.
func (a *assessor) stdinProgram(name string, stdin []string, depth int) {
	for _, s := range stdin {
		if s == fileInput {
			continue // a script file on standard input, not read (docs/risk.md, "Limits")
		}
		if strings.Contains(s, unknownMark) {
			a.note(Catastrophic, name, "", name+" runs a program from a command the gate cannot read; refused in every permission mode — run the program from a file or with -c")
			continue
		}
		a.code(name, s, depth)
	}
}

// programArg reads code given on the command line: each reading of the argument, with the
// parts the gate does not know read as empty (`sed "s/$OLD/$NEW/g"` is the script `s///g`).
// Code that is nothing but unknown parts (`python3 -c "$CODE"`, `awk "$P"`, `vim -c "$X"`)
// is refused like `bash -c "$X"`.
func (a *assessor) programArg(name string, g arg, read func(code string)) {
	for _, r := range g {
		if !r.exact && strings.TrimSpace(strings.ReplaceAll(r.text, unknownMark, "")) == "" {
			a.note(Catastrophic, name, "", name+" runs code the gate cannot read statically; refused in every permission mode — spell the code literally")
			continue
		}
		read(r.text)
	}
}

// readsProgramFromStdin says an interpreter's remaining arguments leave standard input as
// its program: no operand, or the operand "-" or /dev/stdin.
func readsProgramFromStdin(operands []arg) bool {
	if len(operands) == 0 {
		return true
	}
	t, ok := operands[0].exact()
	return ok && (t == "-" || t == "/dev/stdin" || t == "/dev/fd/0" || t == "/proc/self/fd/0")
}

// deleterWord names a function that deletes a path or runs a command, wherever it appears.
var deleterWord = regexp.MustCompile(`\b(?:rmtree|remove_tree|rm_rf|rm_r|rmSync|rmdirSync|rmdir|unlink|unlinkSync|remove|removedirs|system|execute|popen|exec|execSync|spawnSync|shell_exec|passthru|check_call|check_output|Popen|rename|renames|renameSync|move|mv|rimraf|rimrafSync|deleteSync)\b`)

// renamedDeleter matches a deleting or running function bound to another name: `from shutil
// import rmtree as r`, `const {rmSync: r} = require("fs")`, `r = shutil.rmtree`.
var renamedDeleter = regexp.MustCompile(`\b(?:rmtree|remove_tree|rm_rf|rmSync|rmdirSync|unlink|unlinkSync|remove|removedirs|system|execSync|spawnSync|Popen)\s+as\s+\w|\b(?:rmtree|rm_rf|rmSync|rmdirSync|unlinkSync|execSync|spawnSync)\s*:\s*\w|=\s*[\w.]*\b(?:rmtree|remove_tree|rm_rf|rmSync|rmdirSync|unlinkSync|execSync|spawnSync|system)\s*(?:[;,\n)]|$)`)

// codeLiteral matches a string literal in code.
var codeLiteral = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)

// broadCode applies the rules that do not depend on finding the call: code that can delete
// or run a command and names a protected location (the home directory above all) in a
// literal, or that binds a deleting function to another name, is catastrophic — the gate
// cannot tell which call gets which path.
func (a *assessor) broadCode(prog, text string) {
	if a.worst.Level == Catastrophic {
		return // the verdict cannot change: the first catastrophic finding stands
	}
	lits := codeLiteral.FindAllString(text, 64)
	for _, lit := range lits {
		if p, ok := a.codePath(lit[1 : len(lit)-1]); ok && a.inZuno(p) {
			a.note(Catastrophic, prog, p, prog+" code names "+a.display(p)+" (Zuno's own data: the event log, the auth file), which only Zuno may change; refused in every permission mode")
			return
		}
	}
	deletes, writes := deleterWord.MatchString(text), writerWord.MatchString(text)
	if !deletes && !writes {
		return
	}
	if m := renamedDeleter.FindString(text); deletes && m != "" {
		a.note(Catastrophic, prog, "…", prog+" binds a deleting function to another name ("+strings.TrimSpace(m)+"), so the gate cannot read what it deletes; refused in every permission mode — call it by its name with a literal path")
		return
	}
	for _, lit := range lits {
		p, ok := a.codePath(lit[1 : len(lit)-1])
		if !ok {
			continue
		}
		// System locations are left to the call scanner: code names /etc or /usr/bin to read
		// them far more often than to delete them.
		c := a.classify(p)
		if deletes && c != none && c != system && c != device {
			a.note(Catastrophic, prog, p, prog+" code that deletes, moves or runs commands names "+a.display(p)+" ("+c.String()+"); refused in every permission mode")
			return
		}
		// Writing: what a > redirection may not do, code may not either (a credential store).
		if writes && writeRefused(c) {
			a.note(Catastrophic, prog, p, prog+" code that writes files names "+a.display(p)+" ("+c.String()+"); refused in every permission mode")
			return
		}
	}
}

// codePath reads a string literal of code as a path: ~ is the home directory, a relative
// path resolves against the working directory; ok is false when it cannot be placed.
func (a *assessor) codePath(lit string) (string, bool) {
	lit = strings.TrimLeft(lit, "+<> \t") // perl's open(F, ">path")
	if strings.HasPrefix(lit, "~") && (len(lit) == 1 || lit[1] == '/') {
		lit = a.home + lit[1:]
	}
	if lit == "" || strings.ContainsAny(lit, "\n\x00\x01") {
		return "", false
	}
	p, _, ok := a.target(reading{text: lit})
	return p, ok
}

// tclExec matches tcl's exec and the words after it up to the end of the command.
var tclExec = regexp.MustCompile(`\b(?:exec|spawn|system)\s+([^\n;\]]*)`) // expect's spawn and system run programs too

// tclHome matches the home directory as tcl spells it.
var tclHome = regexp.MustCompile(`\$(?:::)?env\(HOME\)|\[file normalize ~\]|~`)

// tcl reads tclsh/wish/expect code: `exec WORD…` runs a program with its words (not through
// a shell); the words are read as a shell command line.
func (a *assessor) tcl(name, text string, depth int) {
	for _, m := range tclExec.FindAllStringSubmatch(text, 32) {
		words := tclHome.ReplaceAllString(m[1], "'"+strings.ReplaceAll(a.home, "'", "")+"'")
		if strings.ContainsAny(words, "$[") {
			a.note(Catastrophic, name, "…", name+" exec runs a command the gate cannot read ("+firstLine(m[0])+"); refused in every permission mode")
			continue
		}
		a.text(strings.NewReplacer("{", "'", "}", "'").Replace(words), depth+1)
	}
}

// tclsh/wish [SCRIPT]: without a script the program is standard input; expect -c CMD.
func (a *assessor) tclsh(name string, argv []arg, stdin []string, depth int) {
	var operands []arg
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if ok && t == "-c" && i+1 < len(argv) {
			a.programArg(name, argv[i+1], func(c string) { a.tcl(name, c, depth) })
			return
		}
		if !ok || !strings.HasPrefix(t, "-") || t == "-" {
			operands = argv[i:]
			break
		}
	}
	if !readsProgramFromStdin(operands) {
		return // a script file, not read
	}
	for _, s := range stdin {
		if s == fileInput {
			continue // a script file on standard input, not read (docs/risk.md, "Limits")
		}
		if strings.Contains(s, unknownMark) {
			a.note(Catastrophic, name, "", name+" runs a program from a command the gate cannot read; refused in every permission mode")
			continue
		}
		a.tcl(name, s, depth)
	}
}

// sedCommands reads a sed script for the commands that run a shell: `e COMMAND` runs
// COMMAND, a bare `e` and the s///e flag run text from the input, which the gate cannot read.
func (a *assessor) sedCommands(name, script string, depth int) {
	for _, line := range strings.Split(script, "\n") {
		for rest := line; rest != ""; {
			cmd := strings.TrimLeft(rest, " \t;{}!")
			cmd = strings.TrimLeft(skipSedAddress(cmd), " \t!{")
			switch {
			case cmd == "e" || strings.HasPrefix(cmd, "e ") || strings.HasPrefix(cmd, "e\t"):
				if shell := strings.TrimSpace(cmd[1:]); shell != "" {
					a.text(shell, depth+1)
				} else {
					a.note(Catastrophic, name, "", name+" e runs each input line as a command the gate cannot read; refused in every permission mode")
				}
				rest = "" // e takes the rest of the line
				continue
			case strings.HasPrefix(cmd, "s") && len(cmd) > 1:
				flags, after := sedSubstFlags(cmd)
				if strings.Contains(flags, "e") {
					a.note(Catastrophic, name, "", name+" s///e runs the rewritten line as a command the gate cannot read; refused in every permission mode")
				}
				rest = after
				continue
			}
			_, rest, _ = strings.Cut(cmd, ";")
		}
	}
}

// skipSedAddress drops a line address (numbers, $, /regex/, \cREGEXc, ranges).
func skipSedAddress(s string) string {
	for k := 0; k < 2; k++ {
		s = strings.TrimLeft(s, "0123456789$~+ ")
		if strings.HasPrefix(s, "/") {
			if body, ok := delimited(s); ok {
				s = s[len(body)+2:]
			}
		}
		if !strings.HasPrefix(s, ",") {
			break
		}
		s = s[1:]
	}
	return s
}

// sedSubstFlags returns the flags of the s command at the start of cmd and what follows it.
func sedSubstFlags(cmd string) (flags, rest string) {
	d := cmd[1]
	parts, i := 0, 2
	for ; i < len(cmd) && parts < 2; i++ {
		switch cmd[i] {
		case '\\':
			i++
		case d:
			parts++
		}
	}
	i = min(i, len(cmd)) // a trailing backslash steps past the end
	j := i
	for j < len(cmd) && cmd[j] != ';' && cmd[j] != '}' {
		j++
	}
	return cmd[i:j], cmd[j:]
}
