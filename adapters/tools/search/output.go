package search

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Result is what a glob or grep call returns.
type Result struct {
	// Output is the complete rendered output. When Withheld is nil it goes to the model as
	// is; otherwise the caller stores it, byte for byte, as the withheld-output artifact and
	// gives the model Withheld.Notice(path) instead. It is never cut to fit the caps.
	Output string
	// Withheld is set when Output exceeds tool_output.max_bytes or max_lines.
	Withheld *Withheld

	// Paths are the returned files, root-relative and slash-separated, in output order:
	// the matched files for glob, the files holding the returned matches for grep.
	Paths []string
	// Matches are grep's returned matching lines (not context lines), in output order.
	Matches []Match

	Returned int // results in the output: paths for glob, matching lines for grep
	Found    int // results rg found whose paths can be named (≥ Returned)
	// Truncated is true when any result was dropped: by the limit, by an unnameable path,
	// or with an rg record longer than MaxRecordBytes. The output says so too.
	Truncated bool
	// ExcludedNames counts files left out because their names are not valid UTF-8.
	ExcludedNames int
	// SkippedRecords counts rg records longer than MaxRecordBytes, which are skipped.
	SkippedRecords int
	// Outside counts files left out because the check after the search did not find them
	// beneath the searched directory as rg reported them (a name that is not a regular file
	// there, or a grep line that is not that file's line): what a directory swapped for a
	// link while rg walked it would have shown. Found does not count them.
	Outside int
}

// Match is one matching line.
type Match struct {
	Path string
	Line int
	// Text is the line without its terminator, invalid UTF-8 replaced by U+FFFD, cut to
	// MaxLineUnits UTF-16 code units (then ending in "...").
	Text string
}

// Withheld describes output held back from the model because it crossed a cap.
type Withheld struct {
	Bytes    int    // measured size of Output
	Lines    int    // measured lines of Output
	Exceeded string // the cap crossed: "max_bytes" or "max_lines" (bytes first if both)
	MaxBytes int
	MaxLines int
}

// Notice is the message the model gets in place of withheld output stored at outputPath.
func (w *Withheld) Notice(outputPath string) string {
	limit := w.MaxBytes
	unit := "bytes"
	if w.Exceeded == "max_lines" {
		limit, unit = w.MaxLines, "lines"
	}
	return fmt.Sprintf("Output withheld: it is %d bytes in %d lines, over tool_output.%s (%d %s). "+
		"Nothing was cut: all %d bytes are saved at %s. Read them back a window at a time with "+
		"bg {\"action\": \"artifact\", \"outputPath\": %s} (no cursor starts at byte 0; each answer gives the next cursor), "+
		"or narrow the pattern, path or include.",
		w.Bytes, w.Lines, w.Exceeded, limit, unit, w.Bytes, outputPath, strconv.Quote(outputPath))
}

// withhold sets r.Withheld if r.Output crosses a cap.
func (s *Searcher) withhold(r *Result) {
	b := len(r.Output)
	lines := strings.Count(r.Output, "\n")
	if b > 0 && !strings.HasSuffix(r.Output, "\n") {
		lines++
	}
	w := &Withheld{Bytes: b, Lines: lines, MaxBytes: s.maxBytes(), MaxLines: s.maxLines()}
	switch {
	case b > w.MaxBytes:
		w.Exceeded = "max_bytes"
	case lines > w.MaxLines:
		w.Exceeded = "max_lines"
	default:
		return
	}
	r.Withheld = w
}

// showPath renders a path identifier on one line. Paths holding a control character
// (a newline is a legal name byte) or starting with a double quote are shown Go-quoted,
// so every path stays one unambiguous line; Result.Paths holds the names unquoted.
func showPath(p string) string {
	if strings.HasPrefix(p, `"`) || strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

// clipLine cuts s to MaxLineUnits UTF-16 code units, never inside a surrogate pair.
func clipLine(s string) string {
	if len(s) <= MaxLineUnits { // bytes ≥ code units
		return s
	}
	units := 0
	for i, r := range s {
		n := max(utf16.RuneLen(r), 1)
		if units+n > MaxLineUnits {
			return s[:i] + "..."
		}
		units += n
	}
	return s
}

// plural1 chooses one or many by n without the number.
func plural1(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func validLine(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
