package shell

import (
	"os"
	"path/filepath"
	"testing"
)

// A remembered program is found again while it stays; once it is gone the name is looked up
// anew, and a name that is nowhere fails as exec.LookPath does.
func TestLookPathRemembersAndNotices(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	t.Setenv("PATH", first+string(os.PathListSeparator)+second)
	for _, d := range []string{first, second} {
		if err := os.WriteFile(filepath.Join(d, "zuno-lookpath-test"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if p, err := lookPath("zuno-lookpath-test"); err != nil || p != filepath.Join(first, "zuno-lookpath-test") {
			t.Fatalf("%q %v", p, err)
		}
	}
	if err := os.Chmod(filepath.Join(first, "zuno-lookpath-test"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := lookPath("zuno-lookpath-test"); err != nil || p != filepath.Join(second, "zuno-lookpath-test") {
		t.Fatalf("after the first lost its mode: %q %v", p, err)
	}
	if err := os.Remove(filepath.Join(second, "zuno-lookpath-test")); err != nil {
		t.Fatal(err)
	}
	if p, err := lookPath("zuno-lookpath-test"); err == nil {
		t.Fatalf("found %q with none left", p)
	}
}
