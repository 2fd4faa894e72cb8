package risk

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Input the gate cannot read: a file or a descriptor on standard input, and paths through an
// open descriptor. A deleter fed its targets this way (`xargs rm -rf < list`, `exec < list;
// xargs rm -rf`, `rm -rf /dev/fd/3/`) is refused: the gate does not vouch for what it cannot
// read (docs/risk.md, "How the command is read").

// fileInput stands for standard input read from a file or a descriptor (`< FILE`, `<&3`). It
// holds unknownMark, so what reads it as data (xargs, read, mapfile, parallel, base64 -d)
// finds it unreadable; a shell or an interpreter reading it as its program runs a script
// file, which the gate does not read (docs/risk.md, "Limits").
const fileInput = unknownMark + "\x05"

// unreadInput says a text on standard input is one the gate cannot read.
func unreadInput(s string) bool { return s == unknownMark || s == fileInput }

// asData is standard input passed on as data (cat of it, or a pipe): a file is then
// unreadable text like any other.
func asData(texts []string) []string {
	if texts == nil {
		return nil
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = t
		if t == fileInput {
			out[i] = unknownMark
		}
	}
	return out
}

// inputFrom is what an input redirection gives standard input: what <(…) prints, nothing
// from /dev/null, and otherwise a file or a descriptor the gate cannot read. A redirection of
// another descriptor (`3< FILE`) gives standard input nothing.
func (a *assessor) inputFrom(r *syntax.Redirect) []string {
	if r.N != nil && r.N.Value != "0" {
		return nil
	}
	if r.Op == syntax.DplIn {
		if r.Word.Lit() == "-" { // <&- closes standard input
			return nil
		}
		return []string{fileInput}
	}
	var texts []string
	for _, rd := range a.unsplit(r.Word) {
		switch {
		case strings.HasPrefix(rd.text, procMark):
			texts = append(texts, a.procOut[rd.text]...)
		case rd.exact && rd.text == "/dev/null":
			texts = append(texts, "")
		default:
			texts = append(texts, fileInput)
		}
	}
	return texts
}

// execRedirects: `exec < FILE` (exec with redirections and no command) gives every later
// command of the shell that standard input (`exec < list; xargs rm -rf`).
func (a *assessor) execRedirects(argv []arg, s *syntax.Stmt) {
	if len(argv) != 1 || len(s.Redirs) == 0 {
		return
	}
	if t, ok := argv[0].exact(); !ok || t != "exec" {
		return
	}
	if texts := a.stdin(s); len(texts) > 0 {
		a.shellStdin = texts
	}
}

// descriptorLink matches a path that is whatever an open descriptor is open on: /dev/fd/N,
// /dev/stdin, /dev/stdout, /dev/stderr, /proc/self/fd/N, /proc/PID/fd/N.
var descriptorLink = regexp.MustCompile(`^(?:/dev/fd/[^/]+|/dev/std(?:in|out|err)|/proc/(?:self|thread-self|[0-9]+)/fd/[^/]+)$`)

// throughDescriptor says the path t (absolute, not cleaned) goes through a descriptor's link
// to what it is open on: `/dev/fd/3/`, `/dev/stdin/x`, `/dev/fd/3/..`. The link alone
// (`/dev/stdout`, dd's of=) is the descriptor itself. A process substitution's name is a pipe.
func throughDescriptor(t string) bool {
	if strings.HasPrefix(t, procMark) || !strings.Contains(t, "/") {
		return false
	}
	segs := strings.Split(t, "/")
	for i := 2; i < len(segs); i++ {
		if descriptorLink.MatchString(cleanPath(strings.Join(segs[:i], "/"))) {
			return true // a segment follows the link: a slash, a name, ..
		}
	}
	return false
}

// viaDescriptor is throughDescriptor for a reading, placed against the working directory.
func (a *assessor) viaDescriptor(r reading) bool {
	t := a.throughLinks(r.text) // `ln -s /dev/fd/3 h; rm -rf h/`
	if !strings.HasPrefix(t, "/") {
		if a.cwd == nil {
			return false
		}
		t = a.cwd.text + "/" + t
	}
	if r.glob && !strings.HasSuffix(t, "/") {
		t += "/" // the contents of what it names
	}
	return throughDescriptor(t)
}

// xdgDefaults are the XDG base directories under the home directory, where the environment
// does not move them.
var xdgDefaults = map[string]string{"XDG_DATA_HOME": ".local/share", "XDG_CONFIG_HOME": ".config",
	"XDG_STATE_HOME": ".local/state", "XDG_CACHE_HOME": ".cache"}

// xdgValue reads an XDG base directory the text does not assign. The shell inherits Zuno's
// environment, so $XDG_DATA_HOME is the directory above Zuno's data directory (Zuno puts it
// at $XDG_DATA_HOME/zuno: `rm -rf "$XDG_DATA_HOME/zuno"`), or the default under the home
// directory; the others are their defaults (docs/risk.md, "Zuno's own data").
func (a *assessor) xdgValue(name string) ([]reading, bool) {
	rel, ok := xdgDefaults[name]
	if !ok {
		return nil, false
	}
	var out []reading
	if name == "XDG_DATA_HOME" {
		for _, z := range a.zuno {
			if path.Base(z) == "zuno" {
				out = append(out, reading{text: path.Dir(z), exact: true})
			}
		}
	}
	def := reading{text: a.home + "/" + rel, exact: true}
	if !slices.Contains(out, def) {
		out = append(out, def)
	}
	return out, true
}
