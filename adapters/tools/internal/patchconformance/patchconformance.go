// Package patchconformance runs the Codex apply_patch scenarios of ../shared/conformance
// against an implementation on disk, as ../shared/conformance/README.md describes: copy
// input/ to an empty directory, read every file (as a model would, so it holds read
// credentials), apply patch.txt, and compare the whole tree with expected/ byte for byte.
// It is shared by the tests of the file adapter and of the tools built on it.
package patchconformance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Divergent is the one scenario where Zuno deliberately differs: Codex keeps an Add that
// preceded a failing hunk; Zuno pre-flights every file, so the tree stays as it was and the
// result is a typed conflict.
const Divergent = "015_failure_after_partial_success_leaves_changes"

// Result is what applying one scenario's patch gave.
type Result struct {
	// Code is the stable code of a rejection, "" when the patch was applied.
	Code string
	// Conflict marks a rejection that is one of the apply_patch conflict kinds.
	Conflict bool
}

// Apply reads files (root-relative, slash-separated) in root and applies patch there.
type Apply func(t *testing.T, root string, files []string, patch string) Result

// Run runs every scenario as a subtest and logs how many passed. It skips, visibly, when the
// shared data is absent.
func Run(t *testing.T, apply Apply) {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "..", "..", "..", "..", "..", "shared", "conformance", "apply_patch", "scenarios")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("SKIP: apply_patch conformance data not found at %s (CI lays shared/ beside the clone)", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	passed, total := 0, 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		total++
		name := e.Name()
		if t.Run(name, func(t *testing.T) { runOne(t, filepath.Join(dir, name), name == Divergent, apply) }) {
			passed++
		}
	}
	t.Logf("apply_patch conformance: %d/%d scenarios pass", passed, total)
}

func runOne(t *testing.T, src string, divergent bool, apply Apply) {
	text, err := os.ReadFile(filepath.Join(src, "patch.txt"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	CopyTree(t, filepath.Join(src, "input"), root)
	input := Snapshot(t, root)
	var files []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	want := input
	if !divergent {
		exp := t.TempDir()
		CopyTree(t, filepath.Join(src, "expected"), exp)
		want = Snapshot(t, exp)
	}
	res := apply(t, root, files, string(text))
	got := Snapshot(t, root)
	if want == input && res.Code == "" {
		t.Errorf("the expected tree equals the input, but the patch was accepted")
	}
	if divergent && !res.Conflict {
		t.Errorf("want a conflict, got code %q", res.Code)
	}
	if got != want {
		t.Errorf("tree mismatch\n--- got\n%s--- want\n%s", got, want)
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".zuno-write-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

// CopyTree copies src into dst; a missing src is an empty tree (Git stores no empty folder).
func CopyTree(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// Snapshot renders a tree (directories, empty ones included, and file bytes) for comparison.
func Snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			fmt.Fprintf(&b, "%s/\n", rel)
			return nil
		}
		c, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s: %q\n", rel, c)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
