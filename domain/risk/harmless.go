package risk

import (
	"regexp"
	"strings"
)

// Code that names a protected location must be proven harmless (issue 25's second review):
// the gate does not parse these languages, so a call it does not know (a library function, a
// reflective lookup such as `Object.values(fs).find(…)`) could be the one that deletes the
// home directory it names. Code that names the home directory, a directory above it, a
// credential store, the user configuration or Zuno's data (in a literal, the language's own
// spelling of the home directory, a `..` path, or an argument it is given) is catastrophic
// unless every call in it is one the gate knows to read or print only: `node -e
// 'console.log(require("os").homedir())'` and `perl -e 'print $ENV{HOME}'` run, `node -e
// 'Object.values(require("fs")).find(f => f.name.startsWith("rmS"))("..", …)'` does not
// (docs/risk.md, "Editors and interpreters").

// knownCalls lists, per language family, the functions and methods the gate knows to read,
// print or compute without deleting, writing, moving or running anything. open is there:
// a writing mode is the writer rule's (programtext.go).
var knownCalls = map[string]map[string]bool{
	"python": words(`print str repr len int float bool list dict tuple set frozenset sorted
		reversed range enumerate zip min max sum abs any all isinstance type format open read
		readline readlines close exists isdir isfile islink expanduser expandvars abspath
		realpath normpath relpath dirname basename join split splitext getsize getmtime getcwd
		listdir scandir walk stat lstat getenv get home cwd resolve iterdir glob rglob read_text
		read_bytes is_dir is_file strip lstrip rstrip startswith endswith lower upper replace find
		count items keys values append extend loads load dumps dump chdir exit encode decode
		Path PurePath parent name suffix as_posix fspath samefile commonpath`),
	"node": words(`log error info warn dir table stringify parse homedir tmpdir hostname
		platform userInfo cwd resolve join dirname basename relative normalize extname isAbsolute
		existsSync readFileSync readdirSync statSync lstatSync realpathSync accessSync require exit
		toString trim split map filter forEach slice includes startsWith endsWith keys values
		entries String Number Boolean isDirectory isFile isSymbolicLink write toUpperCase
		toLowerCase padStart padEnd concat indexOf lastIndexOf substring charAt trimStart
		trimEnd repeat replaceAll match test sort`),
	"perl": words(`print say printf sprintf join split length lc uc lcfirst ucfirst chomp chop
		exists defined die warn keys values each open close opendir readdir closedir eval if
		unless while until for foreach return scalar push pop shift unshift sort reverse map grep
		abs int substr index rindex exit ref stat lstat chdir cwd getcwd glob time localtime
		basename dirname catfile catdir rel2abs abs_path`),
	"ruby": words(`puts print p pp require require_relative home read exist? exists? join
		expand_path dirname basename directory? file? entries children glob each map select
		to_s to_i size length chomp strip split fetch exit pwd getwd readlines foreach
		absolute_path realpath new`),
	"php": words(`echo print printf sprintf getenv file_get_contents file_exists is_dir is_file scandir realpath dirname basename implode explode var_dump json_encode`),
	"lua": words(`print getenv tostring tonumber format`),
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// dangerBarewords are calls perl and ruby make without parentheses that change files or run
// commands (`unlink $f`, `system "…"`).
var dangerBarewords = regexp.MustCompile(`(?:^|[^\w$@%&:>.])(unlink|rmdir|rename|system|exec|truncate|chmod|chown|kill|symlink|link|syscall|do|spawn|fork|remove_entry|rm_rf|rm_r|rm|mv|load)\b`)

// callName matches a call: a name (after a dot for a method) and its opening parenthesis;
// ruby's methods called without parentheses are matched after their dot.
var (
	callName   = regexp.MustCompile(`(?:^|[^\w$@%&])([A-Za-z_]\w*[?!]?)\s*\(`)
	rubyMethod = regexp.MustCompile(`\.([a-z_]\w*[?!]?)`)
	definedFn  = regexp.MustCompile(`\b(?:def|function|sub)\s+([A-Za-z_]\w*)|\b(?:const|let|var)?\s*([A-Za-z_]\w*)\s*=\s*(?:lambda\b|(?:async\s*)?\([^()]*\)\s*=>|\w+\s*=>|function\b)`)
	valueCall  = regexp.MustCompile(`->\s*\(`) // perl's $f->(…); the others' computed calls: codenames.go
	keywords   = words(`if elif else for while switch catch return not and or in is lambda function with assert del yield async await typeof new super this self print then finally`)
)

// unknownCall returns the first call in code (outside its string literals) that the gate does
// not know to be harmless, "" when there is none; ok is false for a language without a list.
func unknownCall(family, code string) (string, bool) {
	known, ok := knownCalls[family]
	if !ok {
		return "", false
	}
	bare := codeLiteral.ReplaceAllString(code, `""`)
	defined := map[string]bool{}
	for _, m := range definedFn.FindAllStringSubmatch(bare, 64) {
		defined[m[1]+m[2]] = true
	}
	harmless := func(n string) bool { return known[n] || keywords[n] || defined[n] }
	if valueCall.MatchString(bare) {
		// perl's `$f->(…)`: the function called is a value the gate does not follow (the
		// other languages' computed calls are refused outright, codenames.go).
		return "a function it computes", true
	}
	for _, m := range callName.FindAllStringSubmatch(bare, 256) {
		if !harmless(m[1]) {
			return m[1], true
		}
	}
	if family == "ruby" {
		for _, m := range rubyMethod.FindAllStringSubmatch(bare, 256) {
			if !harmless(m[1]) {
				return m[1], true
			}
		}
	}
	if family == "perl" || family == "ruby" {
		if m := dangerBarewords.FindStringSubmatch(bare); m != nil {
			return m[1], true
		}
	}
	return "", true
}

// provenHarmless is the rule above: code (its idioms already spelled as literals) that names
// a protected location, in a literal or in the arguments it is given, and calls something
// the gate does not know, is catastrophic.
func (a *assessor) provenHarmless(prog, code string, operands []arg) {
	if a.worst.Level == Catastrophic {
		return
	}
	p, named := a.namedProtected(code, operands)
	if !named {
		return
	}
	call, ok := unknownCall(codeFamily(prog), code)
	if !ok || call == "" {
		return
	}
	a.note(Catastrophic, prog, p, prog+" code names "+a.display(p)+" ("+a.classify(p).String()+") and calls "+call+", which the gate cannot prove harmless; refused in every permission mode — read it with a shell command (ls, cat) or name a path inside the workspace")
}

// climbs says a string literal of code is a path with a .. segment ("..", "../x", "/..").
func climbs(lit string) bool {
	if strings.ContainsAny(lit, "\n\x00") {
		return false
	}
	for _, seg := range strings.Split(lit, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// namedProtected returns the first protected location the code names in a string literal,
// or its arguments name: the home directory or above it, a credential store, the user
// configuration, Zuno's data. "/" alone is a separator far more often than a path in code,
// and system locations are read far more often than changed; both are left to the call scan.
func (a *assessor) namedProtected(code string, operands []arg) (string, bool) {
	protected := func(p string) bool {
		switch a.classify(p) {
		case home, credential, userConfig, zunoData:
			return true
		}
		return false
	}
	for _, lit := range codeLiteral.FindAllString(code, 64) {
		body := lit[1 : len(lit)-1]
		if p, ok := a.codePath(body); ok && protected(p) {
			return p, true
		}
		if climbs(body) {
			return body, true // `process.cwd() + "/.."` climbs from a directory the gate may not know
		}
	}
	for _, g := range operands {
		for _, r := range g {
			if p, _, ok := a.target(r); ok && protected(p) {
				return p, true
			}
		}
	}
	return "", false
}
