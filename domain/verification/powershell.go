package verification

import "strings"

// PowerShell has no pipefail, and when one native command pipes into another,
// $LASTEXITCODE holds only the second one's code. mvdan.cc/sh does not read PowerShell, so
// this reads the small subset a verification command needs: statements (; or a newline),
// pipelines (|), the chain operators && and ||, the call operator &, quoted strings and
// comments. Anything else (script blocks, subexpressions, grouping) is not read, and a claim
// about text that is not read is derived.

type psToken struct {
	kind psKind
	text string
}

type psKind int

const (
	psWord psKind = iota
	psPipe
	psAnd
	psOr
	psSep
	psBackground
)

// powerShell reads a PowerShell command under exitPolicy all (the base claim of every other
// policy is already derived).
func (a *analyzer) powerShell(src string) {
	toks, ok := psTokens(src)
	if !ok {
		a.add(ConstructPowerShellUnread, src, "the command uses PowerShell syntax the analysis does not read (script blocks, subexpressions, grouping or an unterminated string)",
			"write plain commands and pipelines, one per statement")
		return
	}
	var elem []string // the first word of each element of the current pipeline
	start := true     // the next word starts an element
	flush := func() {
		for i := 0; i+1 < len(elem); i++ {
			if psNative(elem[i]) && psNative(elem[i+1]) {
				a.add(ConstructNativePipeline, elem[i]+" | "+elem[i+1], "when a native command pipes into another, $LASTEXITCODE holds only the last one's code",
					"run the first command on its own and write its output to a file, then read that file")
			}
		}
		elem = elem[:0]
	}
	for i, t := range toks {
		switch t.kind {
		case psWord:
			if start {
				elem = append(elem, t.text)
				start = false
			}
		case psPipe:
			start = true
		case psOr:
			a.add(ConstructFallback, "||", "the fallback after || runs when the command fails and its status replaces the failure",
				"drop the fallback")
			flush()
			start = true
		case psAnd:
			if psMoreStatements(toks[i+1:]) {
				a.add(ConstructAndChain, "&&", "a failure on the left of && before the last statement does not stop the run",
					"split the chain into separate statements")
			}
			flush()
			start = true
		case psBackground:
			a.add(ConstructBackground, "&", "a command run with & in the background never reports its status", "run it in the foreground")
			flush()
			start = true
		case psSep:
			flush()
			start = true
		}
	}
	flush()
}

// psMoreStatements reports whether a statement with a word follows.
func psMoreStatements(rest []psToken) bool {
	sep := false
	for _, t := range rest {
		switch t.kind {
		case psSep, psBackground:
			sep = true
		case psWord:
			if sep {
				return true
			}
		}
	}
	return false
}

// psCmdletAliases are the built-in aliases of cmdlets a pipeline commonly ends in.
var psCmdletAliases = map[string]bool{"%": true, "?": true, "where": true, "select": true, "foreach": true,
	"sort": true, "measure": true, "group": true, "ft": true, "fl": true, "fw": true, "write": true, "echo": true}

// psNative reports whether a command word names a native program rather than a cmdlet
// (Verb-Noun) or one of its common aliases. An unrecognised word counts as native: the claim
// then errs toward derived.
func psNative(w string) bool {
	if psCmdletAliases[strings.ToLower(w)] {
		return false
	}
	verb, noun, ok := strings.Cut(w, "-")
	return !(ok && letters(verb) && letters(noun))
}

func letters(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// psTokens splits PowerShell text into the tokens above; false when it meets what it does
// not read.
func psTokens(src string) ([]psToken, bool) {
	var toks []psToken
	atStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\n' || c == ';':
			toks, atStart = append(toks, psToken{kind: psSep}), true
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "<#"):
			end := strings.Index(src[i+2:], "#>")
			if end < 0 {
				return nil, false
			}
			i += end + 4
		case strings.HasPrefix(src[i:], "||"):
			toks, atStart = append(toks, psToken{kind: psOr}), true
			i += 2
		case strings.HasPrefix(src[i:], "&&"):
			toks, atStart = append(toks, psToken{kind: psAnd}), true
			i += 2
		case c == '|':
			toks, atStart = append(toks, psToken{kind: psPipe}), true
			i++
		case c == '&':
			if !atStart { // the call operator starts a statement; anywhere else & backgrounds
				toks, atStart = append(toks, psToken{kind: psBackground}), true
			}
			i++
		case strings.ContainsRune("{}()@$`'\"", rune(c)) && !psWordStart(src[i:]):
			return nil, false
		default:
			w, n, ok := psReadWord(src[i:])
			if !ok {
				return nil, false
			}
			toks, atStart = append(toks, psToken{kind: psWord, text: w}), false
			i += n
		}
	}
	return toks, true
}

// psWordStart: a quote, a variable or an escape may start a word; a brace, a parenthesis, @
// and $( may not.
func psWordStart(s string) bool {
	switch s[0] {
	case '\'', '"', '`':
		return true
	case '$':
		return len(s) > 1 && s[1] != '(' && s[1] != '{'
	}
	return false
}

// psReadWord reads one word: its text with quotes removed, its length, false when it holds a
// construct not read (a subexpression, a script block, an unterminated string).
func psReadWord(s string) (string, int, bool) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case strings.ContainsRune(" \t\r\n;|", rune(c)):
			return b.String(), i, true
		case c == '&':
			if i > 0 && s[i-1] == '>' { // 2>&1
				b.WriteByte(c)
				i++
				continue
			}
			return b.String(), i, true
		case strings.ContainsRune("{}()@", rune(c)):
			return "", 0, false
		case c == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			return "", 0, false
		case c == '`':
			if i+1 >= len(s) {
				return "", 0, false
			}
			b.WriteByte(s[i+1])
			i += 2
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", 0, false
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			n, ok := psDouble(s[i+1:], &b)
			if !ok {
				return "", 0, false
			}
			i += n + 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), i, true
}

// psDouble reads a double-quoted string's body up to its closing quote.
func psDouble(s string, b *strings.Builder) (int, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			return i, true
		case '`':
			i++
		case '$':
			if i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{') {
				return 0, false
			}
		}
		if i < len(s) {
			b.WriteByte(s[i])
		}
	}
	return 0, false
}
