package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A protected path's ancestors inside the workspace are pinned (mount points: they cannot be
// renamed or removed) but stay writable: .git/hooks protects the hooks, and the rest of
// .git still takes writes.
func TestProtectedPathAncestorsPinnedNotReadOnly(t *testing.T) {
	ws := hostDir(t)
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	sess := confined(t, ws, `{"protectedPaths": [".git/hooks"]}`, false)
	res := runIn(t, sess, ws, `echo ref > .git/HEAD; mkdir -p .git/objects/ab && echo o > .git/objects/ab/cd; `+
		`mv .git/objects .git/objects2 && mv .git/objects2 .git/objects; `+
		`mv .git .git.old 2>/dev/null && echo MOVED; rm -rf .git 2>/dev/null; `+
		`mv .git/hooks .git/h2 2>/dev/null && echo MOVED; ln -sfn /tmp .git 2>/dev/null; true`)
	if strings.Contains(string(res.Output), "MOVED") {
		t.Errorf("a pinned ancestor or the protected path was renamed: %q", res.Output)
	}
	if fi, err := os.Lstat(filepath.Join(ws, ".git", "hooks")); err != nil || !fi.IsDir() {
		t.Errorf(".git/hooks is gone or replaced on the host: %v (%q)", err, res.Output)
	}
	// rm -rf .git emptied the writable part of .git; the writes before it landed.
	res = runIn(t, sess, ws, `echo ref > .git/HEAD && cat .git/HEAD`)
	if _, err := os.Stat(filepath.Join(ws, ".git", "HEAD")); err != nil {
		t.Errorf(".git is not writable around the protected hooks: %q", res.Output)
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
