package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// GlobRequest holds the glob tool's arguments.
type GlobRequest struct {
	// Pattern is an rg --glob glob (gitignore syntax: *, ?, [..], {a,b}, **; a leading !
	// negates), matched against paths relative to Path. Without a "/" it matches a name
	// at any depth: "*.go" finds every Go file, "cmd/*.go" only those directly in cmd/.
	Pattern string
	// Path is the directory to search: relative to the workspace root, or absolute inside
	// it. Empty means the root.
	Path string
	// ExternalRoot is the directory an external_directory grant admitted for the call: a
	// Path outside the workspace is searched when it lies under it (results are then
	// absolute paths). Empty: a Path outside is refused.
	ExternalRoot string
	// Limit is how many paths to return; 0 means DefaultLimit.
	Limit int
}

// Glob lists the files under req.Path whose paths match req.Pattern, sorted by path.
func (s *Searcher) Glob(ctx context.Context, req GlobRequest) (Result, error) {
	if err := checkPattern(req.Pattern); err != nil {
		return Result{}, err
	}
	limit, err := resultLimit(req.Limit)
	if err != nil {
		return Result{}, err
	}
	t, err := s.resolve(req.Path, req.ExternalRoot)
	if err != nil {
		return Result{}, err
	}
	defer t.close()
	if !t.isDir {
		return Result{}, invalid("path", "glob searches a directory, and %q is a file", req.Path)
	}
	var names []string
	excluded := 0
	st, err := s.run(ctx, t, globArgs(req.Pattern), 0, func(rec []byte) {
		if n, ok := t.name(rec); ok {
			names = append(names, n)
		} else {
			excluded++
		}
	}, nil)
	if err != nil {
		return Result{}, err
	}
	if st.exit > 1 && st.stderr != "" {
		return Result{}, rgError(st, "pattern")
	}
	slices.Sort(names)
	names = slices.Compact(names)

	r := Result{ExcludedNames: excluded, SkippedRecords: st.skipped}
	r.Paths, r.Outside = s.keepBeneath(t, names, limit)
	r.Found = len(names) - r.Outside
	r.Returned = len(r.Paths)
	r.Truncated = r.Returned < r.Found || excluded > 0 || st.skipped > 0 || r.Outside > 0

	var b strings.Builder
	if r.Returned == 0 {
		b.WriteString("No files found\n")
	}
	for _, p := range r.Paths {
		b.WriteString(showPath(p))
		b.WriteByte('\n')
	}
	if r.Returned < r.Found {
		fmt.Fprintf(&b, "\n(Results are truncated: showing the first %d of %d files in path order. Narrow the pattern or path to see the rest.)\n", r.Returned, r.Found)
	}
	notes(&b, excluded, st.skipped, r.Outside)
	r.Output = b.String()
	s.withhold(&r)
	return r, nil
}

func globArgs(pattern string) []string {
	return []string{"--no-config", "--no-messages", "--no-ignore-messages",
		"--files", "--null", "--glob", pattern, "--glob", "!.git"}
}

func resultLimit(n int) (int, error) {
	switch {
	case n < 0:
		return 0, invalid("limit", "limit must not be negative")
	case n == 0:
		return DefaultLimit, nil
	}
	return n, nil
}

func notes(b *strings.Builder, excluded, skipped, outside int) {
	if excluded > 0 {
		fmt.Fprintf(b, "\n(Results are truncated: %s left out because their names are not valid UTF-8 and no path can name them.)\n",
			plural(excluded, "file was", "files were"))
	}
	if skipped > 0 {
		fmt.Fprintf(b, "\n(Results are truncated: %s skipped because one rg record was longer than %d bytes.)\n",
			plural(skipped, "result was", "results were"), MaxRecordBytes)
	}
	if outside > 0 {
		fmt.Fprintf(b, "\n(Results are truncated: %s left out because, checked again after the search, %s not found as rg reported "+
			"beneath the searched directory: a directory on the way was moved or replaced by a symbolic link while rg walked it, "+
			"or the file changed. Search again.)\n",
			plural(outside, "file was", "files were"), plural1(outside, "it was", "they were"))
	}
}
