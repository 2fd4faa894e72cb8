//go:build linux

package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// authorityTree is a workspace with every kind of link a search path can meet, an outside
// directory holding a secret, and the workspace root spelled through a link as well.
type authorityTree struct {
	s                     *Searcher
	root, rootLink, outer string
}

func newAuthorityTree(t *testing.T) authorityTree {
	t.Helper()
	needRG(t)
	root, outside := t.TempDir(), t.TempDir()
	for rel, content := range map[string]string{
		"in/a.txt": "needle a\n", "in/deep/b.txt": "needle b\n", "top.txt": "needle top\n",
	} {
		writeFile(t, root, rel, content)
	}
	for rel, content := range map[string]string{"secret.txt": "SECRET needle\n", "dir/x.txt": "SECRET needle\n"} {
		writeFile(t, outside, rel, content)
	}
	relOut, err := filepath.Rel(root, outside)
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"escape":          outside,
		"escape-rel":      relOut,
		"escape-file":     filepath.Join(outside, "secret.txt"),
		"alias":           filepath.Join(root, "in"),
		"alias-rel":       "in",
		"flink":           filepath.Join(root, "in", "a.txt"),
		"l2":              "alias",
		"dangling":        filepath.Join(root, "missing"),
		"in/out":          outside,
		"in/out-file.txt": filepath.Join(outside, "secret.txt"),
		"in/up":           "..",
	}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	rootLink := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(root, rootLink); err != nil {
		t.Fatal(err)
	}
	s, err := New(rootLink)
	if err != nil {
		t.Fatal(err)
	}
	return authorityTree{s: s, root: root, rootLink: rootLink, outer: outside}
}

// TestPathAuthority is issue 25's "grep and glob by handle" as a table: each spelling of a
// search path that could reach outside the workspace, through glob and grep. "The search root
// opened beneath the workspace without following links": a link on the way is refused, a
// final link is followed once and only to a target inside (the gate's naming, as for read),
// and a link to a link is not followed again. "With links not followed": links inside the
// searched tree contribute nothing. No row shows outside content or names.
func TestPathAuthority(t *testing.T) {
	at := newAuthorityTree(t)
	inFiles := []string{"in/a.txt", "in/deep/b.txt"}
	all := []string{"in/a.txt", "in/deep/b.txt", "top.txt"}
	for _, row := range []struct {
		name, path string
		glob       bool     // also run glob on it (it names a directory, or should be refused)
		wantErr    string   // the refusal, or "" for a search that runs
		want       []string // the paths found when it runs
	}{
		{name: "link to an outside directory", path: "escape", glob: true, wantErr: "resolves outside the workspace root"},
		{name: "relative link to an outside directory", path: "escape-rel", glob: true, wantErr: "resolves outside the workspace root"},
		{name: "link to an outside file", path: "escape-file", wantErr: "resolves outside the workspace root"},
		{name: "through a link to outside (file)", path: "escape/secret.txt", wantErr: "goes through a symbolic link"},
		{name: "through a link to outside (directory)", path: "escape/dir", glob: true, wantErr: "goes through a symbolic link"},
		{name: "through a link inside the tree to outside", path: "in/out/dir", glob: true, wantErr: "goes through a symbolic link"},
		{name: "through a link to inside", path: "alias/deep", glob: true, wantErr: "goes through a symbolic link"},
		{name: "link to a link", path: "l2", glob: true, wantErr: "goes through a symbolic link, or leads to a link"},
		{name: "dot-dot", path: "..", glob: true, wantErr: "outside the workspace root"},
		{name: "dot-dot below", path: "in/../../x", glob: true, wantErr: "outside the workspace root"},
		{name: "absolute outside", path: at.outer, glob: true, wantErr: "outside the workspace root"},
		{name: "file system root", path: "/", glob: true, wantErr: "outside the workspace root"},
		{name: "dangling link", path: "dangling", glob: true, wantErr: "does not exist or cannot be read"},
		{name: "missing", path: "missing", glob: true, wantErr: "does not exist or cannot be read"},
		{name: "a FIFO is neither searched nor waited on", path: "fifo", glob: true, wantErr: "not a regular file or a directory"},
		{name: "link to an inside directory: searched under the real names", path: "alias", glob: true, want: inFiles},
		{name: "relative link to an inside directory", path: "alias-rel", glob: true, want: inFiles},
		{name: "link to an inside file", path: "flink", want: []string{"in/a.txt"}},
		{name: "absolute, through the configured spelling of the root", path: filepath.Join(at.rootLink, "in"), glob: true, want: inFiles},
		{name: "absolute, resolved root", path: filepath.Join(at.root, "in", "deep"), glob: true, want: []string{"in/deep/b.txt"}},
		{name: "the root: links in the tree are not followed", path: "", glob: true, want: all},
		{name: "a directory holding links out: not followed", path: "in", glob: true, want: inFiles},
	} {
		t.Run(row.name, func(t *testing.T) {
			calls := map[string]func() (Result, error){
				"grep": func() (Result, error) {
					return at.s.Grep(context.Background(), GrepRequest{Pattern: "needle", Path: row.path, Include: "*"})
				},
			}
			if row.glob {
				calls["glob"] = func() (Result, error) {
					return at.s.Glob(context.Background(), GlobRequest{Pattern: "*", Path: row.path})
				}
			}
			for tool, call := range calls {
				r, err := call()
				if row.wantErr != "" {
					wantCode(t, err, InvalidArguments, "path", row.wantErr)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if !slices.Equal(r.Paths, row.want) || r.Outside != 0 {
					t.Errorf("%s: paths %q (outside %d), want %q", tool, r.Paths, r.Outside, row.want)
				}
				if mark := leakIn(r); mark != "" {
					t.Errorf("%s returned %q:\n%s", tool, mark, r.Output)
				}
			}
		})
	}
}

// TestSearchesWhatWasOpened: "rg started on the opened directory" (/proc/self/fd/N) or file
// (descriptor 3), not on its name. Between the open and rg's start (the window a search by
// name loses), the directory is renamed away and its name made a link to the outside; the
// search still reads the directory it opened, and shows its content under the name asked for.
func TestSearchesWhatWasOpened(t *testing.T) {
	needRG(t)
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, root, "sub/f.txt", "opened needle\n")
	writeFile(t, outside, "f.txt", "SECRET needle\n")
	writeFile(t, outside, "secret-name.txt", "SECRET needle\n")
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	swapOnce := func(name, to string) func(string) {
		done := false
		return func(string) {
			if done {
				return
			}
			done = true
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.Rename(p, p+".away"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(to, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	undo := func(name string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".away", p); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()

	s.opened = swapOnce("sub", outside)
	r, err := s.Grep(ctx, GrepRequest{Pattern: "needle", Path: "sub"})
	if err != nil || !strings.Contains(r.Output, "sub/f.txt:\n  Line 1: opened needle") || leakIn(r) != "" {
		t.Fatalf("grep of a directory swapped after the open: %v\n%s", err, r.Output)
	}
	undo("sub")

	s.opened = swapOnce("sub", outside)
	r, err = s.Glob(ctx, GlobRequest{Pattern: "*", Path: "sub"})
	if err != nil || !slices.Equal(r.Paths, []string{"sub/f.txt"}) || leakIn(r) != "" {
		t.Fatalf("glob of a directory swapped after the open: %v %q", err, r.Paths)
	}
	undo("sub")

	s.opened = swapOnce("sub/f.txt", filepath.Join(outside, "f.txt"))
	r, err = s.Grep(ctx, GrepRequest{Pattern: "needle", Path: "sub/f.txt"})
	if err != nil || !strings.Contains(r.Output, "sub/f.txt:\n  Line 1: opened needle") || leakIn(r) != "" {
		t.Fatalf("grep of a file swapped after the open: %v\n%s", err, r.Output)
	}
	undo("sub/f.txt")
}

// TestResultsCheckedBeneath: "results checked to lie beneath it". What rg reports is shown only
// when, looked at again from the handle rg was given with no link followed, a name is a
// regular file beneath it and a line is that file's line; the rest is left out and counted.
func TestResultsCheckedBeneath(t *testing.T) {
	needRG(t)
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, root, "sub/f.txt", "one\r\ntwo needle\nlast")
	writeFile(t, root, "sub/g.txt", "g\n")
	writeFile(t, root, "sub/d/h.txt", "h\n")
	writeFile(t, root, "top.txt", "top\n")
	writeFile(t, outside, "secret.txt", "one\r\ntwo needle\nlast")
	for name, to := range map[string]string{"sub/link.txt": filepath.Join(outside, "secret.txt"), "sub/ld": outside} {
		if err := os.Symlink(to, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := s.resolve("sub", "")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.close()

	names := []string{"sub/f.txt", "sub/missing.txt", "sub/link.txt", "sub/ld/secret.txt", "sub/d", "top.txt", "sub/../top.txt", "sub//f.txt", "sub/g.txt"}
	kept, outsideN := s.keepBeneath(tg, names, 100)
	if !slices.Equal(kept, []string{"sub/f.txt", "sub/g.txt"}) || outsideN != 7 {
		t.Errorf("kept %q, left out %d; want sub/f.txt and sub/g.txt, 7 left out", kept, outsideN)
	}
	kept, outsideN = s.keepBeneath(tg, []string{"sub/f.txt", "sub/gone.txt", "sub/g.txt", "sub/never-looked-at"}, 2)
	if !slices.Equal(kept, []string{"sub/f.txt", "sub/g.txt"}) || outsideN != 1 {
		t.Errorf("with a limit: kept %q, left out %d", kept, outsideN)
	}

	lines := []hit{{num: 1, text: "one", context: true}, {num: 2, text: "two needle"}, {num: 3, text: "last", context: true}}
	for _, c := range []struct {
		name  string
		file  string
		lines []hit
		want  bool
	}{
		{"the file's lines (CRLF, no final newline)", "sub/f.txt", lines, true},
		{"one line", "sub/f.txt", lines[1:2], true},
		{"a line that differs", "sub/f.txt", []hit{{num: 2, text: "two needles"}}, false},
		{"a line past the end", "sub/f.txt", []hit{{num: 4, text: ""}}, false},
		{"the same bytes through a link to outside", "sub/link.txt", lines, false},
		{"through a directory link to outside", "sub/ld/secret.txt", lines, false},
		{"missing", "sub/missing.txt", lines, false},
		{"not under the target", "top.txt", []hit{{num: 1, text: "top"}}, false},
	} {
		if got := s.linesBeneath(tg, c.file, c.lines); got != c.want {
			t.Errorf("%s: linesBeneath = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestChecksReadAsRG: the check reads a file as rg decodes it, so no result of an ordinary
// search is left out: byte order marks, UTF-16, CRLF, invalid UTF-8, a NUL byte in a file
// given by name, long lines clipped, a last line without a newline.
func TestChecksReadAsRG(t *testing.T) {
	utf16le := func(s string) string {
		b := []byte{0xff, 0xfe}
		for _, r := range s {
			b = append(b, byte(r), 0)
		}
		return string(b)
	}
	utf16be := func(s string) string {
		b := []byte{0xfe, 0xff}
		for _, r := range s {
			b = append(b, 0, byte(r))
		}
		return string(b)
	}
	files := map[string]string{
		"bom8.txt":  "\xef\xbb\xbfneedle bom\nx\n",
		"le.txt":    utf16le("first\nneedle le\n"),
		"be.txt":    utf16be("needle be\nlast\n"),
		"crlf.txt":  "a\r\nneedle crlf\r\n",
		"bad.txt":   "needle \xff\xfe bad\n",
		"long.txt":  "needle " + strings.Repeat("é", 3000) + "\n",
		"nonl.txt":  "x\nneedle no newline",
		"nul.txt":   "needle one\x00two\nneedle three\n",
		"many.txt":  strings.Repeat("needle many\nnot\n", 50),
		"d/sub.txt": "\xef\xbb\xbfctx\nneedle sub\nafter\n",
	}
	s, _ := tree(t, files)
	r, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle", Context: 1, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Outside != 0 || r.Truncated {
		t.Fatalf("an ordinary search left %d files out:\n%s", r.Outside, r.Output)
	}
	// nul.txt is binary to rg when it walks (skipped); given by name it is searched whole.
	want := []string{"bad.txt", "be.txt", "bom8.txt", "crlf.txt", "d/sub.txt", "le.txt", "long.txt", "many.txt", "nonl.txt"}
	if !slices.Equal(r.Paths, want) {
		t.Fatalf("paths %q, want %q", r.Paths, want)
	}
	for _, line := range []string{"Line 2: needle le", "Line 1: needle be", "Line 1: needle bom", "Line 2: needle crlf", "Line 2: needle sub", "Line 1- ctx"} {
		if !strings.Contains(r.Output, line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, r.Output)
		}
	}
	r, err = s.Grep(context.Background(), GrepRequest{Pattern: "needle", Path: "nul.txt"})
	if err != nil || r.Outside != 0 || r.Found != 2 {
		t.Fatalf("file with a NUL byte, by name: %v %+v", err, r)
	}
}
