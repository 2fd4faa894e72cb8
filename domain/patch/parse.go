// Package patch is the pure core of the apply_patch tool: it parses the patch text (the
// format of OpenAI Codex's apply_patch) and plans its effect on a snapshot of the files it
// touches, checking every file before anything may be written (apply_patch conflict recovery:
// see "Read credentials and `stale_read`" in docs/tools.md). It does no I/O: the caller loads
// the snapshot and the model's read credentials under the mutation lock, and writes the
// plan's bytes. A failure after writing has begun is the caller's Uncertain result, not
// something this package can see.
//
// Where Zuno departs from Codex, on purpose:
//   - Nothing is written unless every operation can be applied (Codex applies operations
//     one by one and keeps the earlier ones when a later one fails).
//   - Existing files need a read credential before they are updated, deleted, moved or
//     overwritten, and a stale one is a conflict.
//   - An updated file keeps its BOM, its line endings and the presence or absence of a final
//     newline (Codex always writes LF and a final newline).
//   - A pure-addition hunk under "@@ <context>" is inserted right after the context line
//     (Codex appends it at the end of the file whatever the context says).
//   - Each path appears in one operation only, paths are workspace-relative, a patch with
//     no operations is invalid, and an operation that changes nothing is a conflict.
//   - An Update File with a Move to and no hunks is a plain rename.
package patch

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// CodeInvalidArgument is the code of a patch that cannot be parsed. It is the same code the
// other tools' argument errors carry (package domain's CodeInvalidArgument), so a client needs
// one rule for "the model sent bad arguments".
const CodeInvalidArgument = domain.CodeInvalidArgument

// Error is a patch the parser rejects (an invalid argument, CodeInvalidArgument): nothing was
// planned, and the model has to send a corrected patch.
type Error struct {
	// Line is the 1-based line of the patch text at fault.
	Line int
	// Message says what is wrong; Fix says how to write it instead.
	Message string
	Fix     string
}

// Code returns the stable error code.
func (e *Error) Code() string { return CodeInvalidArgument }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(CodeInvalidArgument)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": patch line %d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

func invalid(line int, fix, format string, args ...any) *Error {
	return &Error{Line: line, Message: fmt.Sprintf(format, args...), Fix: fix}
}

// Patch is a parsed patch: its operations in the order they were written.
type Patch struct {
	Ops []Op
}

// Op is one file operation: *Add, *Delete or *Update.
type Op interface {
	// Target is the path the operation names in its header.
	Target() string
	// HeaderLine is the 1-based line of the operation's header in the patch text.
	HeaderLine() int
}

// Add creates a file, or replaces an existing one (which must have been read).
type Add struct {
	Path string
	// Content is the file's exact bytes: each "+" line followed by "\n". It is written as
	// given even over an existing file: Add File replaces a file rather than editing it, so
	// the old file's BOM and line endings do not carry over.
	Content string
	Line    int
}

// Delete removes a file.
type Delete struct {
	Path string
	Line int
}

// Update edits a file in place, or moves it to MoveTo with the edits applied.
type Update struct {
	Path   string
	MoveTo string
	Chunks []Chunk
	Line   int
}

// Chunk is one "@@" hunk of an Update.
type Chunk struct {
	// Context is the text after "@@ ": a line that must occur before Old, used to narrow
	// down where Old is. Empty when the hunk starts with a bare "@@" or with no "@@" at all.
	Context string
	// Old is the lines the hunk expects (context and "-" lines); New replaces them (context
	// and "+" lines). An empty Old is a pure addition.
	Old, New []string
	// EndOfFile is "*** End of File": Old must be the last lines of the file.
	EndOfFile bool
	// Line is the 1-based line where the hunk starts in the patch text.
	Line int
}

func (a *Add) Target() string    { return a.Path }
func (d *Delete) Target() string { return d.Path }
func (u *Update) Target() string { return u.Path }

func (a *Add) HeaderLine() int    { return a.Line }
func (d *Delete) HeaderLine() int { return d.Line }
func (u *Update) HeaderLine() int { return u.Line }

const (
	beginMarker     = "*** Begin Patch"
	endMarker       = "*** End Patch"
	addMarker       = "*** Add File:"
	deleteMarker    = "*** Delete File:"
	updateMarker    = "*** Update File:"
	moveMarker      = "*** Move to:"
	endOfFileMarker = "*** End of File"
)

const headerFix = "start each operation with '*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>'"

// unifiedHunkHeader is a `diff -u` hunk header. apply_patch hunks carry no line numbers, and
// Codex would search for the header's text as a context line and fail with a confusing
// mismatch, so it is refused where the model can see why.
var unifiedHunkHeader = regexp.MustCompile(`^-\d+(,\d+)? \+\d+(,\d+)? @@`)

// Parse reads a patch. It is as lenient as Codex about whitespace around markers, a heredoc
// wrapper (<<'EOF' ... EOF), CRLF line breaks and blank lines between operations, and
// stricter about what Codex would only discover while writing: an empty patch, unsafe paths,
// and a path named by two operations.
func Parse(text string) (*Patch, error) {
	p, err := parse(text)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func parse(text string) (*Patch, *Error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	first, last := 0, len(lines)-1
	for first <= last && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	for last >= first && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	if first > last {
		return nil, invalid(1, "send a patch that starts with '*** Begin Patch' and ends with '*** End Patch'", "the patch is empty")
	}
	if err := checkBoundaries(lines, first, last); err != nil {
		// A model that wrote the patch as a shell heredoc still meant the patch inside it.
		h := strings.TrimSpace(lines[first])
		if (h == "<<EOF" || h == "<<'EOF'" || h == `<<"EOF"`) && strings.HasSuffix(strings.TrimSpace(lines[last]), "EOF") && last-first >= 3 {
			if inner := checkBoundaries(lines, first+1, last-1); inner != nil {
				return nil, inner
			}
			first, last = first+1, last-1
		} else {
			return nil, err
		}
	}
	p := &Patch{}
	i := first + 1
	for i < last {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		op, next, err := parseOp(lines, i, last)
		if err != nil {
			return nil, err
		}
		p.Ops = append(p.Ops, op)
		i = next
	}
	if len(p.Ops) == 0 {
		return nil, invalid(last+1, "put at least one operation between the markers; "+headerFix, "the patch has no file operations")
	}
	if err := p.validate(true); err != nil {
		return nil, err
	}
	return p, nil
}

func checkBoundaries(lines []string, first, last int) *Error {
	if strings.TrimSpace(lines[first]) != beginMarker {
		return invalid(first+1, "make '*** Begin Patch' the first line", "the first line is %q, not %q", clip(lines[first]), beginMarker)
	}
	if first == last || strings.TrimSpace(lines[last]) != endMarker {
		return invalid(last+1, "make '*** End Patch' the last line", "the last line is %q, not %q", clip(lines[last]), endMarker)
	}
	return nil
}

// markerArg returns what follows marker on a header line, trimmed.
func markerArg(raw, marker string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(raw), marker)
	if !ok {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// isHeader reports whether a line ends the hunks of the operation before it. Codex stops at
// any line starting with "***"; a header padded with whitespace (scenario 017) counts too,
// where Codex would have read it as a context line.
func isHeader(raw string) bool {
	if strings.HasPrefix(raw, "***") {
		return true
	}
	t := strings.TrimSpace(raw)
	for _, m := range []string{addMarker, deleteMarker, updateMarker, moveMarker} {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	return t == endMarker || t == endOfFileMarker
}

// parseOp parses the operation whose header is lines[i]; body lines end before end. It
// returns the index of the first line after the operation.
func parseOp(lines []string, i, end int) (Op, int, *Error) {
	raw := lines[i]
	if p, ok := markerArg(raw, addMarker); ok {
		add := &Add{Path: p, Line: i + 1}
		var content strings.Builder
		i++
		for ; i < end && strings.HasPrefix(lines[i], "+"); i++ {
			content.WriteString(lines[i][1:])
			content.WriteByte('\n')
		}
		add.Content = content.String()
		// The next line must start the next operation. Blank lines may separate operations,
		// but a blank line followed by more '+' lines is an empty line of the file that lost
		// its '+'.
		next := i
		for next < end && strings.TrimSpace(lines[next]) == "" {
			next++
		}
		if next < end && !isHeader(lines[next]) {
			bad := next
			if next > i {
				bad = i
			}
			return nil, 0, invalid(bad+1, "begin every line of an added file with '+', an empty line too ('+' alone)",
				"line %q of the added file %s does not start with '+'", clip(lines[bad]), p)
		}
		return add, i, nil
	}
	if p, ok := markerArg(raw, deleteMarker); ok {
		return &Delete{Path: p, Line: i + 1}, i + 1, nil
	}
	if p, ok := markerArg(raw, updateMarker); ok {
		return parseUpdate(lines, i, end, p)
	}
	if _, ok := markerArg(raw, moveMarker); ok {
		return nil, 0, invalid(i+1, "put '*** Move to: <path>' on the line right after '*** Update File: <path>'", "'*** Move to:' does not follow an Update File header")
	}
	return nil, 0, invalid(i+1, headerFix, "%q is not an operation header", clip(raw))
}

func parseUpdate(lines []string, i, end int, p string) (Op, int, *Error) {
	u := &Update{Path: p, Line: i + 1}
	i++
	if i < end {
		if m, ok := markerArg(lines[i], moveMarker); ok {
			u.MoveTo = m
			i++
		}
	}
	for i < end {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		if isHeader(lines[i]) {
			break
		}
		c, next, err := parseChunk(lines, i, end, len(u.Chunks) == 0)
		if err != nil {
			return nil, 0, err
		}
		u.Chunks = append(u.Chunks, c)
		i = next
	}
	if len(u.Chunks) == 0 && u.MoveTo == "" {
		return nil, 0, invalid(u.Line, "add at least one hunk ('@@' followed by ' ', '-' and '+' lines), or use '*** Delete File:' / '*** Add File:'",
			"Update File %s has no hunks", p)
	}
	return u, i, nil
}

func parseChunk(lines []string, i, end int, first bool) (Chunk, int, *Error) {
	c := Chunk{Line: i + 1}
	head := strings.TrimRight(lines[i], " \t")
	switch {
	case head == "@@":
		i++
	case strings.HasPrefix(head, "@@ "):
		c.Context = head[3:]
		if unifiedHunkHeader.MatchString(c.Context) {
			return c, 0, invalid(i+1, "write '@@' alone, or '@@ <a line that comes before the change>' such as a function signature",
				"%q is a unified-diff hunk header; apply_patch hunks use no line numbers", clip(lines[i]))
		}
		i++
	case !first:
		return c, 0, invalid(i+1, "start every hunk after the first with '@@' or '@@ <context line>'",
			"expected a '@@' hunk header, got %q", clip(lines[i]))
	}
	n := 0
loop:
	for ; i < end; i++ {
		raw := lines[i]
		if strings.TrimSpace(raw) == endOfFileMarker {
			if n == 0 {
				break
			}
			c.EndOfFile = true
			i++
			break
		}
		if isHeader(raw) {
			break
		}
		switch {
		case raw == "":
			// Codex reads an empty line inside a hunk as an empty context line: editors and
			// models drop the single space of an empty context line.
			c.Old = append(c.Old, "")
			c.New = append(c.New, "")
		case raw[0] == ' ':
			c.Old = append(c.Old, raw[1:])
			c.New = append(c.New, raw[1:])
		case raw[0] == '-':
			c.Old = append(c.Old, raw[1:])
		case raw[0] == '+':
			c.New = append(c.New, raw[1:])
		default:
			if n == 0 {
				return c, 0, invalid(i+1, "begin each hunk line with ' ' (context), '-' (removed) or '+' (added)",
					"unexpected line %q in a hunk", clip(raw))
			}
			break loop
		}
		n++
	}
	if n == 0 {
		return c, 0, invalid(c.Line, "give the hunk at least one ' ', '-' or '+' line", "the hunk has no lines")
	}
	return c, i, nil
}

// clip keeps quoted patch lines in error messages short.
func clip(s string) string {
	const limit = 120
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}

// validate checks the paths and that each names one file. Parse runs it with canonicalize
// set; Plan runs it again without, because a Patch can also be built by hand, and then a
// path that is not already canonical is refused rather than rewritten under the caller.
func (p *Patch) validate(canonicalize bool) *Error {
	if p == nil || len(p.Ops) == 0 {
		return invalid(0, headerFix, "the patch has no file operations")
	}
	type use struct {
		path string
		line int
	}
	var order []use
	seen := map[string]int{}
	claim := func(line int, raw *string, what string) *Error {
		clean, err := cleanPath(line, *raw, what)
		if err != nil {
			return err
		}
		if clean != *raw {
			if !canonicalize {
				return invalid(line, fmt.Sprintf("write it as %q", clean), "%s path %q is not in canonical form", what, clip(*raw))
			}
			*raw = clean
		}
		if prev, dup := seen[clean]; dup {
			return invalid(line, "merge everything that concerns one file into a single operation",
				"%s is already named by the operation on line %d", clean, prev)
		}
		seen[clean] = line
		order = append(order, use{clean, line})
		return nil
	}
	for _, op := range p.Ops {
		var err *Error
		switch op := op.(type) {
		case *Add:
			err = claim(op.Line, &op.Path, "Add File")
		case *Delete:
			err = claim(op.Line, &op.Path, "Delete File")
		case *Update:
			if err = claim(op.Line, &op.Path, "Update File"); err == nil && op.MoveTo != "" {
				err = claim(op.Line+1, &op.MoveTo, "Move to")
			}
			if err == nil && len(op.Chunks) == 0 && op.MoveTo == "" {
				err = invalid(op.Line, "add at least one hunk", "Update File %s has no hunks", op.Path)
			}
		default:
			err = invalid(0, headerFix, "unknown operation %T", op)
		}
		if err != nil {
			return err
		}
	}
	// A path that is both a file and the directory of another file cannot be written in one
	// patch without ordering tricks, so it is refused before anything is planned.
	for _, u := range order {
		for dir := path.Dir(u.path); dir != "."; dir = path.Dir(dir) {
			if prev, ok := seen[dir]; ok {
				return invalid(u.line, "split the patch: change the file and the directory in separate calls",
					"%s is a file in this patch (line %d) and also a directory of %s", dir, prev, u.path)
			}
		}
	}
	return nil
}

// cleanPath returns the canonical workspace-relative slash path. Paths are identifiers the
// caller looks up in the snapshot, so "./a//b" and "a/b" must be the same key, and nothing
// may name a place outside the workspace.
func cleanPath(line int, raw, what string) (string, *Error) {
	const fix = "use a path relative to the workspace root, with '/' between directories, such as src/main.go"
	switch {
	case raw == "":
		return "", invalid(line, fix, "%s has no path", what)
	case strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", invalid(line, fix, "%s path %q contains a control character", what, clip(raw))
	case strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, `\`) || isDrivePath(raw):
		return "", invalid(line, fix, "%s path %q is absolute", what, clip(raw))
	}
	for _, seg := range strings.FieldsFunc(raw, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", invalid(line, fix, "%s path %q leaves the workspace ('..')", what, clip(raw))
		}
		if seg == "~" {
			return "", invalid(line, fix, "%s path %q starts from a home directory", what, clip(raw))
		}
	}
	clean := path.Clean(raw)
	if clean == "." {
		return "", invalid(line, fix, "%s path %q names the workspace itself, not a file", what, clip(raw))
	}
	return clean, nil
}

func isDrivePath(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}
