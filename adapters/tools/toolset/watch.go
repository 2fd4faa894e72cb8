package toolset

import "strings"

// maxWatchPaths bounds how many paths one command has observed before and after it runs.
const maxWatchPaths = 64

// watchPaths returns the words of a shell command that name a path literally: the paths the
// shell adapter observes before and after the run, reporting those whose observations differ
// as writtenPaths (a shell call reports what it wrote; see docs/tools.md).
//
// It is deliberately a lower bound. A word is skipped, not guessed at, when the shell decides
// what it names: anything with an unquoted or double-quoted expansion ($OUT, $(ls), `ls`),
// a glob (*.rs, file?.go, [ab].c), brace expansion or a leading ~; redirection targets and
// here-strings; everything from a here-document on; and words that are options ("-i",
// "--out=x") or assignments. A missed path costs a piece of evidence; an invented one would
// invalidate a credential for a file nobody touched, and since the adapter reports only
// what it observed changing, a word that is not really a path costs nothing.
func watchPaths(command string) []string {
	l := pathLexer{s: command, seen: map[string]bool{}}
	for i := 0; i < len(l.s); i++ {
		var ok bool
		if i, ok = l.step(i); !ok {
			return l.out // unterminated quoting or a here-document: nothing more to observe
		}
	}
	l.end()
	return l.out
}

// pathLexer splits command text into words the way the shell does, as far as watchPaths needs.
type pathLexer struct {
	s        string
	out      []string
	seen     map[string]bool
	word     strings.Builder
	inWord   bool
	tainted  bool // the word holds an expansion or glob
	skipNext bool // the next word is a redirection target or here-string
}

// step reads the byte at i (and whatever it opens) and returns the index of the last byte it
// consumed; false stops the scan.
func (l *pathLexer) step(i int) (int, bool) {
	s, c := l.s, l.s[i]
	switch {
	case c == '\\':
		if i+1 < len(s) {
			i++
			if s[i] != '\n' { // backslash-newline continues the line
				l.word.WriteByte(s[i])
				l.inWord = true
			}
		}
	case c == '\'':
		j := strings.IndexByte(s[i+1:], '\'')
		if j < 0 { // unterminated: bash refuses the command, nothing to observe
			return i, false
		}
		l.word.WriteString(s[i+1 : i+1+j])
		l.inWord = true
		i += j + 1
	case c == '"':
		return l.doubleQuoted(i)
	case c == '`' || (c == '$' && i+1 < len(s) && s[i+1] == '('):
		// A command substitution: its words are the inner command's, and what it
		// prints is the shell's to decide. The outer word is skipped, inner words too.
		l.tainted, l.inWord = true, true
		i = substitutionEnd(s, i)
	case c == '$' || c == '*' || c == '?' || c == '[' || c == '{':
		l.tainted, l.inWord = true, true
		l.word.WriteByte(c)
	case c == '~' && !l.inWord:
		l.tainted, l.inWord = true, true
		l.word.WriteByte(c)
	case c == '#' && !l.inWord:
		for i < len(s) && s[i] != '\n' {
			i++
		}
	case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
		l.end()
	case c == '<' || c == '>':
		return l.redirect(i)
	default:
		l.word.WriteByte(c)
		l.inWord = true
	}
	return i, true
}

// doubleQuoted reads a double-quoted string from the quote at i: its text joins the word, an
// expansion in it taints the word.
func (l *pathLexer) doubleQuoted(i int) (int, bool) {
	s := l.s
	j := i + 1
	for ; j < len(s) && s[j] != '"'; j++ {
		switch s[j] {
		case '\\':
			if j+1 < len(s) && strings.IndexByte("$`\"\\\n", s[j+1]) >= 0 {
				j++
				if s[j] != '\n' {
					l.word.WriteByte(s[j])
				}
				continue
			}
		case '$', '`':
			l.tainted = true
		}
		l.word.WriteByte(s[j])
	}
	if j >= len(s) {
		return j, false
	}
	l.inWord = true
	return j, true
}

// redirect reads a redirection operator at i: its target word is skipped; a here-document
// stops the scan (its body is data, and where it ends is the shell's business).
func (l *pathLexer) redirect(i int) (int, bool) {
	s, c := l.s, l.s[i]
	if l.inWord && isDigits(l.word.String()) && !l.tainted {
		// "2>err.log": the digits are a file descriptor, not a word.
		l.word.Reset()
		l.inWord = false
	}
	l.end()
	switch {
	case strings.HasPrefix(s[i:], "<<<"):
		i += 2
	case strings.HasPrefix(s[i:], "<<"):
		return i, false
	case i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '&' || s[i+1] == '|' || (c == '<' && s[i+1] == '>')):
		i++
	}
	l.skipNext = true
	return i, true
}

// end closes the current word: kept when it is a literal path word not seen yet.
func (l *pathLexer) end() {
	if !l.inWord {
		return
	}
	w := l.word.String()
	switch {
	case l.skipNext:
		l.skipNext = false
	case !l.tainted && isPathWord(w) && !l.seen[w] && len(l.out) < maxWatchPaths:
		l.seen[w] = true
		l.out = append(l.out, w)
	}
	l.word.Reset()
	l.inWord, l.tainted = false, false
}

// substitutionEnd returns the index of the byte that closes the command substitution starting
// at s[i] (`…` or $(…), nested parentheses counted, quotes skipped), or the last index when it
// is not closed.
func substitutionEnd(s string, i int) int {
	if s[i] == '`' {
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '`':
				return j
			}
		}
		return len(s) - 1
	}
	depth := 0
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			if k := strings.IndexByte(s[j+1:], '\''); k >= 0 {
				j += k + 1
			}
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return len(s) - 1
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPathWord keeps words that could name a file: not options, assignments, URLs or the
// directory names "." and "..".
func isPathWord(w string) bool {
	switch {
	case w == "" || w == "." || w == "..":
		return false
	case strings.HasPrefix(w, "-"), strings.Contains(w, "="), strings.Contains(w, "://"):
		return false
	}
	return true
}
