package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A protected path's ancestors inside the workspace are pinned (mount points: they cannot be
// renamed or removed) but stay writable: build/keep protects keep, and the rest of build
// still takes writes. (.git is protected whole by default, so a directory of the user's is
// the example here.)
func TestProtectedPathAncestorsPinnedNotReadOnly(t *testing.T) {
	ws := hostDir(t)
	if err := os.MkdirAll(filepath.Join(ws, "build", "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	sess := confined(t, ws, `{"protectedPaths": ["build/keep"]}`, false)
	res := runIn(t, sess, ws, `echo ref > build/HEAD; mkdir -p build/objects/ab && echo o > build/objects/ab/cd; `+
		`mv build/objects build/objects2 && mv build/objects2 build/objects; `+
		`mv build build.old 2>/dev/null && echo MOVED; rm -rf build 2>/dev/null; `+
		`mv build/keep build/h2 2>/dev/null && echo MOVED; ln -sfn /tmp build 2>/dev/null; true`)
	if strings.Contains(string(res.Output), "MOVED") {
		t.Errorf("a pinned ancestor or the protected path was renamed: %q", res.Output)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "build", "keep")); err != nil || !fi.IsDir() {
		t.Errorf("build/keep is gone or replaced on the host: %v (%q)", err, res.Output)
	}
	// rm -rf build emptied the writable part of build; the writes before it landed.
	res = runIn(t, sess, ws, `echo ref > build/HEAD && cat build/HEAD`)
	if _, err := os.Stat(filepath.Join(ws, "build", "HEAD")); err != nil {
		t.Errorf("build is not writable around the protected keep: %q", res.Output)
	}
}

// A protected path below a writable root that is itself inside the workspace: the ancestor
// between the workspace and the root cannot be moved aside either.
func TestProtectedPathBelowNestedWritableRoot(t *testing.T) {
	ws := hostDir(t)
	root := filepath.Join(ws, "a", "cache")
	if err := os.MkdirAll(filepath.Join(root, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	sess := confined(t, ws, `{"writableRoots": ["`+root+`"], "protectedPaths": ["`+filepath.Join(root, "keep")+`"]}`, false)
	res := runIn(t, sess, ws, `mv a a.old 2>/dev/null; mv a/cache a/c2 2>/dev/null; `+
		`mkdir -p a/cache/keep; echo x > a/cache/keep/planted; echo y > a/cache/other; true`)
	if _, err := os.Stat(filepath.Join(root, "keep", "planted")); err == nil {
		t.Errorf("planted a file in the protected path: %q", res.Output)
	}
	if _, err := os.Stat(filepath.Join(root, "other")); err != nil {
		t.Errorf("the writable root is not writable: %q", res.Output)
	}
}
