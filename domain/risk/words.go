package risk

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// reading is one static reading of a shell word: what bash will pass to the program after
// quote removal, tilde and parameter expansion, as far as the text alone decides it.
type reading struct {
	// text is the value. A part the gate cannot know (a command substitution, an unknown
	// variable) reads as the empty string when it may be empty — an unset variable is empty
	// in bash, which is how `rm -rf "$DIR/"*` deletes / — and as unknownMark when it cannot.
	text string
	// exact: every part was resolved.
	exact bool
	// glob: the word has an unquoted pattern character, so bash may expand it to many paths.
	glob bool
	// split: an unquoted expansion contributed to the text, so bash splits it at blanks
	// (`cmd="rm -rf /"; $cmd` runs rm).
	split bool
	// fields: the text holds the elements of an array expansion separated by elemSep, each
	// one argument ("${x[@]}").
	fields bool
	// unread: a part is what a command prints that the gate cannot read (`$(cd ..; pwd)` is
	// read, `$(curl …)` or `$(… | base64 -d)` of unknown text is not). A deletion of such a
	// target is catastrophic: the gate does not vouch for what it cannot read (docs/risk.md).
	unread bool
}

// unknownMark stands for a part that is unknown but not empty; it matches no real path.
const unknownMark = "\x01"

// maxReadings bounds the fields and readings of one word (brace expansion, alternative
// values). Past it the command is refused: dropping alternatives would hide a target
// (`rm -rf /{a1,…,a40,etc}`).
const maxReadings = 256

// word returns the fields of a shell word, each with its readings. Brace expansion makes
// several fields (`{rm,-rf,/}` is three arguments); a variable with several possible values
// makes several readings of one field. A word with too many fields is one unknown field.
func (a *assessor) word(w *syntax.Word) []arg {
	if w == nil {
		return []arg{{{text: unknownMark}}}
	}
	cp := *w
	if !syntax.SplitBraces(&cp) {
		return a.fieldSplit(a.parts(w.Parts, false))
	}
	var out []arg
	for bw, err := range expand.BracesSeq(nil, &cp) {
		if err != nil || len(out) >= maxReadings {
			a.overflow()
			return []arg{{{text: unknownMark}}}
		}
		out = append(out, a.fieldSplit(a.parts(bw.Parts, false))...)
	}
	return out
}

// fieldSplit splits readings that an unquoted expansion made at blanks. A single reading
// becomes several arguments, as in bash; several readings that split keep their fields as
// alternatives of one argument, which keeps every target in view.
func (a *assessor) fieldSplit(rs []reading) []arg {
	var fields [][]string
	splits := false
	ifs := a.ifs()
	for _, r := range rs {
		f := []string{r.text}
		seps := ""
		if r.split {
			seps = ifs
		}
		if r.fields {
			seps += elemSep
		}
		if seps != "" && strings.ContainsAny(r.text, seps) {
			f = strings.FieldsFunc(r.text, func(c rune) bool { return strings.ContainsRune(seps, c) })
			splits = true
		}
		fields = append(fields, f)
	}
	if !splits {
		return []arg{rs}
	}
	if len(rs) == 1 {
		var out []arg
		for _, t := range fields[0] {
			out = append(out, arg{{text: t, exact: rs[0].exact, glob: rs[0].glob, unread: rs[0].unread}})
		}
		return out
	}
	var alt arg
	for i, r := range rs {
		for _, t := range fields[i] {
			alt = append(alt, reading{text: t, exact: r.exact, glob: r.glob, unread: r.unread})
		}
	}
	return []arg{a.capReadings(alt)}
}

// ifs returns the characters bash splits an unquoted expansion at: the blanks, or, once the
// text assigns IFS (`IFS=,; x=rm,-rf,/; $x` runs rm), the characters of every value it
// assigns (the blanks too when a value is unknown). The walker reads a command both ways
// when IFS is assigned, since branches are not followed (stmt).
func (a *assessor) ifs() string {
	vs, ok := a.vars["IFS"]
	if !ok || a.defaultIFS {
		return " \t\n"
	}
	set := ""
	for _, r := range vs {
		if !r.exact {
			r.text += " \t\n"
		}
		for _, c := range r.text {
			if c > 0x02 && !strings.ContainsRune(set, c) {
				set += string(c)
			}
		}
	}
	return set
}

// arg is one argument of a command: its possible readings.
type arg []reading

// exact returns the argument's text when it has a single exact reading.
func (g arg) exact() (string, bool) {
	if len(g) == 1 && g[0].exact {
		return g[0].text, true
	}
	return "", false
}

// readings reads a parameter's default word: the readings of all its fields.
func (a *assessor) readings(w *syntax.Word) []reading {
	var out []reading
	for _, g := range a.word(w) {
		out = append(out, g...)
	}
	return a.capReadings(out)
}

// unsplit reads a word bash neither brace-expands nor splits: an assignment's value, a
// redirection's target, a here-document.
func (a *assessor) unsplit(w *syntax.Word) []reading {
	if w == nil {
		return []reading{{text: unknownMark}}
	}
	rs := a.parts(w.Parts, false)
	for i := range rs {
		rs[i].split = false
		if rs[i].fields { // "${x[@]}" in an assignment joins the elements with blanks
			rs[i].text = strings.ReplaceAll(rs[i].text, elemSep, " ")
			rs[i].fields = false
		}
	}
	return rs
}

func (a *assessor) capReadings(rs []reading) []reading {
	if len(rs) > maxReadings {
		a.overflow()
		return []reading{{text: unknownMark}}
	}
	return rs
}

// overflow refuses a command with more alternatives than the gate follows.
func (a *assessor) overflow() {
	a.note(Catastrophic, "", "", "the command expands into more alternatives than the gate follows (brace expansions, values of one variable); it refuses what it cannot read — split it into plain commands")
}

// parts reads a sequence of word parts; quoted says they are inside double quotes.
func (a *assessor) parts(ps []syntax.WordPart, quoted bool) []reading {
	acc := []reading{{exact: true}}
	for i, p := range ps {
		acc = join(acc, a.part(p, i == 0, quoted))
		if len(acc) > maxReadings {
			a.overflow()
			return []reading{{text: unknownMark}}
		}
	}
	return acc
}

// join concatenates every reading of the prefix with every reading of the next part.
func join(prefix, next []reading) []reading {
	out := make([]reading, 0, len(prefix)*len(next))
	for _, p := range prefix {
		for _, n := range next {
			out = append(out, reading{text: p.text + n.text, exact: p.exact && n.exact,
				glob: p.glob || n.glob, split: p.split || n.split, fields: p.fields || n.fields,
				unread: p.unread || n.unread})
		}
	}
	return out
}

func (a *assessor) part(p syntax.WordPart, first, quoted bool) []reading {
	switch p := p.(type) {
	case *syntax.Lit:
		return a.lit(p.Value, first, quoted)
	case *syntax.SglQuoted:
		if p.Dollar {
			// bash ends the string at a decoded NUL ($'/\0etc' is "/")
			text, _, _ := strings.Cut(ansiC(p.Value), "\x00")
			return []reading{{text: text, exact: true}}
		}
		return []reading{{text: p.Value, exact: true}}
	case *syntax.DblQuoted:
		return a.parts(p.Parts, true)
	case *syntax.ParamExp:
		return unquoted(a.param(p), quoted)
	case *syntax.CmdSubst:
		return unquoted(a.output(p), quoted)
	case *syntax.ArithmExp:
		return []reading{{text: unknownMark}} // a number: never empty
	case *syntax.ProcSubst:
		if p.Op == syntax.CmdIn {
			return []reading{{text: a.procSubst(p), exact: true}}
		}
	}
	// Output process substitutions (read as commands by the walker), extended globs.
	return []reading{{text: ""}}
}

// maxSubsts bounds how deeply command substitutions are evaluated inside one another.
const maxSubsts = 3

// unquoted marks what an unquoted expansion produced: bash splits it at blanks and expands
// the patterns in it.
func unquoted(rs []reading, quoted bool) []reading {
	if !quoted {
		for i := range rs {
			rs[i].glob = rs[i].glob || hasGlobMeta(rs[i].text)
			rs[i].split = true
		}
	}
	return rs
}

// output is what a command substitution prints when the gate can tell ($(echo /),
// $(cd ..; pwd), $(mktemp -d), static base64: outputs.go), without the trailing newlines bash
// removes; otherwise one unreadable reading, empty as a failing substitution is. A cd inside
// it moves only the substitution's subshell. The walker reads the commands inside it either
// way.
func (a *assessor) output(cs *syntax.CmdSubst) []reading {
	if a.substs >= maxSubsts {
		return []reading{{unread: true}}
	}
	a.substs++
	cwd, old := a.cwd, a.oldCwd
	defer func() { a.substs--; a.cwd, a.oldCwd = cwd, old }()
	outs := a.sequenceOutput(cs.Stmts)
	if outs == nil {
		return []reading{{unread: true}}
	}
	rs := make([]reading, 0, len(outs))
	for _, t := range outs {
		rs = append(rs, printed(strings.TrimRight(t, "\n")))
	}
	return a.capReadings(rs)
}

// printed is one static output as a reading: unknownMark alone is output the gate cannot
// read; other unknown parts (a fresh name, a name under a known directory) are inexact but
// readable. allMark stands for every name in a directory.
func printed(t string) reading {
	switch {
	case t == unknownMark:
		return reading{unread: true}
	case strings.ContainsAny(t, unknownMark+allMark):
		return reading{text: t, glob: hasGlobMeta(t)}
	}
	return reading{text: t, exact: true}
}

// lit reads a literal part: tilde expansion at the start of an unquoted word (from HOME as
// the command may have reassigned it, like bash), backslash removal, and unquoted pattern
// characters.
func (a *assessor) lit(s string, first, quoted bool) []reading {
	if quoted {
		return []reading{{text: unescapeDouble(s), exact: true}}
	}
	prefix := []reading{{exact: true}}
	if first && strings.HasPrefix(s, "~") {
		name, rest, slash := strings.Cut(s[1:], "/")
		switch {
		case name == "":
			prefix, _ = a.value("HOME")
		case name == "+":
			prefix, _ = a.value("PWD")
		case name == "-":
			prefix, _ = a.value("OLDPWD")
		case strings.ContainsAny(name, `\*?[`):
			prefix = []reading{{text: unknownMark}}
		default:
			prefix = []reading{{text: otherHome + name, exact: true}} // another user's home
		}
		if slash {
			prefix = join(prefix, []reading{{text: "/", exact: true}})
		}
		s = rest
	}
	r := reading{exact: true}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		if c == '*' || c == '?' || c == '[' {
			r.glob = true
		}
		b.WriteByte(c)
	}
	r.text = b.String()
	return join(prefix, []reading{r})
}

// otherHome prefixes ~name: the home directory of user name, which the gate cannot resolve
// without I/O but protects like any home directory.
const otherHome = "/\x00user/"

func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\$`\"\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// param reads a parameter expansion: a variable the command assigned statically, HOME, or
// an unknown value. ${X:?} is never empty; ${X:-default} is X or the default; an operator
// that transforms a known value (${X%/*}, ${X#*/}, ${X/a/b}, ${X:1}, ${#X}) is applied.
func (a *assessor) param(p *syntax.ParamExp) []reading {
	if p.Param != nil && p.Index != nil && !p.Excl && !p.Width && !p.IsSet && p.Names == 0 &&
		p.NestedParam == nil && len(p.Modifiers) == 0 && p.Exp == nil && !p.Length && p.Slice == nil && p.Repl == nil {
		return a.arrayParam(p)
	}
	if p.Excl && p.Names == 0 && p.Index == nil {
		// ${!x}: the value of the variable x names, which the gate does not follow (review
		// 25c): unreadable, never the empty string.
		return []reading{{text: unknownMark, unread: true}}
	}
	if p.Param == nil || p.Excl || p.Width || p.IsSet || p.Index != nil || p.Names != 0 ||
		p.NestedParam != nil || len(p.Modifiers) > 0 {
		return []reading{{text: ""}}
	}
	if elems, ok := a.arrays["@"]; ok && p.Param.Value == "@" && p.Exp == nil && !p.Length && p.Slice == nil && p.Repl == nil {
		return a.elements(elems)
	}
	known, ok := a.value(p.Param.Value)
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if ok {
				return known
			}
			return a.readings(p.Exp.Word)
		case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			if ok {
				return known
			}
			return []reading{{text: unknownMark}}
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			return append(a.readings(p.Exp.Word), reading{text: ""})
		}
	}
	if !ok {
		if a.markUnknown { // PathsNamed: where the unknown value stands matters more than that it may be empty
			return []reading{{text: unknownMark}}
		}
		return []reading{{text: ""}}
	}
	if p.Exp == nil && !p.Length && p.Slice == nil && p.Repl == nil {
		return known
	}
	out := make([]reading, 0, len(known))
	for _, k := range known {
		v, err := transform(p, k.text)
		out = append(out, reading{text: v, exact: k.exact && err == nil && static(p)})
	}
	return out
}

// transform applies a parameter operator to a value with the parser's own expander. The
// value is the only variable it sees; anything else it would need reads as unset.
func transform(p *syntax.ParamExp, value string) (s string, err error) {
	defer func() {
		if recover() != nil {
			s, err = "", errUnreadable
		}
	}()
	cfg := &expand.Config{Env: expand.ListEnviron(p.Param.Value + "=" + value)}
	return expand.Literal(cfg, &syntax.Word{Parts: []syntax.WordPart{p}})
}

var errUnreadable = errors.New("unreadable parameter expansion")

// static says the operator's own words hold no expansion the expander would read as unset.
func static(p *syntax.ParamExp) bool {
	ok := true
	syntax.Walk(p, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			ok = ok && n == p
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			ok = false
		}
		return ok
	})
	return ok
}

// value returns the static values of a variable: what the command assigned to it, or the
// home directory for HOME.
func (a *assessor) value(name string) ([]reading, bool) {
	if vs, ok := a.vars[name]; ok {
		return append([]reading(nil), vs...), true
	}
	if name == "ZUNO_DB" && len(a.zuno) > 0 {
		// Zuno's own database, wherever the environment puts it (`sqlite3 "$ZUNO_DB"`).
		out := make([]reading, len(a.zuno))
		for i, z := range a.zuno {
			out[i] = reading{text: z, exact: true}
		}
		return out, true
	}
	if rs, ok := a.xdgValue(name); ok {
		return rs, true
	}
	if name == "HOME" || name == "USERPROFILE" { // USERPROFILE: the Windows home, as the seed asks
		return []reading{{text: a.home, exact: true}}, true
	}
	if name == "PWD" || name == "OLDPWD" { // the last static cd; bash always sets PWD
		d := a.cwd
		if name == "OLDPWD" {
			d = a.oldCwd
		}
		if d == nil && name == "OLDPWD" {
			// Before the text's own cd, OLDPWD is whatever the environment brought (the
			// user's last directory, ~ often): unreadable, so deleting it is refused.
			return []reading{{text: unknownMark, unread: true}}, true
		}
		if d == nil {
			return []reading{{text: unknownMark}}, true
		}
		return []reading{*d}, true
	}
	return nil, false
}

// maxValues bounds the remembered values of one variable; past it the command is refused.
const maxValues = 64

// assign records a static assignment. Every value assigned so far is kept, because the gate
// does not follow branches: `X=/tmp/a; if c; then X=/; fi; rm -rf $X` may delete /.
func (a *assessor) assign(name string, rs []reading) {
	vs := a.vars[name]
	for _, r := range rs {
		if !slices.Contains(vs, r) {
			vs = append(vs, r)
		}
	}
	if len(vs) > maxValues {
		a.overflow()
		vs = []reading{{text: ""}}
	}
	a.vars[name] = vs
}

// ansiC decodes the escapes of a $'…' string.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		c := s[i]
		if j := strings.IndexByte(`abefnrtv\'"?E`, c); j >= 0 {
			b.WriteByte("\a\b\x1b\f\n\r\t\v\\'\"?\x1b"[j])
			continue
		}
		n, width, base := 0, 0, 16
		switch c {
		case 'x':
			width = 2
		case 'u':
			width = 4
		case 'U':
			width = 8
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
			continue
		default:
			if c >= '0' && c <= '7' {
				i--
				width, base = 3, 8
			}
		}
		if width == 0 {
			b.WriteByte('\\')
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(s) && j-i-1 < width {
			if _, err := strconv.ParseUint(s[j:j+1], base, 8); err != nil {
				break
			}
			j++
		}
		v, _ := strconv.ParseUint(s[i+1:j], base, 32)
		n = int(v)
		switch {
		case j == i+1:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == 'u' || c == 'U':
			if utf8.ValidRune(rune(n)) {
				b.WriteRune(rune(n))
			}
		default:
			b.WriteByte(byte(n))
		}
		i = j - 1
	}
	return b.String()
}

// procMark starts the name an input process substitution expands to: bash passes a path
// such as /dev/fd/63, which a shell or source then reads as a script. The gate names each
// one /dev/fd/\x02N and remembers what it prints.
const procMark = "/dev/fd/\x02"

// procSubst returns the name of <(…) and remembers what it statically prints
// ({unknownMark} when that is unknown). The walker reads its commands either way.
func (a *assessor) procSubst(p *syntax.ProcSubst) string {
	if m, ok := a.procs[p]; ok {
		return m
	}
	m := procMark + strconv.Itoa(len(a.procs))
	a.procs[p] = m
	var out []string
	if len(p.Stmts) == 1 && a.substs < maxSubsts {
		a.substs++
		out = a.prints(p.Stmts[0])
		a.substs--
	}
	if out == nil {
		out = []string{unknownMark}
	}
	a.procOut[m] = out
	return m
}

// scriptTexts returns the shell texts a script operand names when the text itself decides
// them: a process substitution's output, or standard input spelled as a file (/dev/stdin,
// /dev/fd/0, /proc/self/fd/0). ok is false for an ordinary script file, which the gate
// does not read.
func (a *assessor) scriptTexts(g arg, stdin []string) (texts []string, ok bool) {
	for _, r := range g {
		switch {
		case strings.HasPrefix(r.text, procMark):
			texts, ok = append(texts, a.procOut[r.text]...), true
		case r.text == "/dev/stdin" || r.text == "/dev/fd/0" || r.text == "/proc/self/fd/0":
			texts, ok = append(texts, stdin...), true
		}
	}
	return texts, ok
}

// runTexts reads texts a shell runs. An unknown one is catastrophic: a command the gate
// cannot read stays denied under allow_all (`curl … | sh`, docs/risk.md "Unreadable input").
func (a *assessor) runTexts(name string, texts []string, depth int) {
	for _, s := range texts {
		if s == fileInput {
			continue // a script file on standard input, not read (docs/risk.md, "Limits")
		}
		if strings.Contains(s, unknownMark) {
			a.note(Catastrophic, name, "", name+" runs text from a command the gate cannot read; refused in every permission mode — run the commands directly")
			continue
		}
		a.text(s, depth+1)
	}
}
