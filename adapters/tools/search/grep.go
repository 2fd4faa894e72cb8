package search

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GrepRequest holds the grep tool's arguments.
type GrepRequest struct {
	// Pattern is an rg regular expression (Rust regex syntax), matched one line at a time.
	Pattern string
	// Path is the directory or file to search: relative to the workspace root, or absolute
	// inside it. Empty means the root.
	Path string
	// ExternalRoot is as for GlobRequest: a Path outside the workspace under it is searched.
	ExternalRoot string
	// Include, if set, is an rg --glob glob choosing the files searched (e.g. "*.go",
	// "*.{ts,tsx}"), matched relative to Path. It does not apply when Path is a file.
	Include string
	// CaseInsensitive matches without regard to case.
	CaseInsensitive bool
	// Context is how many lines to show before and after each match (clamped to MaxContext).
	Context int
	// Limit is how many matching lines to return; 0 means DefaultLimit.
	Limit int
}

// Grep searches the files under req.Path for lines matching req.Pattern. Matches are grouped
// by file, files sorted by path and lines by number; each path appears once.
func (s *Searcher) Grep(ctx context.Context, req GrepRequest) (Result, error) {
	req, limit, err := checkGrep(req)
	if err != nil {
		return Result{}, err
	}
	t, err := s.resolve(req.Path, req.ExternalRoot)
	if err != nil {
		return Result{}, err
	}
	defer t.close()
	hits := &grepHits{t: t, files: map[string]*fileHits{}, invalidNames: map[string]bool{}}
	st, err := s.run(ctx, t, grepArgs(req), '\n', hits.record,
		func(head []byte) bool { return bytes.HasPrefix(head, matchPrefix) })
	if err != nil {
		return Result{}, err
	}
	if st.exit > 1 && st.stderr != "" {
		return Result{}, rgError(st, "include")
	}
	if hits.decodeErr != nil {
		return Result{}, fmt.Errorf("search: decoding rg --json output: %w", hits.decodeErr)
	}
	r := Result{ExcludedNames: len(hits.invalidNames), SkippedRecords: st.skipped}
	body := s.showHits(t, hits.sorted(), limit, req.Context, &r)
	r.Truncated = r.Returned < r.Found || r.ExcludedNames > 0 || st.skipped > 0 || r.Outside > 0
	r.Output = grepOutput(r, len(hits.files)-r.Outside, body)
	s.withhold(&r)
	return r, nil
}

// checkGrep refuses a request rg would misread and returns it with its context clamped, and
// its result limit.
func checkGrep(req GrepRequest) (GrepRequest, int, error) {
	if err := checkPattern(req.Pattern); err != nil {
		return req, 0, err
	}
	if strings.ContainsRune(req.Include, 0) {
		return req, 0, invalid("include", "include contains a NUL byte")
	}
	if req.Context < 0 {
		return req, 0, invalid("context", "context must not be negative")
	}
	req.Context = min(req.Context, MaxContext)
	limit, err := resultLimit(req.Limit)
	return req, limit, err
}

// grepHits gathers rg's records by file, as it writes them: consecutive records of one file
// share its name's check, and a name that does not lie beneath the search is left out.
type grepHits struct {
	t            target
	files        map[string]*fileHits
	invalidNames map[string]bool
	last         *fileHits
	lastRaw      []byte
	decodeErr    error
	dec          decoder
}

func (g *grepHits) record(rec []byte) {
	r, ok, err := g.dec.decode(rec)
	if err != nil && g.decodeErr == nil {
		g.decodeErr = err
	}
	if !ok {
		return
	}
	raw := r.Path
	if g.lastRaw != nil && bytes.Equal(raw, g.lastRaw) {
		if g.last != nil {
			g.last.add(r)
		}
		return
	}
	g.lastRaw = append(g.lastRaw[:0], raw...)
	name, ok := g.t.name(raw)
	if !ok {
		g.invalidNames[string(raw)] = true
		g.last = nil
		return
	}
	f := g.files[name]
	if f == nil {
		f = &fileHits{name: name}
		g.files[name] = f
	}
	f.add(r)
	g.last = f
}

// sorted is the files in path order.
func (g *grepHits) sorted() []*fileHits {
	order := make([]*fileHits, 0, len(g.files))
	for _, f := range g.files {
		order = append(order, f)
	}
	slices.SortFunc(order, func(a, b *fileHits) int { return strings.Compare(a.name, b.name) })
	return order
}

// showHits writes the files' lines, up to limit matching lines, each file's lines checked
// again beneath the searched handle first (docs/tools.md, "glob and grep"); it counts what it
// returns, finds and leaves out in r.
func (s *Searcher) showHits(t target, order []*fileHits, limit, context int, r *Result) string {
	found := 0
	for _, f := range order {
		found += f.matches
	}
	var body strings.Builder
	for _, f := range order {
		if r.Returned == limit {
			break
		}
		slices.SortFunc(f.lines, func(a, b hit) int { return a.num - b.num })
		lines, kept := f.shown(limit-r.Returned, context)
		if !s.linesBeneath(t, f.name, lines) {
			r.Outside++
			found -= f.matches
			continue
		}
		for _, h := range lines {
			if !h.context && kept > 0 {
				kept--
				r.Returned++
				r.Matches = append(r.Matches, Match{Path: f.name, Line: h.num, Text: h.text})
			}
		}
		r.Paths = append(r.Paths, f.name)
		if body.Len() > 0 {
			body.WriteByte('\n')
		}
		writeFileLines(&body, f.name, lines)
	}
	r.Found = found
	return body.String()
}

// writeFileLines writes one file's lines: its path, then "Line N: text" for a match and
// "Line N- text" for context, with "--" between runs that are not adjacent.
func writeFileLines(body *strings.Builder, name string, lines []hit) {
	body.WriteString(showPath(name))
	body.WriteString(":\n")
	prev := -1
	for _, h := range lines {
		if prev >= 0 && h.num > prev+1 {
			body.WriteString("  --\n")
		}
		prev = h.num
		sep := ": "
		if h.context {
			sep = "- "
		}
		body.WriteString("  Line ")
		body.WriteString(strconv.Itoa(h.num))
		body.WriteString(sep)
		body.WriteString(h.text)
		body.WriteByte('\n')
	}
}

// grepOutput is the text the model reads: a count, the files' lines, and what was cut or left
// out.
func grepOutput(r Result, nFiles int, body string) string {
	var b strings.Builder
	switch {
	case r.Returned == 0:
		b.WriteString("No files found\n")
	case r.Returned < r.Found:
		fmt.Fprintf(&b, "Found %s in %s; showing the first %d in path order\n\n",
			plural(r.Found, "match", "matches"), plural(nFiles, "file", "files"), r.Returned)
	default:
		fmt.Fprintf(&b, "Found %s in %s\n\n", plural(r.Found, "match", "matches"), plural(nFiles, "file", "files"))
	}
	b.WriteString(body)
	if r.Returned < r.Found {
		fmt.Fprintf(&b, "\n(Results are truncated: %s not shown. Narrow the pattern, path or include to see the rest.)\n",
			plural(r.Found-r.Returned, "more match is", "more matches are"))
	}
	notes(&b, r.ExcludedNames, r.SkippedRecords, r.Outside)
	return b.String()
}

func grepArgs(req GrepRequest) []string {
	args := []string{"--no-config", "--no-messages", "--no-ignore-messages", "--json"}
	if req.CaseInsensitive {
		args = append(args, "--ignore-case")
	}
	if req.Context > 0 {
		args = append(args, "--context", strconv.Itoa(req.Context))
	}
	if req.Include != "" {
		args = append(args, "--glob", req.Include)
	}
	return append(args, "--glob", "!.git", "--regexp", req.Pattern)
}

type hit struct {
	num     int
	context bool
	text    string
}

type fileHits struct {
	name    string
	lines   []hit
	matches int
}

// shown returns the lines of f (sorted) grep shows when room more matches may be returned:
// the matches up to room, and every line up to the context after the last of them (a line in
// reach of a kept match; a match among them is shown as a line but not counted). kept is how
// many matches count.
func (f *fileHits) shown(room, context int) (lines []hit, kept int) {
	keepUpTo := -1
	for _, h := range f.lines {
		if h.context {
			continue
		}
		if kept == room {
			break
		}
		kept++
		keepUpTo = h.num + context
	}
	for i, h := range f.lines {
		if h.num > keepUpTo {
			return f.lines[:i], kept
		}
	}
	return f.lines, kept
}

func (f *fileHits) add(r record) {
	h := hit{num: r.LineNumber, context: r.Type == "context", text: clipLine(r.text())}
	if !h.context {
		f.matches++
	}
	f.lines = append(f.lines, h)
}
