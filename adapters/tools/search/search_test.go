package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// needRG skips the test, visibly, when rg is not installed.
func needRG(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("SKIP: ripgrep (rg) is not installed; install the ripgrep package to run the glob/grep tests")
	}
}

// tree writes files (path -> content) under a new temporary root and returns a Searcher.
func tree(t testing.TB, files map[string]string) (*Searcher, string) {
	t.Helper()
	needRG(t)
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

func wantCode(t *testing.T, err error, code Code, field string, contains ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error %s", err, err, code)
	}
	if e.Code != code || e.Field != field {
		t.Fatalf("error code %q field %q (%s), want %q field %q", e.Code, e.Field, e.Message, code, field)
	}
	for _, c := range contains {
		if !strings.Contains(e.Message, c) {
			t.Errorf("message %q does not contain %q", e.Message, c)
		}
	}
}

func TestGlobSortedRelativePaths(t *testing.T) {
	s, _ := tree(t, map[string]string{
		"z.go": "", "a.go": "", "b.txt": "", "sub/m.go": "", "sub/deep/k.go": "", "sub/A.go": "", "cmd/x.go": "",
	})
	ctx := context.Background()
	r, err := s.Glob(ctx, GlobRequest{Pattern: "*.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.go", "cmd/x.go", "sub/A.go", "sub/deep/k.go", "sub/m.go", "z.go"}
	if !slices.Equal(r.Paths, want) {
		t.Fatalf("paths %q, want %q", r.Paths, want)
	}
	if r.Output != strings.Join(want, "\n")+"\n" || r.Truncated || r.Withheld != nil {
		t.Fatalf("output %q truncated %v", r.Output, r.Truncated)
	}

	// Globs are relative to the searched directory; results stay root-relative.
	r, err = s.Glob(ctx, GlobRequest{Pattern: "deep/*.go", Path: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Paths, []string{"sub/deep/k.go"}) {
		t.Fatalf("paths %q", r.Paths)
	}
	r, err = s.Glob(ctx, GlobRequest{Pattern: "*.go", Path: filepath.Join(s.Root, "sub", "deep")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Paths, []string{"sub/deep/k.go"}) {
		t.Fatalf("absolute path: paths %q", r.Paths)
	}

	r, err = s.Glob(ctx, GlobRequest{Pattern: "*.rs"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != "No files found\n" || len(r.Paths) != 0 {
		t.Fatalf("no match: %q", r.Output)
	}
}

func TestGlobTruncatedStableOrder(t *testing.T) {
	files := map[string]string{}
	for i := range 150 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = ""
	}
	s, _ := tree(t, files)
	var first string
	for range 3 {
		r, err := s.Glob(context.Background(), GlobRequest{Pattern: "*.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Found != 150 || r.Returned != 100 || len(r.Paths) != 100 || !r.Truncated {
			t.Fatalf("found %d returned %d truncated %v", r.Found, r.Returned, r.Truncated)
		}
		if !slices.IsSorted(r.Paths) {
			t.Fatal("paths not sorted")
		}
		if !strings.Contains(r.Output, "Results are truncated: showing the first 100 of 150 files") {
			t.Fatalf("no truncation mark:\n%s", r.Output)
		}
		if first == "" {
			first = r.Output
		} else if r.Output != first {
			t.Fatal("output differs between identical runs")
		}
	}
	r, err := s.Glob(context.Background(), GlobRequest{Pattern: "*.txt", Limit: 150})
	if err != nil || r.Truncated || r.Returned != 150 {
		t.Fatalf("limit 150: %v truncated %v returned %d", err, r.Truncated, r.Returned)
	}
}

func TestGrepGroupedSorted(t *testing.T) {
	s, _ := tree(t, map[string]string{
		"b.go":     "package b\nfunc Foo() {}\n\nfunc foo() {}\n",
		"a/x.go":   "// Foo here\n",
		"c.txt":    "nothing\n",
		"crlf.txt": "Foo\r\nbar\r\n",
	})
	r, err := s.Grep(context.Background(), GrepRequest{Pattern: "Foo"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Found 3 matches in 3 files\n\n" +
		"a/x.go:\n  Line 1: // Foo here\n\n" +
		"b.go:\n  Line 2: func Foo() {}\n\n" +
		"crlf.txt:\n  Line 1: Foo\n"
	if r.Output != want {
		t.Fatalf("output\n%q\nwant\n%q", r.Output, want)
	}
	if !slices.Equal(r.Paths, []string{"a/x.go", "b.go", "crlf.txt"}) || len(r.Matches) != 3 || r.Matches[1] != (Match{Path: "b.go", Line: 2, Text: "func Foo() {}"}) {
		t.Fatalf("paths %q matches %+v", r.Paths, r.Matches)
	}

	r, err = s.Grep(context.Background(), GrepRequest{Pattern: "foo", CaseInsensitive: true, Include: "*.go"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Found != 3 || !slices.Equal(r.Paths, []string{"a/x.go", "b.go"}) {
		t.Fatalf("case-insensitive with include: %+v", r)
	}

	// A single file as the path.
	r, err = s.Grep(context.Background(), GrepRequest{Pattern: "func", Path: "b.go"})
	if err != nil || r.Found != 2 || !slices.Equal(r.Paths, []string{"b.go"}) {
		t.Fatalf("file path: %v %+v", err, r)
	}

	r, err = s.Grep(context.Background(), GrepRequest{Pattern: "absent"})
	if err != nil || r.Output != "No files found\n" {
		t.Fatalf("no match: %v %q", err, r.Output)
	}
}

func TestGrepContextAndLimit(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		if i%10 == 0 {
			lines = append(lines, fmt.Sprintf("hit %d", i))
		} else {
			lines = append(lines, fmt.Sprintf("line %d", i))
		}
	}
	s, _ := tree(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n", "g.txt": "hit g\n"})
	r, err := s.Grep(context.Background(), GrepRequest{Pattern: "^hit", Context: 1, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "Found 4 matches in 2 files; showing the first 2 in path order\n\n" +
		"f.txt:\n  Line 9- line 9\n  Line 10: hit 10\n  Line 11- line 11\n  --\n  Line 19- line 19\n  Line 20: hit 20\n  Line 21- line 21\n" +
		"\n(Results are truncated: 2 more matches are not shown. Narrow the pattern, path or include to see the rest.)\n"
	if r.Output != want {
		t.Fatalf("output\n%s\nwant\n%s", r.Output, want)
	}
	if !r.Truncated || r.Found != 4 || r.Returned != 2 {
		t.Fatalf("%+v", r)
	}
}

func TestOutputCapsWithhold(t *testing.T) {
	files := map[string]string{}
	long := strings.Repeat("n", 200)
	for i := range 300 {
		files[fmt.Sprintf("%s%03d.txt", long, i)] = ""
	}
	s, _ := tree(t, files)
	r, err := s.Glob(context.Background(), GlobRequest{Pattern: "*.txt", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Withheld == nil || r.Withheld.Exceeded != "max_bytes" || r.Withheld.Bytes != len(r.Output) || len(r.Output) <= DefaultMaxBytes {
		t.Fatalf("withheld %+v, output %d bytes", r.Withheld, len(r.Output))
	}
	// Nothing is cut: every path is in the full output.
	if strings.Count(r.Output, "\n") != 300 || r.Truncated {
		t.Fatalf("full output has %d lines", strings.Count(r.Output, "\n"))
	}
	n := r.Withheld.Notice("/ws/.zuno/artifacts/x.txt")
	for _, w := range []string{"max_bytes", "51200", fmt.Sprint(len(r.Output)), `"action": "artifact"`, "/ws/.zuno/artifacts/x.txt"} {
		if !strings.Contains(n, w) {
			t.Errorf("notice %q lacks %q", n, w)
		}
	}

	// The line cap, with the caps set as tool_output would.
	s.MaxLines = 50
	r, err = s.Glob(context.Background(), GlobRequest{Pattern: "*.txt", Limit: 60})
	if err != nil {
		t.Fatal(err)
	}
	if r.Withheld == nil || r.Withheld.Exceeded != "max_lines" || r.Withheld.Lines != 62 {
		t.Fatalf("withheld %+v", r.Withheld)
	}
	r, err = s.Glob(context.Background(), GlobRequest{Pattern: "*.txt", Limit: 10})
	if err != nil || r.Withheld != nil {
		t.Fatalf("small output withheld: %v %+v", err, r.Withheld)
	}
}

func TestInvalidUTF8NamesExcluded(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("file system does not store arbitrary name bytes")
	}
	s, root := tree(t, map[string]string{"good.txt": "needle\n"})
	bad := string([]byte{'b', 'a', 'd', 0xff, 0xfe, '.', 't', 'x', 't'})
	if err := os.WriteFile(filepath.Join(root, bad), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dir"+string([]byte{0xc3})), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "dir"+string([]byte{0xc3}), "inner.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	g, err := s.Glob(context.Background(), GlobRequest{Pattern: "*.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Paths, []string{"good.txt"}) || g.ExcludedNames != 2 || !g.Truncated ||
		!strings.Contains(g.Output, "2 files were left out because their names are not valid UTF-8") || strings.ContainsRune(g.Output, '\uFFFD') {
		t.Fatalf("glob %+v\n%s", g, g.Output)
	}
	r, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Paths, []string{"good.txt"}) || r.ExcludedNames != 2 || !r.Truncated || r.Found != 1 ||
		!strings.Contains(r.Output, "not valid UTF-8") || strings.ContainsRune(r.Output, '\uFFFD') {
		t.Fatalf("grep %+v\n%s", r, r.Output)
	}
}

func TestOddButValidNames(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("names with newlines and backslashes are Unix names")
	}
	s, _ := tree(t, map[string]string{"nl\nname.txt": "needle\n", `back\slash.txt`: "needle\n", "plain.txt": "needle\n"})
	for _, run := range []func() (Result, error){
		func() (Result, error) { return s.Glob(context.Background(), GlobRequest{Pattern: "*.txt"}) },
		func() (Result, error) { return s.Grep(context.Background(), GrepRequest{Pattern: "needle"}) },
	} {
		r, err := run()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Paths, []string{`back\slash.txt`, "nl\nname.txt", "plain.txt"}) || r.Truncated {
			t.Fatalf("paths %q", r.Paths)
		}
		if !strings.Contains(r.Output, `"nl\nname.txt"`) || !strings.Contains(r.Output, `back\slash.txt`) {
			t.Fatalf("output %q", r.Output)
		}
	}
}

func TestHiddenAndIgnored(t *testing.T) {
	s, _ := tree(t, map[string]string{
		".gitignore":     "ignored/\n*.log\n",
		".git/HEAD":      "needle\n",
		".git/config":    "needle\n",
		"visible.txt":    "needle\n",
		".hidden.txt":    "needle\n",
		".hdir/in.txt":   "needle\n",
		"ignored/in.txt": "needle\n",
		"app.log":        "needle\n",
		"sub/.rgignore":  "secret.txt\n",
		"sub/secret.txt": "needle\n",
		"sub/open.txt":   "needle\n",
	})
	ctx := context.Background()
	r, err := s.Grep(ctx, GrepRequest{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sub/open.txt", "visible.txt"}; !slices.Equal(r.Paths, want) {
		t.Fatalf("grep paths %q, want %q", r.Paths, want)
	}
	g, err := s.Glob(ctx, GlobRequest{Pattern: "**/in.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Paths) != 0 {
		t.Fatalf("glob found hidden/ignored: %q", g.Paths)
	}
	// rg semantics: a glob that names a file explicitly overrides hidden and ignore rules
	// for that file, but never opens the .git directory.
	g, err = s.Glob(ctx, GlobRequest{Pattern: "*.log"})
	if err != nil || !slices.Equal(g.Paths, []string{"app.log"}) {
		t.Fatalf("explicit glob: %v %q", err, g.Paths)
	}
	g, err = s.Glob(ctx, GlobRequest{Pattern: "*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Paths {
		if strings.HasPrefix(p, ".git/") {
			t.Fatalf("glob * listed %s", p)
		}
	}
	r, err = s.Grep(ctx, GrepRequest{Pattern: "needle", Include: "*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Paths {
		if strings.HasPrefix(p, ".git/") {
			t.Fatalf("grep include * searched %s", p)
		}
	}
}

func TestBadPatterns(t *testing.T) {
	s, _ := tree(t, map[string]string{"a.txt": "x\n"})
	ctx := context.Background()
	_, err := s.Grep(ctx, GrepRequest{Pattern: "(foo"})
	wantCode(t, err, InvalidArguments, "pattern", "regex parse error", "unclosed group")

	_, err = s.Grep(ctx, GrepRequest{Pattern: "foo", Include: "[abc"})
	wantCode(t, err, InvalidArguments, "include", "error parsing glob '[abc'")

	_, err = s.Grep(ctx, GrepRequest{Pattern: "foo", Include: "{a,b"})
	wantCode(t, err, InvalidArguments, "include", "'{a,b'")

	_, err = s.Grep(ctx, GrepRequest{Pattern: `(\w{100}){1000}`})
	wantCode(t, err, InvalidArguments, "pattern", "size limit")

	_, err = s.Grep(ctx, GrepRequest{Pattern: "a\nb"})
	wantCode(t, err, InvalidArguments, "pattern")

	_, err = s.Glob(ctx, GlobRequest{Pattern: "[abc"})
	wantCode(t, err, InvalidArguments, "pattern", "error parsing glob '[abc'")

	_, err = s.Glob(ctx, GlobRequest{})
	wantCode(t, err, InvalidArguments, "pattern")
	_, err = s.Grep(ctx, GrepRequest{Pattern: "x", Context: -1})
	wantCode(t, err, InvalidArguments, "context")
	_, err = s.Glob(ctx, GlobRequest{Pattern: "*", Limit: -1})
	wantCode(t, err, InvalidArguments, "limit")
}

func TestMissingRG(t *testing.T) {
	root := t.TempDir()
	s, err := New(root) // starts without rg: discovery is lazy
	if err != nil {
		t.Fatal(err)
	}
	s.RG = filepath.Join(root, "no-such-dir", "rg")
	_, err = s.Grep(context.Background(), GrepRequest{Pattern: "x"})
	wantCode(t, err, Unavailable, "", "ripgrep", "install")
	_, err = s.Glob(context.Background(), GlobRequest{Pattern: "*"})
	wantCode(t, err, Unavailable, "", "install")

	// Something that is not rg is unavailable too.
	s2 := &Searcher{Root: root, RG: "/bin/true"}
	if _, err := os.Stat("/bin/true"); err == nil {
		_, err = s2.Glob(context.Background(), GlobRequest{Pattern: "*"})
		wantCode(t, err, Unavailable, "", "install")
	}
}

func TestProbe(t *testing.T) {
	needRG(t)
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Version, "ripgrep ") || f.Path == "" {
		t.Fatalf("%+v", f)
	}
	t.Logf("rg: %s at %s", f.Version, f.Path)
}

func TestPaths(t *testing.T) {
	s, root := tree(t, map[string]string{"in/a.txt": "x\n", "in/f.txt": "x\n"})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range []string{"..", "../x", "in/../../x", outside, "/"} {
		_, err := s.Grep(ctx, GrepRequest{Pattern: "x", Path: p})
		wantCode(t, err, InvalidArguments, "path", "outside the workspace root")
		_, err = s.Glob(ctx, GlobRequest{Pattern: "*", Path: p})
		wantCode(t, err, InvalidArguments, "path", "outside the workspace root")
	}
	_, err := s.Grep(ctx, GrepRequest{Pattern: "x", Path: "escape"})
	wantCode(t, err, InvalidArguments, "path", "resolves outside")
	_, err = s.Grep(ctx, GrepRequest{Pattern: "x", Path: "missing"})
	wantCode(t, err, InvalidArguments, "path", "does not exist or cannot be read")
	_, err = s.Glob(ctx, GlobRequest{Pattern: "*", Path: "in/f.txt"})
	wantCode(t, err, InvalidArguments, "path", "is a file")

	// A symlink inside the root is searched under the name the files really have.
	r, err := s.Grep(ctx, GrepRequest{Pattern: "x", Path: "alias"})
	if err != nil || !slices.Equal(r.Paths, []string{"in/a.txt", "in/f.txt"}) {
		t.Fatalf("alias: %v %q", err, r.Paths)
	}
	// Traversal does not follow symlinks, so "escape" contributes nothing from the root.
	r, err = s.Grep(ctx, GrepRequest{Pattern: "x"})
	if err != nil || !slices.Equal(r.Paths, []string{"in/a.txt", "in/f.txt"}) {
		t.Fatalf("root: %v %q", err, r.Paths)
	}
}

func TestLongLines(t *testing.T) {
	emoji := strings.Repeat("😀", 1500) // 3000 UTF-16 code units
	huge := "needle" + strings.Repeat("z", MaxRecordBytes) + "\n"
	s, _ := tree(t, map[string]string{
		"a.txt": "needle " + strings.Repeat("a", 3000) + "\n",
		"b.txt": "needle" + emoji + "\n",
		"c.txt": huge,
		"d.txt": "needle short\n",
	})
	r, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Matches) != 3 || r.SkippedRecords != 1 || !r.Truncated || !strings.Contains(r.Output, "longer than 1048576 bytes") {
		t.Fatalf("%+v\n%.300s", r.Matches, r.Output)
	}
	a, b := r.Matches[0].Text, r.Matches[1].Text
	if len(a) != 2000+3 || !strings.HasSuffix(a, "...") {
		t.Fatalf("a: %d bytes", len(a))
	}
	if want := "needle" + strings.Repeat("😀", 997) + "..."; b != want {
		t.Fatalf("b: %d bytes, want %d", len(b), len(want))
	}
}

func TestRunTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and searches a large file")
	}
	// Each "needle " costs about 50 bytes of rg JSON (a submatch), so a 14 MB file makes
	// more than 64 MiB of output in 2000 records.
	s, _ := tree(t, map[string]string{"many.txt": strings.Repeat(strings.Repeat("needle ", 1000)+"\n", 2000)})
	_, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle"})
	wantCode(t, err, InvalidArguments, "", "64 MiB", "narrow")
}
