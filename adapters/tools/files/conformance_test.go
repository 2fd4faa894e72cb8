package files

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/domain/patch"
)

// divergentScenario encodes Codex's non-atomic behaviour (an Add survives a later failure).
// Zuno pre-flights every file: the result is a typed conflict and an unchanged tree.
const divergentScenario = "015_failure_after_partial_success_leaves_changes"

// TestConformance runs Codex's apply_patch scenarios through the real tools on disk: every
// input file is read with Read (so the model holds credentials), then ApplyPatch runs, and
// the resulting tree (files and directories, empty ones included) is compared.
func TestConformance(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "conformance", "apply_patch", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("apply_patch conformance data not found at %s (CI lays shared/ beside the clone): skipping", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var passed, total int
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		total++
		name := e.Name()
		ok := t.Run(name, func(t *testing.T) {
			src := filepath.Join(dir, name)
			text, err := os.ReadFile(filepath.Join(src, "patch.txt"))
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			copyTree(t, filepath.Join(src, "input"), root)
			w, err := New(root)
			if err != nil {
				t.Fatal(err)
			}
			input := snapshotTree(t, root)
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(root, p)
					read(t, w, filepath.ToSlash(rel))
				}
				return err
			})
			want := input
			if name != divergentScenario {
				exp := t.TempDir()
				copyTree(t, filepath.Join(src, "expected"), exp)
				want = snapshotTree(t, exp)
			}
			_, err = w.ApplyPatch(context.Background(), string(text))
			if err != nil {
				var coded interface{ Code() string }
				if !errors.As(err, &coded) || coded.Code() == "" || coded.Code() == patch.CodeSnapshotIncomplete || coded.Code() == string(CodeUncertain) {
					t.Fatalf("untyped or unexpected error %T: %v", err, err)
				}
				t.Logf("rejected: %v", err)
			}
			got := snapshotTree(t, root)
			if want == input && err == nil {
				t.Errorf("the expected tree equals the input, but the patch was accepted")
			}
			if name == divergentScenario {
				var ce *patch.ConflictError
				if !errors.As(err, &ce) {
					t.Errorf("want a conflict, got %v", err)
				}
			}
			if got != want {
				t.Errorf("tree mismatch\n--- got\n%s--- want\n%s", got, want)
			}
			assertNoTemp(t, root)
		})
		if ok {
			passed++
		}
	}
	t.Logf("apply_patch conformance through the file tools: %d/%d scenarios pass", passed, total)
}

// copyTree copies src into dst; a missing src is an empty tree (Git stores no empty folder).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
