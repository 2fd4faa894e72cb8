package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An edit ask shows what goes before what comes, with one line of context.
func TestWriteDiff(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(p, []byte("1\n2\n3\n4\n5\n6\n7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := writeDiff(p, "1\nTWO\n3\n4\n5\n6\n7\n8\n")
	want := []string{"--- " + p, " 1", "-2", "+TWO", " 3", "…", " 7", "+8"}
	if !slices.Equal(got, want) {
		t.Errorf("diff:\n%q\nwant\n%q", got, want)
	}
	if got := writeDiff(p, "1\n2\n3\n4\n5\n6\n7\n"); !slices.Equal(got, []string{"--- " + p, "(no change)"}) {
		t.Errorf("no change: %q", got)
	}
	if got := writeDiff(filepath.Join(dir, "new.txt"), "x\ny\n"); !slices.Equal(got, []string{"new file " + filepath.Join(dir, "new.txt") + " (+2 lines)", "+x", "+y"}) {
		t.Errorf("new file: %q", got)
	}
}
