package bg

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// artifactFixture is a root with one 60000-byte artifact and a secret file
// outside the root.
func artifactFixture(t *testing.T) (m *Manager, root, art string, content []byte, secret string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "artifacts")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	content = bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyzABCD\n"), 1500)[:60000]
	art = filepath.Join(root, "call_1.out")
	if err := os.WriteFile(art, content, 0o600); err != nil {
		t.Fatal(err)
	}
	secret = filepath.Join(base, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return newManager(t, WithArtifactRoots(root)), root, art, content, secret
}

func TestArtifactPagesFromZero(t *testing.T) {
	m, _, art, content, _ := artifactFixture(t)
	w, err := m.ReadArtifact(art, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.WindowFrom != 0 || w.HasEarlier || w.Bytes != DefaultLimit || !w.HasMore || !w.FromDisk ||
		w.TotalWritten != int64(len(content)) || w.Status != "" || w.OutputPath == "" {
		t.Fatalf("first window %+v", w)
	}
	var got []byte
	got = append(got, w.Text...)
	for w.HasMore {
		from := w.Cursor
		if w, err = m.ReadArtifact(art, ptr(from), 15000); err != nil {
			t.Fatal(err)
		}
		if w.WindowFrom != from || !w.HasEarlier {
			t.Fatalf("window %+v after cursor %d", w, from)
		}
		got = append(got, w.Text...)
	}
	if !bytes.Equal(got, content) || w.Cursor != int64(len(content)) {
		t.Fatalf("paged %d bytes, want %d", len(got), len(content))
	}
	if w, err = m.ReadArtifact(art, ptr(0), 1<<20); err != nil || w.Bytes != MaxLimit {
		t.Fatalf("clamped read: %d bytes, %v", w.Bytes, err)
	}
	if w, err = m.ReadArtifact(art, ptr(int64(len(content))), 0); err != nil || w.Bytes != 0 || w.HasMore {
		t.Fatalf("read at the end: %+v, %v", w, err)
	}
	_, err = m.ReadArtifact(art, ptr(int64(len(content))+1), 0)
	wantCode(t, err, CodeInvalidArguments, "cursor")

	// A relative path is taken inside the roots.
	if w, err = m.ReadArtifact("call_1.out", ptr(10), 5); err != nil || w.Text != "abcde" {
		t.Fatalf("relative read: %+v, %v", w, err)
	}
}

func TestArtifactRefusesPathsOutsideRoots(t *testing.T) {
	m, root, art, _, secret := artifactFixture(t)

	escape := filepath.Join(root, "escape")
	if err := os.Symlink(secret, escape); err != nil {
		t.Fatal(err)
	}
	dirEscape := filepath.Join(root, "up")
	if err := os.Symlink(filepath.Dir(secret), dirEscape); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(root, "alias")
	if err := os.Symlink(art, inside); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, path, code string
	}{
		{"absolute outside", secret, CodeInvalidArguments},
		{"system file", "/etc/passwd", CodeInvalidArguments},
		{"dot-dot", filepath.Join(root, "..", "secret.txt"), CodeInvalidArguments},
		{"relative dot-dot", "../secret.txt", CodeInvalidArguments},
		{"symlink escaping", escape, CodeInvalidArguments},
		{"symlinked dir escaping", filepath.Join(dirEscape, "secret.txt"), CodeInvalidArguments},
		{"the root itself", root, CodeInvalidArguments},
		{"a directory", filepath.Join(root, "sub"), CodeInvalidArguments},
		{"missing inside", filepath.Join(root, "nope.out"), CodeNotFound},
		{"missing outside", "/nonexistent/zuno/x", CodeInvalidArguments},
		{"empty", "", CodeInvalidArguments},
		{"nul", root + "/a\x00b", CodeInvalidArguments},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := m.ReadArtifact(c.path, nil, 0)
			if err == nil {
				t.Fatalf("read %q: %q", c.path, w.Text)
			}
			wantCode(t, err, c.code, "outputPath")
			if strings.Contains(err.Error(), "no artifact exists") != (c.code == CodeNotFound) {
				t.Fatalf("outside the roots, existence must not be revealed: %v", err)
			}
		})
	}

	// A symlink that stays inside the roots is fine.
	if w, err := m.ReadArtifact(inside, ptr(0), 10); err != nil || w.Text != "0123456789" {
		t.Fatalf("symlink inside the root: %+v, %v", w, err)
	}

	// With no roots configured nothing is readable.
	bare := newManager(t)
	_, err := bare.ReadArtifact(art, nil, 0)
	wantCode(t, err, CodeUnavailable, "outputPath")
}
