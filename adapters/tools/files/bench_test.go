package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The baseline is plain os.ReadFile / os.WriteFile on the same file in the same run; the
// Workspace adds the handle walk, the credential and (for writes) the temporary file, fsync
// and rename. Compare with: go test -run=^$ -bench=. ./adapters/tools/files

func benchFixture(b *testing.B) (*Workspace, string) {
	root := b.TempDir()
	w, err := New(root)
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(root, "a", "b", "c", "f.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	return w, p
}

func BenchmarkReadPlain(b *testing.B) {
	_, p := benchFixture(b)
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadWorkspace(b *testing.B) {
	w, _ := benchFixture(b)
	for b.Loop() {
		if _, err := w.Read(context.Background(), ReadRequest{Path: "a/b/c/f.txt"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWritePlain(b *testing.B) {
	_, p := benchFixture(b)
	content := make([]byte, 4096)
	for b.Loop() {
		if err := os.WriteFile(p, content, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteWorkspace(b *testing.B) {
	w, _ := benchFixture(b)
	content := make([]byte, 4096)
	if _, err := w.Read(context.Background(), ReadRequest{Path: "a/b/c/f.txt"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := w.Write(context.Background(), "a/b/c/f.txt", content); err != nil {
			b.Fatal(err)
		}
	}
}
