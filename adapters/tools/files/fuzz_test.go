package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPaths: whatever the path, Authorize's answer is consistent (Inside exactly when the
// target is under the root; otherwise a dir/* resource), and read and write without a grant
// never reach the outside directory.
func FuzzPaths(f *testing.F) {
	for _, s := range []string{"real.txt", "../outside/secret.txt", "out-link", "dir-link/f.txt", "chain", "dir/up-link",
		"dangling-out", "/", ".", "", "a//b/../../..", "dir/root-link/real.txt", "in-link/x", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		w, root, outside := attackFixture(t)
		a, err := w.Authorize(p)
		if err == nil {
			if a.Inside != within(w.realRoot, a.Target) || a.Inside == (a.ExternalDir != "") {
				t.Fatalf("Authorize(%q) = %+v", p, a)
			}
			if !a.Inside && !strings.HasSuffix(a.ExternalDir, "/*") {
				t.Fatalf("resource %q", a.ExternalDir)
			}
		}
		r, err := w.Read(context.Background(), ReadRequest{Path: p})
		if err == nil && strings.Contains(r.Content, "secret") {
			t.Fatalf("read %q reached outside", p)
		}
		w.Write(context.Background(), p, []byte("x"))
		if get(t, outside, "secret.txt") != "secret\n" {
			t.Fatalf("write %q changed the outside file", p)
		}
		if des, _ := os.ReadDir(outside); len(des) != 1 {
			t.Fatalf("write %q created a file outside", p)
		}
		if _, err := os.Lstat(filepath.Join(root, "out-link")); err != nil {
			t.Fatal(err)
		}
	})
}
