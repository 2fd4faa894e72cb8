//go:build linux

package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// A path outside the workspace is searched when an external_directory grant admitted a
// directory holding it (seeds 004: one grant covers the shell, file and search tools):
// beneath the granted directory with no link followed, results named absolute, and what the
// agent may not read (Zuno's data under a granted home) left out. Without the grant, or
// outside the granted directory, it is refused.
func TestSearchOutsideWithAGrant(t *testing.T) {
	needRG(t)
	ws, home, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, ws, "in.txt", "needle in\n")
	writeFile(t, home, "notes/a.txt", "needle notes\n")
	writeFile(t, home, "notes/deep/b.go", "needle deep\n")
	writeFile(t, home, ".local/share/zuno/auth.json", "needle SECRET-KEY\n")
	writeFile(t, elsewhere, "c.txt", "needle elsewhere\n")
	if err := os.Symlink(elsewhere, filepath.Join(home, "notes", "link")); err != nil {
		t.Fatal(err)
	}
	s, err := New(ws)
	if err != nil {
		t.Fatal(err)
	}
	zunoData := filepath.Join(home, ".local", "share", "zuno")
	if err := s.Protect([]sandbox.Protection{{Path: zunoData, Hidden: true, Why: "Zuno's data"}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	grant := home + "/*"

	g, err := s.Grep(ctx, GrepRequest{Pattern: "needle", Path: filepath.Join(home, "notes"), ExternalRoot: grant})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(home, "notes", "a.txt"), filepath.Join(home, "notes", "deep", "b.go")}
	if !slices.Equal(g.Paths, want) || strings.Contains(g.Output, "elsewhere") {
		t.Fatalf("grep outside with the grant: %q\n%s", g.Paths, g.Output)
	}
	gl, err := s.Glob(ctx, GlobRequest{Pattern: "*.go", Path: filepath.Join(home, "notes"), ExternalRoot: grant})
	if err != nil || !slices.Equal(gl.Paths, want[1:]) {
		t.Fatalf("glob outside with the grant: %q %v", gl.Paths, err)
	}

	// The whole granted home: Zuno's data is left out, never shown.
	g, err = s.Grep(ctx, GrepRequest{Pattern: "needle", Path: home, ExternalRoot: grant})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(g.Output, "SECRET-KEY") || slices.Contains(g.Paths, filepath.Join(zunoData, "auth.json")) {
		t.Fatalf("Zuno's data shown by a search of the granted home: %q\n%s", g.Paths, g.Output)
	}
	if _, err := s.Grep(ctx, GrepRequest{Pattern: "needle", Path: zunoData, ExternalRoot: grant}); err == nil {
		t.Fatal("a search of Zuno's data directory itself was not refused")
	}

	for name, req := range map[string]GrepRequest{
		"no grant":                {Pattern: "needle", Path: filepath.Join(home, "notes")},
		"outside the grant":       {Pattern: "needle", Path: elsewhere, ExternalRoot: grant},
		"through a link":          {Pattern: "needle", Path: filepath.Join(home, "notes", "link"), ExternalRoot: grant},
		"grant of another branch": {Pattern: "needle", Path: filepath.Join(home, "notes"), ExternalRoot: elsewhere + "/*"},
	} {
		if r, err := s.Grep(ctx, req); err == nil {
			t.Errorf("%s: searched: %q", name, r.Paths)
		} else if e, ok := err.(*Error); !ok || e.Code != InvalidArguments {
			t.Errorf("%s: error %v, want invalid_arguments", name, err)
		}
	}
}
