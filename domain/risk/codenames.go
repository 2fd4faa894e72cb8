package risk

import (
	"regexp"
	"strings"
)

// Code that hides what it calls, writes or moves (the second review of issue 25): names built
// from pieces (`getattr(shutil, "rm"+"tree")("..")`, `fs["rm"+"Sync"](…)`), code built at run
// time (`exec(…)`, `eval(…)`), and files opened for writing or renamed. The gate does not
// parse these languages (interpreters.go); it rewrites what is static into the plain spelling
// the call scanner reads, and refuses what stays dynamic: a command the gate cannot read
// stays catastrophic under allow_all (docs/risk.md, "Editors and interpreters").

// envIdiom matches an XDG base directory read from the environment the way the languages
// spell it (os.environ["XDG_DATA_HOME"], process.env.XDG_DATA_HOME, $ENV{XDG_DATA_HOME}, …).
var envIdiom = regexp.MustCompile(`os\.environ\[\s*['"](XDG_\w+)['"]\s*\]|os\.environ\.get\(\s*['"](XDG_\w+)['"][^)]*\)|(?:os\.)?getenv\(\s*['"](XDG_\w+)['"]\s*\)|process\.env\.(XDG_\w+)\b|process\.env\[\s*['"](XDG_\w+)['"]\s*\]|\$ENV\{\s*['"]?(XDG_\w+)['"]?\s*\}|ENV\[\s*['"](XDG_\w+)['"]\s*\]|ENVIRON\[\s*"(XDG_\w+)"\s*\]`)

// codeIdioms replaces the home directory and the XDG base directories, as the languages
// spell them, with their values: a string literal, or the bare value inside a double-quoted
// string the language interpolates ("$ENV{HOME}/.ssh").
func (a *assessor) codeIdioms(text string) string {
	text = homePrefix.ReplaceAllString(text, "(${1}"+strings.ReplaceAll(a.home, "$", "$$"))
	text = replaceInCode(text, homeIdiom, func(string) string { return a.home })
	text = pardir.Replace(text)
	if a.cwd != nil && a.cwd.exact {
		text = replaceInCode(text, cwdIdiom, func(string) string { return a.cwd.text })
	}
	return replaceInCode(text, envIdiom, func(m string) string {
		for _, name := range envIdiom.FindStringSubmatch(m)[1:] {
			if rs, ok := a.xdgValue(name); ok && name != "" {
				return rs[0].text
			}
		}
		return unreadText
	})
}

// cwdIdiom matches the working directory as the languages spell it.
var cwdIdiom = regexp.MustCompile(`process\.cwd\(\)|os\.getcwd\(\)|(?:pathlib\.)?Path\.cwd\(\)|Dir\.pwd\b|Dir\.getwd\b|\bgetcwd\(\)`)

// pardir spells Python's names for the parent and the current directory.
var pardir = strings.NewReplacer("os.pardir", `".."`, "os.curdir", `"."`)

// replaceInCode replaces each match of re with value(match), quoted as a literal outside a
// double-quoted string and bare inside one.
func replaceInCode(text string, re *regexp.Regexp, value func(string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringIndex(text, 64) {
		b.WriteString(text[last:m[0]])
		v := value(text[m[0]:m[1]])
		if insideDoubleQuotes(text[:m[0]]) {
			b.WriteString(v)
		} else {
			b.WriteString("'" + v + "'")
		}
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// insideDoubleQuotes says the end of prefix is inside a double-quoted string: an odd number
// of unescaped double quotes before it.
func insideDoubleQuotes(prefix string) bool {
	n := 0
	for i := 0; i < len(prefix); i++ {
		switch prefix[i] {
		case '\\':
			i++
		case '"':
			n++
		}
	}
	return n%2 == 1
}

// concatenated matches two string literals joined by + (Python, JavaScript, Ruby) or .
// (perl, PHP).
var concatenated = regexp.MustCompile(`("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*[+.]\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')`)

// foldLiterals joins literals that are concatenated into one (`"rm"+"tree"` is "rmtree"), so
// a name or a path built from pieces is read like one spelled whole.
func foldLiterals(text string) string {
	for n := 0; n < 16; n++ {
		folded := concatenated.ReplaceAllStringFunc(text, func(m string) string {
			sub := concatenated.FindStringSubmatch(m)
			q := sub[1][:1]
			left, right := sub[1][1:len(sub[1])-1], sub[2][1:len(sub[2])-1]
			if sub[2][:1] != q {
				right = strings.ReplaceAll(right, q, `\`+q)
			}
			return q + left + right + q
		})
		if folded == text {
			break
		}
		text = folded
	}
	return text
}

// Calls whose name is a literal, rewritten as plain calls: getattr(X, "name") is X.name,
// X["name"] is X.name, ruby's X.send(:name, …) and X.send("name", …) are X.name(…).
var (
	literalGetattr   = regexp.MustCompile(`\bgetattr\(\s*([\w.]+)\s*,\s*(["'])(\w+)["']\s*(?:,[^()]*)?\)`)
	literalSubscript = regexp.MustCompile(`([\w)\]])\[\s*(["'])(\w+)["']\s*\]`)
	literalSend      = regexp.MustCompile(`\.(?:public_send|__send__|send)\(\s*(?::(\w+)|["'](\w+)["'])\s*(,|\))`)
)

// plainCalls rewrites calls by a literal name into their plain spelling.
func plainCalls(text string) string {
	text = literalGetattr.ReplaceAllString(text, "$1.$3")
	text = literalSubscript.ReplaceAllString(text, "$1.$3")
	return literalSend.ReplaceAllStringFunc(text, func(m string) string {
		sub := literalSend.FindStringSubmatch(m)
		tail := "("
		if sub[3] == ")" {
			tail = "()"
		}
		return "." + sub[1] + sub[2] + tail
	})
}

// dynamicCall matches, per language, a call whose function is chosen at run time: getattr
// with a computed name, __import__ or import_module of a computed module, globals()[…],
// a computed subscript called (fs[k](…)), perl's &$f and &{…}, ruby's send, PHP's $f(…),
// lua's _G[…].
var dynamicCall = map[string]*regexp.Regexp{
	"python": regexp.MustCompile(`\bgetattr\s*\(|\b__import__\s*\(\s*[^"'\s]|\bimport_module\s*\(\s*[^"'\s]|\b(?:globals|locals)\(\)\s*\[|\bvars\([^)]*\)\s*\[|__builtins__|__dict__\s*\[|\b(?:methodcaller|attrgetter)\s*\(`),
	"node":   regexp.MustCompile(`\brequire\s*\(\s*[^"'\s)]|\bimport\s*\(\s*[^"'\s)]|\bReflect\.(?:apply|get)\b|\bglobalThis\s*\[|\bprocess\.binding\b`),
	"perl":   regexp.MustCompile(`(?:^|[^&\w])&\s*[\$\{]|->\s*\$\w+\s*\(`),
	"ruby":   regexp.MustCompile(`\b(?:public_send|__send__|send)\s*\(|\bmethod\s*\(\s*[^:"'\s]|\b(?:instance_eval|class_eval|module_eval|const_get)\b|\[\s*[^\]"'\d\s:][^\]]*\]\s*\.call\b`),
	"php":    regexp.MustCompile(`(?:^|[^\w>:])\$\w+\s*\(|->\s*\$\w+\s*\(|\b(?:call_user_func\w*|create_function)\s*\(`),
	"lua":    regexp.MustCompile(`\b_G\s*\[|\b(?:os|io)\s*\[`),
}

// computedCall returns the first call in code (its literals blanked) whose function is a
// value rather than a name: an element called (`fs[k](…)`, `[…][0](…)`), the result of a
// call called (`….find(…)(…)`, `vars(m).get(…)(…)`), a parenthesized expression called
// (`(0, fs.rmSync)(…)`). A function literal called at once (`(async () => { … })()`) is
// not one: its body is read. "" when there is none, or for a language without such calls.
func computedCall(family, code string) string {
	switch family {
	case "python", "node", "ruby", "php", "lua":
	default:
		return ""
	}
	for i := 0; i < len(code); i++ {
		if code[i] != ']' && code[i] != ')' {
			continue
		}
		j := i + 1
		for j < len(code) && (code[j] == ' ' || code[j] == '\t') {
			j++
		}
		if j == len(code) || code[j] != '(' {
			continue
		}
		if code[i] == ']' {
			return firstLine(code[max(0, i-30) : j+1])
		}
		open := matchingOpen(code, i)
		if open < 0 {
			continue
		}
		before := strings.TrimRight(code[:open], " \t")
		inner := strings.TrimSpace(code[open+1 : i])
		if before != "" && (isWordByte(before[len(before)-1]) || strings.ContainsRune(")]", rune(before[len(before)-1]))) {
			return firstLine(code[max(0, open-30) : j+1]) // a call's result called
		}
		if !functionLiteral.MatchString(inner) {
			return firstLine(code[open : j+1])
		}
	}
	return ""
}

// functionLiteral matches the start of a function written in place: function, async, an
// arrow function, a lambda.
var functionLiteral = regexp.MustCompile(`^(?:function\b|async\b|lambda\b|\([^()]*\)\s*=>|\w+\s*=>)`)

// matchingOpen returns the index of the ( that the ) at close closes, -1 when there is none.
func matchingOpen(code string, close int) int {
	depth := 0
	for k := close; k >= 0; k-- {
		switch code[k] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// evalCall matches, per language, a call that runs code given as a string: read when the
// string is a literal, refused otherwise.
var evalCall = map[string]*regexp.Regexp{
	"python": regexp.MustCompile(`(?:^|[^.\w])(?:eval|exec|compile)\s*\(`), // not re.compile(…)
	"node":   regexp.MustCompile(`(?:^|[^.\w])eval\s*\(|\bFunction\s*\(|\bvm\.run\w*\s*\(`),
	"perl":   regexp.MustCompile(`\beval\b\s*`),
	"ruby":   regexp.MustCompile(`\beval\s*[\( ]`),
	"php":    regexp.MustCompile(`\beval\s*\(`),
	"lua":    regexp.MustCompile(`\bload(?:string)?\s*\(`),
}

// Python modules that run commands or delete files, imported under another name or by
// function: `import subprocess as s`, `from subprocess import run`, `from os import *`.
var (
	pyImportAs    = regexp.MustCompile(`\bimport\s+(subprocess|shutil|os|pty)\s+as\s+(\w+)`)
	pyFromImport  = regexp.MustCompile(`\bfrom\s+(subprocess|shutil|os|pty)\s+import\s+\(?([\w\s,*]+)\)?`)
	pyModuleCalls = map[string][]string{
		"subprocess": {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"},
		"os":         {"system", "popen", "remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace"},
		"shutil":     {"rmtree", "move", "copy", "copyfile", "copy2", "copytree"},
		"pty":        {"spawn"},
	}
)

// pythonImports spells the calls of a module imported under another name, or by function,
// with the module's name (`s.run(…)`, `run(…)` are subprocess.run(…)), which the call scanner
// reads.
func pythonImports(text string) string {
	for _, m := range pyImportAs.FindAllStringSubmatch(text, 8) {
		re := regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(m[2]) + `\.`)
		text = re.ReplaceAllString(text, "${1}"+m[1]+".")
	}
	for _, m := range pyFromImport.FindAllStringSubmatch(text, 8) {
		items := strings.Split(m[2], ",")
		for _, item := range items[:min(len(items), 16)] {
			f := strings.Fields(item)
			var name, local string
			switch {
			case len(f) == 1 && f[0] == "*":
				for _, n := range pyModuleCalls[m[1]] {
					text = bareCall(text, n, m[1]+"."+n)
				}
				continue
			case len(f) == 1:
				name, local = f[0], f[0]
			case len(f) == 3 && f[1] == "as":
				name, local = f[0], f[2]
			default:
				continue
			}
			text = bareCall(text, local, m[1]+"."+name)
		}
	}
	return text
}

// bareCall rewrites calls of local (not a method: no dot before it) as calls of full.
func bareCall(text, local, full string) string {
	re := regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(local) + `(\s*\()`)
	return re.ReplaceAllString(text, "${1}"+full+"${2}")
}

// codeFamily is the language family of an interpreter's name.
func codeFamily(prog string) string {
	switch {
	case strings.HasPrefix(prog, "python"), strings.HasPrefix(prog, "pypy"):
		return "python"
	case prog == "node", prog == "nodejs", prog == "bun":
		return "node"
	case prog == "perl", strings.HasPrefix(prog, "perl5"):
		return prog[:4]
	}
	return prog // ruby, php, lua; awk and the editors have no entry
}

// dynamic refuses code that chooses what it calls at run time, and reads code a literal
// string gives to eval. It reports whether the verdict is now catastrophic.
func (a *assessor) dynamic(prog, text string, depth int) bool {
	family := codeFamily(prog)
	bare := codeLiteral.ReplaceAllString(text, `""`)
	if m := computedCall(family, bare); m != "" {
		a.note(Catastrophic, prog, "…", prog+" code calls a function it computes ("+m+"), so the gate cannot read what it does; refused in every permission mode — call it by its name")
		return true
	}
	if re, ok := dynamicCall[family]; ok {
		if m := re.FindString(bare); m != "" {
			a.note(Catastrophic, prog, "…", prog+" code chooses the function it calls at run time ("+strings.TrimSpace(firstLine(m))+"), so the gate cannot read what it does; refused in every permission mode — call it by its name")
			return true
		}
	}
	return a.evalStrings(prog, family, text, depth)
}

// evalStrings reads the code each eval-like call runs when it is a string literal, and
// refuses one that is not (`exec(input())`). It reports whether the verdict is catastrophic.
func (a *assessor) evalStrings(prog, family, text string, depth int) bool {
	re, ok := evalCall[family]
	if !ok {
		return false
	}
	for _, m := range re.FindAllStringIndex(text, 8) {
		rest := strings.TrimLeft(text[m[1]:], " \t")
		if family == "perl" && strings.HasPrefix(rest, "{") {
			continue // eval { … } is perl's try, not code from a string
		}
		if !strings.HasSuffix(text[m[0]:m[1]], "(") {
			rest = strings.TrimPrefix(rest, "(")
		}
		lit := literalAtStart.FindString(rest)
		after := strings.TrimLeft(rest[len(lit):], " \t")
		alone := after == "" || strings.ContainsAny(after[:1], ");,\n") // nothing joined to it
		if lit == "" || !alone || (lit[0] == '"' && interpolates(family, lit[1:len(lit)-1])) {
			a.note(Catastrophic, prog, "…", prog+" runs code it builds at run time ("+strings.TrimSpace(firstLine(text[m[0]:min(len(text), m[1]+40)]))+"); refused in every permission mode — spell the code literally")
			return true
		}
		if a.texts++; a.texts > maxTexts {
			a.note(Catastrophic, prog, "", "the command nests too many code texts for the gate to read; split it into plain commands")
			return true
		}
		a.code(prog, unescapeLiteral(lit), depth)
	}
	return false
}

// literalAtStart matches a string literal at the start of a text.
var literalAtStart = regexp.MustCompile(`^(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')`)

// unescapeLiteral is the text of a string literal: without its quotes, \" and \\ decoded.
func unescapeLiteral(lit string) string {
	body := lit[1 : len(lit)-1]
	if !strings.Contains(body, `\`) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' && i+1 < len(body) && strings.IndexByte(`"'\`, body[i+1]) >= 0 {
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String()
}

// writerWord matches code that writes or replaces files: an open with a writing mode (w, a,
// x, +, perl's > and +<), Path.write_text, fs.writeFileSync, file_put_contents, File.write, a
// copy, a rename or a move.
var writerWord = regexp.MustCompile(`\bopen\w*\s*\([^;\n]*["'](?:[rbt]*[wxa+][rwxabt+]*|\+?>>?[^"']*|\+<[^"']*)["']|\bmode\s*=\s*["'][^"']*[wxa+]|\b(?:write_text|write_bytes|writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream|copyFileSync|copyFile|file_put_contents|fwrite|syswrite|truncateSync|copyfile|copy2|copytree|symlinkSync|symlink)\b|\b(?:File|IO)\.write\b|\bos\.replace\b`)

// codeOperands grades the arguments code on the command line is given (sys.argv,
// process.argv, @ARGV): the code may delete, move or write what they name, and the gate does
// not follow which call gets which argument. Code that can delete, move or run a command
// given a protected location, or that can write files given a credential store, is refused
// like code naming it in a literal (broadCode).
func (a *assessor) codeOperands(prog, code string, operands []arg) {
	a.provenHarmless(prog, code, operands)
	deletes, writes := deleterWord.MatchString(code), writerWord.MatchString(code)
	if !deletes && !writes {
		return
	}
	for _, g := range operands {
		for _, r := range g {
			p, _, ok := a.target(r)
			if !ok {
				continue
			}
			c := a.classify(p)
			if (deletes && c != none && c != system && c != device) || (writes && writeRefused(c)) {
				a.note(Catastrophic, prog, p, prog+" code that deletes, moves, writes or runs commands is given "+a.display(p)+" ("+c.String()+") as an argument; refused in every permission mode")
				return
			}
		}
	}
}

// chdirCall matches a change of directory in code: os.chdir, process.chdir, Dir.chdir,
// perl's chdir (without an argument: the home directory).
var chdirCall = regexp.MustCompile(`(?:^|[^\w.])(?:os\.|process\.|Dir\.|lfs\.)?chdir\b\s*`)

// codeChdir moves the working directory the code's relative paths resolve against: to a
// literal directory (`os.chdir("..")`), home for perl's bare chdir, and to a directory the
// gate cannot read otherwise (`os.chdir(os.pardir)` is read; `os.chdir(d)` is not), which
// makes the deletion of a relative path unreadable.
func (a *assessor) codeChdir(text string) {
	m := chdirCall.FindStringIndex(text)
	if m == nil {
		return
	}
	elems := a.codeArgs(text[m[1]:])
	a.oldCwd = a.cwd
	switch {
	case len(elems) == 0:
		a.cwd = &reading{text: a.home, exact: true}
	case len(elems) == 1 && elems[0].reading().exact:
		r := elems[0].reading()
		if strings.HasPrefix(r.text, "~") {
			r.text = a.home + r.text[1:]
		}
		if p, _, ok := a.target(r); ok {
			a.cwd = &reading{text: p, exact: true}
			return
		}
		fallthrough
	default:
		a.cwd = &reading{text: unknownMark, unread: true}
	}
}
