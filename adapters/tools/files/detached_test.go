package files

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/patch"
)

// A Detached workspace (a replay over a workspace that is gone, docs/replay.md) answers the
// gate by spelling, reports each path inside it so answered, and reads or writes nothing.
func TestDetached(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone", "ws") // never created
	var assumed []string
	w, err := Detached(gone, func(p string) { assumed = append(assumed, p) })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	for _, tc := range []struct {
		path, target string
		inside       bool
	}{
		{"a.txt", filepath.Join(gone, "a.txt"), true},
		{"sub/../b.txt", filepath.Join(gone, "b.txt"), true},
		{filepath.Join(gone, "c", "d.txt"), filepath.Join(gone, "c", "d.txt"), true},
		{"../outside.txt", filepath.Join(filepath.Dir(gone), "outside.txt"), false},
	} {
		a, err := w.Authorize(tc.path)
		if err != nil {
			t.Fatalf("Authorize(%q): %v", tc.path, err)
		}
		if a.Inside != tc.inside || a.Symlink || (tc.inside && a.Target != tc.target) {
			t.Errorf("Authorize(%q) = %+v, want target %s inside=%v", tc.path, a, tc.target, tc.inside)
		}
	}
	want := []string{filepath.Join(gone, "a.txt"), filepath.Join(gone, "b.txt"), filepath.Join(gone, "c", "d.txt")}
	if !slices.Equal(assumed, want) {
		t.Errorf("assumed %q, want %q (outside paths are looked at for real, not assumed)", assumed, want)
	}

	// Restoring per-session state works by spelling too, and is not a gate's question.
	assumed = nil
	if err := w.RestoreCredential("a.txt", patch.ReadCredential{Digest: patch.DigestOf([]byte("x"))}); err != nil {
		t.Fatalf("RestoreCredential: %v", err)
	}
	if w.Credentials.Held("a.txt") == nil || assumed != nil {
		t.Errorf("restore: held %v, assumed %q", w.Credentials.Held("a.txt"), assumed)
	}

	ctx := context.Background()
	for name, call := range map[string]func() error{
		"read":  func() error { _, err := w.Read(ctx, ReadRequest{Path: "a.txt"}); return err },
		"write": func() error { _, err := w.Write(ctx, "a.txt", []byte("x")); return err },
		"apply_patch": func() error {
			_, err := w.ApplyPatch(ctx, "*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch")
			return err
		},
		"create": func() error { return w.CreateNew("r.md", []byte("x")) },
	} {
		var fe *Error
		if err := call(); !errors.As(err, &fe) || fe.Kind != WorkspaceGone {
			t.Errorf("%s in a detached workspace: %v, want %s", name, err, WorkspaceGone)
		}
	}
}
