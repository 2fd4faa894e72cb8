package config

import (
	"os"
	"path/filepath"
	"testing"
)

// ProjectRoot passes over an empty .git directory below a repository, as git does: the
// shell's sandbox leaves one where a workspace inside a repository had no .git
// (docs/sandbox.md, "Covered when missing"). Anywhere else a .git of any kind marks the root.
func TestProjectRootPassesOverAnEmptyGitBelowARepository(t *testing.T) {
	base := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("outer/.git/objects")
	mk("outer/ws/.git")
	mk("lone/.git")
	mk("full/ws/.git/objects")
	mk("full/.git/objects")
	if err := os.WriteFile(filepath.Join(mk("wt"), ".git"), []byte("gitdir: /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		"outer/ws": "outer",   // the cover, passed over
		"lone":     "lone",    // an empty .git with no repository above: the root, as before
		"full/ws":  "full/ws", // a repository inside a repository
		"wt":       "wt",      // a worktree's .git file
	} {
		if got := ProjectRoot(filepath.Join(base, dir)); got != filepath.Join(base, want) {
			t.Errorf("ProjectRoot(%s) = %s, want %s", dir, got, filepath.Join(base, want))
		}
	}
}
