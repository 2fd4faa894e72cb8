package risk

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Values the text decides with builtins rather than assignments: set --, arrays, printf -v,
// read, the working directory ($PWD, ~+, ~-) and symbolic links the text creates.

// elemSep separates the elements of an array expansion (${x[@]}) inside one reading; bash
// makes each element one argument.
const elemSep = "\x03"

// set [options] [--] ARGS assigns $1, $2, … and $@.
func (a *assessor) set(_ string, argv []arg, _ []string, _ int) {
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		switch {
		case ok && (t == "--" || t == "-"):
			a.positional(argv[i+1:])
			return
		case ok && (t == "-o" || t == "+o"):
			i++
		case ok && len(t) > 1 && (t[0] == '-' || t[0] == '+'):
		default:
			a.positional(argv[i:])
			return
		}
	}
}

// assignArray records x=(a b c), x+=(d) and declare -a x=(…): every element is a possible
// value of $x and ${x[i]}, and the whole list is what ${x[@]} gives.
func (a *assessor) assignArray(name string, arr *syntax.ArrayExpr, appendTo bool) {
	var elems []arg
	for _, e := range arr.Elems {
		if e.Value != nil {
			elems = append(elems, a.word(e.Value)...)
		}
	}
	var all []reading
	for _, g := range elems {
		all = append(all, g...)
	}
	if len(all) == 0 {
		all = []reading{{text: "", exact: true}}
	}
	a.assign(name, a.capReadings(all))
	if appendTo {
		if old, ok := a.arrays[name]; ok {
			elems = append(append([]arg(nil), old...), elems...)
		}
	}
	a.arrays[name] = elems
}

// arrayParam reads ${x[@]}, ${x[*]} and ${x[i]}.
func (a *assessor) arrayParam(p *syntax.ParamExp) []reading {
	idx := ""
	if w, ok := p.Index.(*syntax.Word); ok {
		idx = w.Lit()
	}
	if idx == "@" || idx == "*" {
		elems, ok := a.arrays[p.Param.Value]
		if !ok {
			if vs, ok := a.value(p.Param.Value); ok {
				return vs
			}
			return []reading{{text: ""}}
		}
		return a.elements(elems)
	}
	if n, err := strconv.Atoi(idx); err == nil {
		if elems, ok := a.arrays[p.Param.Value]; ok {
			if n >= 0 && n < len(elems) {
				return append([]reading(nil), elems[n]...)
			}
			return []reading{{text: ""}}
		}
	}
	if vs, ok := a.value(p.Param.Value); ok { // any element
		return vs
	}
	return []reading{{text: ""}}
}

// elements reads an array's elements as one reading per alternative whose fields are the
// elements, each one argument.
func (a *assessor) elements(elems []arg) []reading {
	acc := []reading{{exact: true, fields: true}}
	for k, g := range elems {
		if k > 0 {
			acc = join(acc, []reading{{text: elemSep, exact: true}})
		}
		acc = a.capReadings(join(acc, g))
	}
	return acc
}

// printf -v NAME FORMAT [ARGS] assigns the formatted text to NAME.
func (a *assessor) printf(_ string, argv []arg, _ []string, _ int) {
	if len(argv) < 2 {
		return
	}
	t, _ := argv[1].exact()
	name, rest := "", argv[2:]
	switch {
	case t == "-v" && len(argv) > 2:
		name, _ = argv[2].exact()
		rest = argv[3:]
	case strings.HasPrefix(t, "-v") && len(t) > 2:
		name = t[2:]
	default:
		return
	}
	if name == "" {
		return
	}
	if len(rest) > 0 {
		if t, _ := rest[0].exact(); t == "--" {
			rest = rest[1:]
		}
	}
	var words []string
	for _, g := range rest {
		w, ok := g.exact()
		if !ok {
			a.assign(name, []reading{{text: ""}})
			return
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return
	}
	if v, ok := printfText(words[0], words[1:]); ok {
		a.assign(name, []reading{{text: v, exact: true}})
	} else {
		a.assign(name, []reading{{text: ""}})
	}
}

// printfText formats the way printf does for %s, %b and %%; any other conversion is not
// read (ok false). The format is reused while arguments remain, as bash does.
func printfText(format string, args []string) (string, bool) {
	format = ansiC(format)
	var b strings.Builder
	for {
		used := 0
		for i := 0; i < len(format); i++ {
			if format[i] != '%' {
				b.WriteByte(format[i])
				continue
			}
			if i+1 == len(format) {
				return "", false
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'b':
				if used < len(args) {
					v := args[used]
					if format[i] == 'b' {
						v = ansiC(v)
					}
					b.WriteString(v)
				}
				used++
			default:
				return "", false
			}
		}
		if used == 0 || used >= len(args) {
			return b.String(), true
		}
		args = args[used:]
	}
}

// read [options] [NAME…] assigns what the statement statically reads on standard input: the
// first line, split at IFS, the last name taking the rest; -a NAME makes an array.
func (a *assessor) read(_ string, argv []arg, stdin []string, _ int) {
	shortVal := "adinNptu"
	flags, operands := opts(argv[1:], shortVal)
	delim := "\n"
	if d, ok := optArg(argv[1:], 'd', "", shortVal, nil); ok {
		if t, ok := d.exact(); ok {
			delim = t[:min(1, len(t))]
		}
	}
	var names []string
	for _, g := range operands {
		if t, ok := g.exact(); ok {
			names = append(names, t)
		}
	}
	arrName := ""
	if g, ok := optArg(argv[1:], 'a', "", shortVal, nil); ok {
		arrName, _ = g.exact()
	}
	if len(names) == 0 && arrName == "" {
		names = []string{"REPLY"}
	}
	_ = flags
	ifs := a.ifs()
	if len(stdin) == 0 {
		stdin = []string{unknownMark} // a file, the terminal: nothing the text decides
	}
	for _, s := range stdin {
		if unreadInput(s) {
			// Unknown input: what the names get is unreadable, so a deletion of it is
			// refused (`while read d; do rm -rf "$d"; done < list`, docs/risk.md).
			for _, n := range append(names, arrName) {
				if n != "" {
					a.assign(n, []reading{{text: unknownMark, unread: true}})
				}
			}
			if arrName != "" {
				a.arrays[arrName] = []arg{{{text: unknownMark, unread: true}}}
			}
			continue
		}
		line := s
		if delim != "" {
			line, _, _ = strings.Cut(s, delim)
		} else {
			line, _, _ = strings.Cut(s, "\x00")
		}
		fields := ifsFields(line, ifs)
		if arrName != "" {
			var elems []arg
			var all []reading
			for _, f := range fields {
				elems = append(elems, arg{{text: f, exact: true}})
				all = append(all, reading{text: f, exact: true})
			}
			a.assign(arrName, a.capReadings(append(all, reading{text: "", exact: true})))
			a.arrays[arrName] = elems
		}
		for k, n := range names {
			v := ""
			switch {
			case k == len(names)-1 && k < len(fields):
				v = strings.Join(fields[k:], " ")
				if len(names) == 1 {
					v = strings.Trim(line, " \t\n")
				}
			case k < len(fields):
				v = fields[k]
			}
			a.assign(n, []reading{{text: v, exact: true}})
		}
	}
}

// mapfile/readarray [options] [ARRAY] assigns the lines of standard input to ARRAY (MAPFILE
// by default): one element per line of what the text statically feeds it, an unreadable
// element otherwise (`mapfile -t a <<< ~; rm -rf "${a[0]}"`). -C runs shell text.
func (a *assessor) mapfile(name string, argv []arg, stdin []string, depth int) {
	shortVal := "dnOsuCc"
	_, operands := opts(argv[1:], shortVal)
	if cb, ok := optArg(argv[1:], 'C', "", shortVal, nil); ok {
		a.nested(cb, depth, name+" -C")
	}
	delim := "\n"
	if d, ok := optArg(argv[1:], 'd', "", shortVal, nil); ok {
		delim, _ = d.exact()
	}
	delim = strings.ReplaceAll(delim, "\\n", "\n")
	if delim == "" || delim == "\\n" {
		delim = "\n"
	}
	arr := "MAPFILE"
	if len(operands) > 0 {
		if t, ok := operands[0].exact(); ok {
			arr = t
		}
	}
	if len(stdin) == 0 {
		stdin = []string{unknownMark}
	}
	var elems []arg
	var all []reading
	for _, s := range stdin {
		if unreadInput(s) {
			elems = append(elems, arg{{text: unknownMark, unread: true}})
			all = append(all, reading{text: unknownMark, unread: true})
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(s, delim[:1]), delim[:1]) {
			elems = append(elems, arg{{text: line, exact: true}})
			all = append(all, reading{text: line, exact: true})
		}
	}
	a.assign(arr, a.capReadings(all))
	a.arrays[arr] = elems
}

// link is a symbolic link the text creates: name (absolute, or relative to an unknown
// working directory) points to to.
type link struct{ name, to string }

// ln [options] TARGET [NAME] / TARGET… DIR / -t DIR TARGET…: a symbolic link is remembered
// so a later path through it resolves (`ln -s / r && rm -rf r/`); with -f the link replaces
// what NAME was, which is a write onto NAME.
func (a *assessor) ln(name string, argv []arg, _ []string, _ int) {
	shortVal, longVal := "St", []string{"--suffix", "--target-directory"}
	flags, operands := opts(argv[1:], shortVal, longVal...)
	var dir arg
	if g, ok := optArg(argv[1:], 't', "--target-directory", shortVal, longVal); ok {
		dir = g
	}
	type pair struct {
		to   string
		name []string
	}
	var pairs []pair
	var dests []arg
	base := func(g arg) string {
		t, _ := g.exact()
		return path.Base(t)
	}
	switch {
	case dir != nil:
		d, _ := dir.exact()
		for _, g := range operands {
			t, _ := g.exact()
			pairs = append(pairs, pair{t, []string{d + "/" + base(g)}})
			dests = append(dests, arg{{text: d + "/" + base(g), exact: dir[0].exact && g[0].exact}})
		}
	case len(operands) == 1:
		t, _ := operands[0].exact()
		pairs = append(pairs, pair{t, []string{base(operands[0])}})
	case len(operands) == 2:
		t, _ := operands[0].exact()
		n, _ := operands[1].exact()
		pairs = append(pairs, pair{t, []string{n, n + "/" + path.Base(t)}}) // NAME may be a directory
		dests = append(dests, operands[1])
	case len(operands) > 2:
		d, _ := operands[len(operands)-1].exact()
		for _, g := range operands[:len(operands)-1] {
			t, _ := g.exact()
			pairs = append(pairs, pair{t, []string{d + "/" + base(g)}})
		}
		dests = append(dests, operands[len(operands)-1])
	}
	if flags["-s"] || flags["--symbolic"] {
		for _, p := range pairs {
			for _, n := range p.name {
				a.addLink(n, p.to)
			}
		}
	}
	if flags["-f"] || flags["--force"] {
		for _, g := range dests {
			a.writeOnto(name+" -f", g, operands, "replaces")
		}
	}
}

// addLink remembers name -> to; an empty or unknown part is not remembered (ln fails on it).
func (a *assessor) addLink(name, to string) {
	if name == "" || to == "" || strings.ContainsAny(name+to, unknownMark+"\x00") || path.Base(name) == "." {
		return
	}
	if !strings.HasPrefix(name, "/") && a.cwd != nil {
		name = a.cwd.text + "/" + name
	}
	name = cleanPath(name)
	if !strings.HasPrefix(to, "/") {
		to = path.Join(path.Dir(name), to)
	}
	to = cleanPath(to)
	for i := range a.links {
		if a.links[i].name == name {
			a.links[i].to = to
			return
		}
	}
	if len(a.links) < maxValues {
		a.links = append(a.links, link{name, to})
	}
}

// throughLinks rewrites a path that goes through a link the text created (r/, r/etc, r/*)
// to the path it reaches. The link itself (r, without a slash) is not followed: deleting it
// deletes only the link.
func (a *assessor) throughLinks(t string) string {
	for n := 0; n < 8 && len(a.links) > 0; n++ {
		forms := []string{t}
		if !strings.HasPrefix(t, "/") && a.cwd != nil {
			forms = append(forms, a.cwd.text+"/"+t)
		}
		changed := false
		for _, f := range forms {
			slash := strings.HasSuffix(f, "/")
			c := cleanPath(f)
			for _, l := range a.links {
				if rest, ok := strings.CutPrefix(c, l.name); ok && ((rest == "" && slash) || strings.HasPrefix(rest, "/")) {
					t = l.to + rest
					if rest == "" {
						t += "/"
					}
					changed = true
					break
				}
			}
			if changed {
				break
			}
		}
		if !changed {
			break
		}
	}
	return t
}

// ifsFields splits a line as read does: IFS whitespace (space, tab, newline in IFS) is
// trimmed and collapses, and each other IFS character ends a field, so empty fields between
// them count (IFS=/ read -ra p <<< /home/u gives "", "home", "u"; review 25c), except a
// trailing one.
func ifsFields(line, ifs string) []string {
	isWS := func(r rune) bool { return (r == ' ' || r == '\t' || r == '\n') && strings.ContainsRune(ifs, r) }
	isDelim := func(r rune) bool { return strings.ContainsRune(ifs, r) && !isWS(r) }
	runes := []rune(strings.TrimFunc(line, isWS))
	var out []string
	var cur strings.Builder
	skipWS := func(i int) int {
		for i+1 < len(runes) && isWS(runes[i+1]) {
			i++
		}
		return i
	}
	for i := 0; i < len(runes); i++ {
		switch r := runes[i]; {
		case isDelim(r):
			out = append(out, cur.String())
			cur.Reset()
			i = skipWS(i)
		case isWS(r):
			j := skipWS(i)
			if j+1 < len(runes) && isDelim(runes[j+1]) {
				i = j // whitespace next to a delimiter is part of it
				continue
			}
			out = append(out, cur.String())
			cur.Reset()
			i = j
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
