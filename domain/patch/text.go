package patch

import (
	"bytes"
	"strings"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// line is one logical line and the terminator it had in the file ("\n", "\r\n", or "" for
// a last line without a final newline). Keeping each line's own terminator means lines the
// patch does not touch come out byte for byte as they went in, even in a file with mixed
// endings.
type line struct {
	text string
	eol  string
}

// document is a file seen as logical lines: hunks match on lines, never on the BOM or on line
// terminators, and encode puts both back as the original file had them.
type document struct {
	bom   bool
	lines []line
	// eol is the terminator new lines get: the file's majority style, LF on a tie or in a
	// file with no line break at all.
	eol string
	// finalNewline is false only for a non-empty file whose last line has no terminator;
	// the updated file keeps that state.
	finalNewline bool
}

func decode(b []byte) document {
	d := document{eol: "\n", finalNewline: true}
	if bytes.HasPrefix(b, utf8BOM) {
		d.bom = true
		b = b[len(utf8BOM):]
	}
	s := string(b)
	var crlf, lf int
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			d.lines = append(d.lines, line{text: s})
			d.finalNewline = false
			break
		}
		text, eol := s[:i], "\n"
		if i > 0 && s[i-1] == '\r' {
			text, eol = s[:i-1], "\r\n"
			crlf++
		} else {
			lf++
		}
		d.lines = append(d.lines, line{text: text, eol: eol})
		s = s[i+1:]
	}
	if crlf > lf {
		d.eol = "\r\n"
	}
	return d
}

func (d document) texts() []string {
	out := make([]string, len(d.lines))
	for i, l := range d.lines {
		out[i] = l.text
	}
	return out
}

func (d document) encode() []byte {
	var b bytes.Buffer
	if d.bom {
		b.Write(utf8BOM)
	}
	for i, l := range d.lines {
		b.WriteString(l.text)
		eol := l.eol
		last := i == len(d.lines)-1
		switch {
		case last && !d.finalNewline:
			eol = ""
		case eol == "":
			// A line that was last without a newline and now has lines after it, or a
			// new line: it gets the file's style.
			eol = d.eol
		}
		b.WriteString(eol)
	}
	return b.Bytes()
}

// replacement swaps n lines at start for the given texts; n == 0 is an insertion.
type replacement struct {
	start, n int
	texts    []string
}

// apply returns the document with the replacements, which are sorted by start and do not
// overlap. New lines get the document's line style; the BOM and the final-newline state stay.
func (d document) apply(reps []replacement) document {
	out := d
	out.lines = make([]line, 0, len(d.lines))
	pos := 0
	for _, r := range reps {
		start := max(r.start, pos)
		out.lines = append(out.lines, d.lines[pos:start]...)
		for _, t := range r.texts {
			out.lines = append(out.lines, line{text: t, eol: d.eol})
		}
		pos = min(max(start+r.n, pos), len(d.lines))
	}
	out.lines = append(out.lines, d.lines[pos:]...)
	return out
}
