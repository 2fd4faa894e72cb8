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
	var (
		out      []string
		seen     = map[string]bool{}
		word     strings.Builder
		inWord   bool
		tainted  bool // the word holds an expansion or glob
		skipNext bool // the next word is a redirection target or here-string
	)
	end := func() {
		if !inWord {
			return
		}
		w := word.String()
		switch {
		case skipNext:
			skipNext = false
		case !tainted && isPathWord(w) && !seen[w] && len(out) < maxWatchPaths:
			seen[w] = true
			out = append(out, w)
		}
		word.Reset()
		inWord, tainted = false, false
	}
	s := command
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' { // backslash-newline continues the line
					word.WriteByte(s[i])
					inWord = true
				}
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 { // unterminated: bash refuses the command, nothing to observe
				return out
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				switch s[j] {
				case '\\':
					if j+1 < len(s) && strings.IndexByte("$`\"\\\n", s[j+1]) >= 0 {
						j++
						if s[j] != '\n' {
							word.WriteByte(s[j])
						}
						continue
					}
				case '$', '`':
					tainted = true
				}
				word.WriteByte(s[j])
			}
			if j >= len(s) {
				return out
			}
			inWord = true
			i = j
		case c == '`' || (c == '$' && i+1 < len(s) && s[i+1] == '('):
			// A command substitution: its words are the inner command's, and what it
			// prints is the shell's to decide. The outer word is skipped, inner words too.
			tainted, inWord = true, true
			i = substitutionEnd(s, i)
		case c == '$' || c == '*' || c == '?' || c == '[' || c == '{':
			tainted, inWord = true, true
			word.WriteByte(c)
		case c == '~' && !inWord:
			tainted, inWord = true, true
			word.WriteByte(c)
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\r':
			end()
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			end()
		case c == '<' || c == '>':
			if inWord && isDigits(word.String()) && !tainted {
				// "2>err.log": the digits are a file descriptor, not a word.
				word.Reset()
				inWord = false
			}
			end()
			if strings.HasPrefix(s[i:], "<<<") {
				i += 2
			} else if strings.HasPrefix(s[i:], "<<") {
				// A here-document: its body is data, and where it ends is the shell's
				// business. Stop here.
				return out
			} else if i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '&' || s[i+1] == '|' || (c == '<' && s[i+1] == '>')) {
				i++
			}
			skipNext = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	end()
	return out
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
