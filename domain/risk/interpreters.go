package risk

import (
	"regexp"
	"strings"
)

// Editors and interpreters given a command on their command line run shell commands and
// delete files through their own functions: `vim -c '!rm -rf ~'`, `awk 'BEGIN{system("rm -rf
// ~")}'`, `perl -e 'system "rm -rf ~"'`, `python3 -c 'import shutil; shutil.rmtree(…)'`. The
// gate does not parse these languages; it finds the calls that run a shell command or delete
// a path and reads their arguments when they are string literals, the home directory
// spelled the language's way, or a concatenation of those. A part it cannot read makes the
// command or path unreadable, and deleting an unreadable path is catastrophic
// (docs/risk.md, "Editors and interpreters"). Script files are not read.

// unreadText stands, in shell text the gate builds, for a part it cannot read: a command
// substitution of a program that prints nothing the gate knows.
const unreadText = "$(\x01)"

// runnerCall matches a call that runs its argument as a shell command (or an argument list):
// system, exec, popen, os.system, subprocess.run/call/Popen/check_output, child_process's
// execSync, PHP's shell_exec and passthru, perl's readpipe.
var runnerCall = regexp.MustCompile(`(?:\bsystem|\bos\.execute|\bexecSync|\bexecFileSync|\bspawnSync|\bpopen|\bshell_exec|\bpassthru|\breadpipe|\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|\bpty\.spawn)\s*(?:\(|\s(?:["'\[]))`)

// execCall matches exec, which runs a shell command in perl, ruby and PHP (in Python and
// JavaScript exec runs code or matches a pattern, and is not read).
var execCall = regexp.MustCompile(`\bexec\s*(?:\(|\s(?:["'\[]))`)

// deleteCall matches a call that deletes the path it is given: perl's unlink and rmtree,
// Python's shutil.rmtree and os.remove, Ruby's FileUtils.rm_rf, node's fs.rmSync, PHP's unlink.
var deleteCall = regexp.MustCompile(`\b(?:rmtree|remove_tree|rm_rf|rm_r|rm|unlink|unlinkSync|rmSync|rmdirSync|remove|removedirs|rmdir|delete)\s*(?:\(|\s(?:["'$]|glob\b))`)

// quotedCommand matches perl and ruby's backticks, qx// and %x().
var quotedCommand = regexp.MustCompile("`([^`]*)`|\\bqx\\s*([{(/'|!])|%x([({\\[])")

// homeIdiom matches the home directory as the languages spell it.
// homePrefix matches a ~ the language expands at the start of a string: os.path.expanduser,
// File.expand_path, perl's glob.
var homePrefix = regexp.MustCompile(`(?:os\.path\.)?(?:expanduser|File\.expand_path|glob)\(\s*(['"])~`)

var homeIdiom = regexp.MustCompile(`\$ENV\{\s*['"]?HOME['"]?\s*\}|ENVIRON\[\s*"HOME"\s*\]|os\.environ\[\s*['"]HOME['"]\s*\]|os\.environ\.get\(\s*['"]HOME['"][^)]*\)|(?:os\.)?getenv\(\s*['"]HOME['"]\s*\)|(?:pathlib\.)?Path\.home\(\)|Dir\.home|require\(\s*['"]os['"]\s*\)\.homedir\(\)|os\.homedir\(\)|process\.env\.HOME|ENV\[\s*['"]HOME['"]\s*\]|expanduser\(\s*(['"])~['"]\s*\)`)

// code reads a program text in another language: the shell commands it runs and the paths
// it deletes.
func (a *assessor) code(prog, text string, depth int) {
	if len(text) > maxCommand {
		return
	}
	lang := a.lang
	a.lang = prog
	defer func() { a.lang = lang }()
	// The home directory as the language spells it becomes a literal first, so that its
	// braces and brackets ($ENV{HOME}) do not end an argument; literals joined by + or . are
	// one, calls by a literal name plain calls, and a call chosen at run time is refused
	// (codenames.go).
	text = plainCalls(foldLiterals(a.codeIdioms(text)))
	if codeFamily(prog) == "python" {
		text = pythonImports(text)
	}
	if a.dynamic(prog, text, depth) {
		return
	}
	cwd, old := a.cwd, a.oldCwd
	defer func() { a.cwd, a.oldCwd = cwd, old }()
	a.codeChdir(text)
	runners := runnerCall.FindAllStringIndex(text, 32)
	if !strings.HasPrefix(prog, "python") && !strings.HasPrefix(prog, "pypy") && !strings.HasPrefix(prog, "node") && prog != "bun" {
		runners = append(runners, execCall.FindAllStringIndex(text, 32)...)
	}
	for _, m := range runners {
		if elems := a.codeArgs(text[m[1]-1:]); len(elems) > 0 {
			a.codeCommand(prog, elems, depth)
		}
	}
	for _, m := range quotedCommand.FindAllStringSubmatchIndex(text, 32) {
		switch {
		case m[2] >= 0:
			a.text(text[m[2]:m[3]], depth+1)
		default:
			open := m[len(m)-2]
			if open < 0 {
				open = m[4]
			}
			if body, ok := delimited(text[open:]); ok {
				a.text(body, depth+1)
			}
		}
	}
	for _, m := range deleteCall.FindAllStringIndex(text, 32) {
		start := m[1] - 1
		if strings.HasSuffix(text[:m[1]], "glob") {
			start = m[1] - 4 // unlink glob("~/…"): the argument is the glob call
		}
		elems := a.codeArgs(text[start:])
		for _, e := range elems {
			if e.option {
				continue // fs.rmSync(p, {recursive: true}), shutil.rmtree(p, True)
			}
			r := e.reading()
			if strings.HasPrefix(r.text, "~") && r.exact {
				r.text = a.home + strings.TrimPrefix(r.text, "~")
			}
			a.destroy(prog, arg{r}, "deletes")
		}
	}
	a.broadCode(prog, text)
	a.provenHarmless(prog, text, nil)
}

// interpolates says a double-quoted literal of the language holds a value the gate does not
// know: perl and PHP expand $name in it, ruby #{…}. Elsewhere (awk, Python, JavaScript, Vim)
// a $ is the shell's to expand once the string runs as a command.
func interpolates(lang, lit string) bool {
	switch {
	case lang == "perl" || strings.HasPrefix(lang, "perl5") || lang == "php":
		return strings.Contains(lit, "$")
	case lang == "ruby":
		return strings.Contains(lit, "#{")
	}
	return false
}

// delimited returns the text between an opening delimiter at s[0] and its closing one.
func delimited(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	closer := map[byte]byte{'(': ')', '{': '}', '[': ']', '<': '>'}[s[0]]
	if closer == 0 {
		closer = s[0]
	}
	depth := 0
	var quote byte // inside brackets, a quoted ) does not close them: system("a)b")
	for i := 1; i < len(s); i++ {
		if closer != s[0] {
			switch {
			case quote != 0 && s[i] == '\\':
				i++
				continue
			case quote != 0:
				if s[i] == quote {
					quote = 0
				}
				continue
			case s[i] == '"' || s[i] == '\'':
				quote = s[i]
				continue
			}
		}
		switch s[i] {
		case closer:
			if depth == 0 {
				return s[1:i], true
			}
			depth--
		case s[0]:
			depth++
		}
	}
	return "", false
}

// codeValue is one argument of a call: its known text in pieces, unknown pieces marked.
type codeValue struct {
	parts  []string // literal text; unreadText for a part the gate cannot read
	option bool     // an options object, a boolean, a number or null: not a path
}

// optionValue matches an argument that is an option rather than a path or a word.
var optionValue = regexp.MustCompile(`^(?:\{.*\}|true|false|True|False|None|nil|null|undefined|[0-9]+)$`)

func (v codeValue) reading() reading {
	r := reading{exact: true}
	for _, p := range v.parts {
		if p == unreadText {
			r.exact, r.unread = false, true
			continue
		}
		r.text += p
	}
	return r
}

// codeArgs reads the arguments of a call starting at s (an opening parenthesis, or the
// first argument of a call without one) up to its end: a list of values.
func (a *assessor) codeArgs(s string) []codeValue {
	body := s
	if strings.HasPrefix(s, "(") {
		b, ok := delimited(s)
		if !ok {
			return nil
		}
		body = b
	} else if i := strings.IndexAny(s, ";\n})"); i >= 0 {
		body = s[:i]
	}
	body = strings.TrimSpace(body)
	if strings.HasPrefix(body, "[") && strings.HasSuffix(body, "]") && strings.Count(body, "[") == 1 {
		body = body[1 : len(body)-1] // a list literal: the argument vector
	}
	var out []codeValue
	for _, e := range splitTop(body) {
		if e = strings.TrimSpace(e); e == "" || strings.Contains(e, "=") && !strings.ContainsAny(e[:strings.Index(e, "=")], `"'`) {
			continue // a keyword argument (shell=True, check=True)
		}
		if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") { // spawnSync("rm", ["-rf", …])
			for _, f := range splitTop(e[1 : len(e)-1]) {
				if f = strings.TrimSpace(f); f != "" {
					out = append(out, a.codeValueOf(f))
				}
			}
			continue
		}
		v := a.codeValueOf(e)
		v.option = optionValue.MatchString(e)
		out = append(out, v)
	}
	return out
}

// splitTop splits at commas outside quotes and brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// codeValueOf reads one expression: string literals, the home directory, joined by +, . or
// juxtaposition; anything else is unreadable.
func (a *assessor) codeValueOf(e string) codeValue {
	var v codeValue
	for i := 0; i < len(e); i++ {
		c := e[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			var b strings.Builder
			for ; j < len(e) && e[j] != c; j++ {
				if e[j] == '\\' && j+1 < len(e) {
					j++
				}
				b.WriteByte(e[j])
			}
			lit := b.String()
			if c == '"' && interpolates(a.lang, lit) {
				lit = unreadText // interpolation the gate does not follow
			}
			v.parts = append(v.parts, lit)
			i = j
		case (strings.HasPrefix(e[i:], "q") || strings.HasPrefix(e[i:], "qq")) && quoteLike(e[i:]) >= 0:
			// perl's q(…) and qq(…): a literal, qq interpolating like "…"
			k := quoteLike(e[i:])
			lit, ok := delimited(e[i+k:])
			if !ok {
				v.parts = append(v.parts, unreadText)
				i = len(e)
				continue
			}
			if k == 2 && interpolates(a.lang, lit) {
				lit = unreadText
			}
			v.parts = append(v.parts, lit)
			i += k + len(lit) + 1
		case c == ' ' || c == '\t' || c == '+' || c == '.' || c == '(' || c == ')':
		case strings.HasPrefix(e[i:], "os.path.join") || strings.HasPrefix(e[i:], "Path"):
			// a path constructor around the literals: read its arguments in place
			for i < len(e) && e[i] != '(' {
				i++
			}
		default:
			v.parts = append(v.parts, unreadText)
			for i+1 < len(e) && !strings.ContainsRune(`"' +.`, rune(e[i+1])) {
				i++
			}
		}
	}
	if len(v.parts) == 0 {
		v.parts = []string{unreadText}
	}
	return v
}

// codeCommand reads what a runner call runs: one string is shell text (system, os.system,
// shell=True); several are an argument vector, quoted into shell text.
func (a *assessor) codeCommand(prog string, elems []codeValue, depth int) {
	if len(elems) > 0 && len(elems[0].parts) > 0 && elems[0].parts[0] == unreadText {
		// The command itself is unreadable (`system($0)`, `print $0 | "sh"`).
		a.note(Catastrophic, prog, "", prog+" runs a command the gate cannot read; refused in every permission mode — spell the command literally")
		return
	}
	if len(elems) == 1 {
		a.text(strings.Join(elems[0].parts, ""), depth+1)
		return
	}
	var words []string
	for _, e := range elems {
		r := e.reading()
		if !r.exact {
			words = append(words, unreadText)
			continue
		}
		words = append(words, "'"+strings.ReplaceAll(r.text, "'", `'\''`)+"'")
	}
	a.text(strings.Join(words, " "), depth+1)
}

// vim, vi, nvim, ex, view: -c CMD, --cmd CMD and +CMD are Ex commands run at start.
func (a *assessor) editor(name string, argv []arg, _ []string, depth int) {
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if !ok {
			continue
		}
		switch {
		case (t == "-c" || t == "--cmd" || shortCluster(t, 'c')) && i+1 < len(argv):
			i++
			a.programArg(name, argv[i], func(c string) { a.exCommands(name, c, depth) })
		case strings.HasPrefix(t, "+") && len(t) > 1:
			a.exCommands(name, t[1:], depth)
		}
	}
}

// exCommands reads a line of Ex commands separated by |: `!CMD`, `[range]!CMD`, `r !CMD`,
// `w !CMD` and `silent !CMD` run CMD (the rest of the line) in a shell, `term CMD` runs CMD,
// and system() in `call`, `echo`, `let` or `exe` runs its argument.
func (a *assessor) exCommands(name, line string, depth int) {
	for n := 0; n < 16 && line != ""; n++ {
		cmd := strings.TrimLeft(line, " \t:")
		cmd = strings.TrimLeft(cmd, "0123456789%$.,;'<>+-")
		for _, p := range []string{"silent!", "silent", "sil!", "sil", "execute", "exe"} {
			if strings.HasPrefix(cmd, p) {
				cmd = strings.TrimLeft(cmd[len(p):], " \t")
				if strings.HasPrefix(p, "exe") && len(cmd) > 1 && (cmd[0] == '"' || cmd[0] == '\'') {
					if body, ok := delimited(cmd); ok { // exe "!rm -rf ~": the string is an Ex command
						cmd = body
					}
				}
				break
			}
		}
		for _, p := range []string{"read", "r", "write", "w", "terminal", "term"} {
			// `:r!cmd` reads from cmd, but `:w!file` is a forced write: w needs the blank.
			if rest, ok := strings.CutPrefix(cmd, p); ok && (strings.HasPrefix(rest, " ") || (p[0] == 'r' && strings.HasPrefix(rest, "!"))) {
				if strings.HasPrefix(p, "t") {
					a.text(strings.TrimSpace(rest), depth+1)
					return
				}
				cmd = strings.TrimLeft(rest, " \t")
				break
			}
		}
		if rest, ok := strings.CutPrefix(cmd, "!"); ok {
			a.text(rest, depth+1) // ! takes the rest of the line, | included
			return
		}
		if strings.Contains(cmd, "system") || strings.HasPrefix(cmd, `"`) || strings.HasPrefix(cmd, "'") {
			a.code(name, cmd, depth)
		}
		if exUnreadable(cmd) {
			a.note(Catastrophic, name, "", "an Ex command that deletes, writes or runs code of another language, which the gate does not read")
		}
		_, line, _ = strings.Cut(cmd, "|")
	}
}

// shortCluster reports whether t is a cluster of short options ending in flag, which then
// takes the next word (-sc CMD is -s -c CMD).
func shortCluster(t string, flag byte) bool {
	return len(t) > 2 && t[0] == '-' && t[1] != '-' && t[len(t)-1] == flag
}

// exUnreadable reports an Ex command that deletes or writes files through a vimscript
// function, or runs code of another language (lua, python, perl, ruby, tcl, mzscheme): the
// gate reads none of it (review 25c: vim -es -c 'call delete(expand("~"),"rf")').
func exUnreadable(cmd string) bool {
	for _, f := range []string{"delete(", "rename(", "writefile(", "mkdir(", "setfperm(", "libcall", "job_start", "jobstart", "termopen", "chansend"} {
		if strings.Contains(cmd, f) {
			return true
		}
	}
	word := strings.Fields(cmd + " ")
	if len(word) == 0 {
		return false
	}
	switch strings.TrimRight(word[0], "!") {
	case "lua", "luado", "luafile", "py", "python", "py3", "python3", "pyx", "pythonx", "pydo", "py3do", "pyfile", "py3file",
		"perl", "perldo", "ruby", "rubydo", "rubyfile", "tcl", "tcldo", "tclfile", "mz", "mzscheme", "mzfile", "so", "source", "runtime":
		return true
	}
	return false
}

// awk [options] PROGRAM [FILE…]: the program is the first operand unless -f names a file;
// gawk's -e/--source add program text.
func (a *assessor) awk(name string, argv []arg, _ []string, depth int) {
	shortVal := "FvfeiElWo"
	var programs []arg
	file := false
	operands := []arg{}
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		switch {
		case !ok || !strings.HasPrefix(t, "-") || t == "-":
			operands = append(operands, argv[i])
		case t == "--":
			operands = append(operands, argv[i+1:]...)
			i = len(argv)
		case t == "-e" || t == "--source":
			if i+1 < len(argv) {
				i++
				programs = append(programs, argv[i])
			}
		case strings.HasPrefix(t, "--source="):
			programs = append(programs, arg{{text: strings.TrimPrefix(t, "--source="), exact: true}})
		case t == "-f" || strings.HasPrefix(t, "--file"):
			file = true
			if t == "-f" || t == "--file" {
				i++
			}
		case len(t) == 2 && strings.IndexByte(shortVal, t[1]) >= 0:
			i++
		}
	}
	if !file && len(programs) == 0 && len(operands) > 0 {
		programs = append(programs, operands[0])
	}
	for _, p := range programs {
		a.programArg(name, p, func(t string) { a.code(name, awkPipes(t), depth) })
	}
}

// awkPipe matches awk's commands run through a pipe: print … | "CMD" and "CMD" | getline.
var awkPipe = regexp.MustCompile(`\|&?\s*("(?:[^"\\]|\\.)*")|("(?:[^"\\]|\\.)*")\s*\|&?\s*getline`)

// awkIntoShell matches print EXPR | "sh": what is printed is the shell's script.
var awkIntoShell = regexp.MustCompile(`\bprintf?\s*\(?((?:"(?:[^"\\]|\\.)*"|[^|;}\n"])*?)\)?\s*\|&?\s*"\s*(?:/[\w/]*/)?(?:ba|da|z|k|mk|a)?sh(?:\s+-s)?\s*"`)

// awkPipes rewrites awk's pipes to commands as calls of system, which the code reader knows:
// the command runs in a shell either way.
func awkPipes(program string) string {
	if !strings.Contains(program, "|") {
		return program
	}
	program = awkIntoShell.ReplaceAllStringFunc(program, func(m string) string {
		printed := strings.TrimSpace(awkIntoShell.FindStringSubmatch(m)[1])
		if printed == "" {
			printed = "$0" // print alone prints the input line
		}
		return ";system(" + printed + ");"
	})
	return awkPipe.ReplaceAllStringFunc(program, func(m string) string {
		sub := awkPipe.FindStringSubmatch(m)
		return ";system(" + sub[1] + sub[2] + ");"
	})
}

// perl [options] [-e CODE]… [FILE…]: -e and -E give code; -i rewrites each FILE in place, and
// keeps no copy unless a suffix is attached (-i.bak), like sed -i.
func (a *assessor) perl(name string, argv []arg, stdin []string, depth int) {
	inPlace, backup := false, false
	var code []string
	var operands []arg
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if !ok || !strings.HasPrefix(t, "-") || t == "-" {
			operands = append(operands, argv[i:]...)
			break
		}
		if t == "--" {
			operands = append(operands, argv[i+1:]...)
			break
		}
	letters:
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'e', 'E':
				if j+1 < len(t) {
					code = append(code, t[j+1:])
				} else if i+1 < len(argv) {
					i++
					a.programArg(name, argv[i], func(c string) { code = append(code, c) })
				}
				break letters
			case 'i':
				inPlace, backup = true, j+1 < len(t)
				break letters
			case 'l', '0': // -l[octal], -0[digits]: the digits belong to it, letters follow
				for j+1 < len(t) && t[j+1] >= '0' && t[j+1] <= '9' {
					j++
				}
			case 'M', 'm', 'I', 'x', 'F', 'C', 'd', 'D', 'V':
				break letters
			}
		}
	}
	if len(code) == 0 && readsProgramFromStdin(operands) {
		a.stdinProgram(name, stdin, depth)
	}
	if len(code) == 0 && len(operands) > 0 {
		operands = operands[1:] // the script file, not read
	}
	for _, c := range code {
		a.code(name, c, depth)
		a.codeOperands(name, c, operands)
	}
	if inPlace && !backup {
		for _, g := range operands {
			a.writeOnto(name+" -i", g, nil, "rewrites")
		}
	}
}

// interpreter: python -c CODE, ruby -e CODE, node -e/--eval/-p CODE, php -r CODE, lua -e CODE.
// Without code on the command line and without a script (no operand, or "-"), the program
// is standard input (`python3 - <<< '…'`).
func (a *assessor) interpreter(name string, argv []arg, stdin []string, depth int) {
	flag := map[string]string{"ruby": "e", "node": "ep", "nodejs": "ep", "bun": "ep", "php": "r", "lua": "e"}[name]
	if flag == "" {
		flag = "c" // python, python3, python3.12 …
	}
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if !ok || !strings.HasPrefix(t, "-") || t == "-" {
			if readsProgramFromStdin(argv[i:]) {
				a.stdinProgram(name, stdin, depth)
			}
			return // the script and its arguments
		}
		if t == "-m" || t == "--" {
			return // a module, or the end of the options: not standard input as code
		}
		if t == "--eval" || t == "--print" || (!strings.HasPrefix(t, "--") && strings.ContainsAny(t[len(t)-1:], flag)) {
			if i+1 < len(argv) {
				a.programArg(name, argv[i+1], func(c string) {
					a.code(name, c, depth)
					a.codeOperands(name, c, argv[i+2:])
				})
			}
			return
		}
	}
	a.stdinProgram(name, stdin, depth)
}

// quoteLike returns the length of perl's q or qq before its delimiter when s starts with one
// (q(…), qq{…}, q/…/), else -1.
func quoteLike(s string) int {
	for _, k := range []int{2, 1} {
		if len(s) > k && strings.Repeat("q", k) == s[:k] && strings.IndexByte("({[</|!'\"", s[k]) >= 0 {
			return k
		}
	}
	return -1
}
