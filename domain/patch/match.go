package patch

import "strings"

// Hunks find their place by logical lines, in Codex's order of decreasing strictness: exact,
// then ignoring trailing whitespace, then ignoring surrounding whitespace, then also folding
// typographic punctuation to ASCII. The first position that matches at the strictest level
// wins, so a fuzzy match never beats an exact one further down the file.
var matchLevels = []func(string) string{
	func(s string) string { return s },
	func(s string) string { return strings.TrimRight(s, whitespace) },
	strings.TrimSpace,
	normalise,
}

// whitespace is what Rust's str::trim_end removes for the ASCII range plus the Unicode spaces
// models paste; strings.TrimSpace handles the leading side of the same set.
const whitespace = " \t\n\v\f\r\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

// normalise folds the punctuation that models and word processors swap for one another.
func normalise(s string) string {
	s = strings.TrimSpace(s)
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			return '-'
		case '\u2018', '\u2019', '\u201A', '\u201B':
			return '\''
		case '\u201C', '\u201D', '\u201E', '\u201F':
			return '"'
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, s)
}

// seek returns where pattern occurs in lines at or after start. With eof the pattern must be
// the last lines of the file, as "*** End of File" demands. An empty pattern matches at
// start.
func seek(lines, pattern []string, start int, eof bool) (int, bool) {
	if len(pattern) == 0 {
		return start, true
	}
	last := len(lines) - len(pattern)
	if last < 0 {
		return 0, false
	}
	from := start
	if eof {
		from = last
		if from < start {
			// The end of the file lies before an earlier hunk's change; matching there
			// would overlap it.
			return 0, false
		}
	}
	for _, level := range matchLevels {
		for i := from; i <= last; i++ {
			if matchAt(lines, pattern, i, level) {
				return i, true
			}
		}
	}
	return 0, false
}

func matchAt(lines, pattern []string, at int, level func(string) string) bool {
	for j, p := range pattern {
		if level(lines[at+j]) != level(p) {
			return false
		}
	}
	return true
}

// Candidate is the part of the file that looks most like what a hunk expected: what the model
// should read before writing a smaller patch.
type Candidate struct {
	// Line is the 1-based line of the file where the candidate starts.
	Line int
	// Lines are the file's lines there (at most maxCandidateLines).
	Lines []string
	// Matching counts the expected lines equal to the file's, ignoring whitespace and
	// typographic punctuation.
	Matching int
}

const (
	maxCandidateLines = 20
	// maxCandidateWork bounds the search for a candidate (window positions times pattern
	// lines), so a huge file costs a missing hint rather than a slow tool call.
	maxCandidateWork = 2_000_000
)

// nearest finds the window of len(pattern) lines most similar to pattern, line by line. It
// returns nil when nothing resembles it. Scores are integers so that the same inputs pick
// the same candidate on every platform (a replayed decision must not depend on float fusing).
func nearest(lines, pattern []string) *Candidate {
	if len(lines) == 0 || len(pattern) == 0 {
		return nil
	}
	width := min(len(pattern), len(lines))
	positions := len(lines) - width + 1
	if positions*width > maxCandidateWork {
		return nil
	}
	normLines := make([]string, len(lines))
	for i, l := range lines {
		normLines[i] = normalise(l)
	}
	normPattern := make([]string, len(pattern))
	for i, p := range pattern {
		normPattern[i] = normalise(p)
	}
	bestAt, bestScore, bestMatching := -1, 0, 0
	for at := 0; at < positions; at++ {
		score, matching := 0, 0
		for j := 0; j < width; j++ {
			a, b := normLines[at+j], normPattern[j]
			switch {
			case a == b && a != "":
				matching++
				score += 1000
			case a == b:
				// Blank lines match everywhere; they only break ties.
				matching++
				score += 100
			default:
				score += similarity(a, b)
			}
		}
		if score > bestScore {
			bestAt, bestScore, bestMatching = at, score, matching
		}
	}
	if bestAt < 0 || bestScore < 500 {
		return nil
	}
	n := min(width, maxCandidateLines)
	return &Candidate{Line: bestAt + 1, Lines: append([]string(nil), lines[bestAt:bestAt+n]...), Matching: bestMatching}
}

// similarity scores 0..900 by the share of the longer line covered by the common prefix and
// suffix: cheap, and enough to rank "the same line with one word changed" above an unrelated
// line.
func similarity(a, b string) int {
	longest := max(len(a), len(b))
	if longest == 0 {
		return 0
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return (p + s) * 900 / longest
}
