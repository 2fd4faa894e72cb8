package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	domskills "github.com/zuno-run/zuno/domain/skills"
)

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillText(name string) string {
	return "---\nname: " + name + "\ndescription: " + name + " things\n---\nDo " + name + ".\n"
}

// The routes around the project directory's boundary (docs/skills.md, "Trust"), each on a real
// file system: a project skill is only ever a file inside the checkout, reached through no link.
func TestDiscoverBoundary(t *testing.T) {
	base := t.TempDir()
	home, repo, outside := filepath.Join(base, "home"), filepath.Join(base, "repo"), filepath.Join(base, "outside")
	write(t, filepath.Join(home, "skills", "lint", "SKILL.md"), skillText("lint"))
	write(t, filepath.Join(outside, "secret", "SKILL.md"), skillText("secret"))
	write(t, filepath.Join(outside, "leak", "SKILL.md"), skillText("leak"))
	write(t, filepath.Join(repo, ".zuno", "skills", "review", "SKILL.md"), skillText("review"))
	write(t, filepath.Join(repo, ".zuno", "skills", "lint", "SKILL.md"), skillText("lint"))
	write(t, filepath.Join(repo, ".zuno", "skills", "bad", "SKILL.md"), "no front matter")
	write(t, filepath.Join(repo, ".zuno", "skills", "empty", "README"), "no SKILL.md")
	write(t, filepath.Join(repo, ".zuno", "skills", "big", "SKILL.md"), skillText("big")+strings.Repeat("x", domskills.MaxFileBytes))
	// A link to a directory outside, as a skill: not followed (it is not a directory entry).
	must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(repo, ".zuno", "skills", "secret")))
	// A SKILL.md that is a link to a file outside.
	must(t, os.MkdirAll(filepath.Join(repo, ".zuno", "skills", "leak"), 0o755))
	must(t, os.Symlink(filepath.Join(outside, "leak", "SKILL.md"), filepath.Join(repo, ".zuno", "skills", "leak", "SKILL.md")))
	// A FIFO as SKILL.md: refused without blocking.
	must(t, os.MkdirAll(filepath.Join(repo, ".zuno", "skills", "fifo"), 0o755))
	must(t, syscall.Mkfifo(filepath.Join(repo, ".zuno", "skills", "fifo", "SKILL.md"), 0o644))

	cat, err := Discover(Dirs(home, nil, repo))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range cat.Skills {
		got = append(got, s.Name+"@"+s.Scope)
	}
	if strings.Join(got, " ") != "lint@user lint@project review@project" {
		t.Fatalf("skills %v", got)
	}
	problems := map[string]string{}
	for _, p := range cat.Problems {
		problems[filepath.Base(filepath.Dir(p.Source))] = p.Error
	}
	for name, word := range map[string]string{"bad": "front matter", "big": "more than", "leak": "symbolic link", "fifo": "not a regular file"} {
		if !strings.Contains(problems[name], word) {
			t.Errorf("%s: problem %q, want %q", name, problems[name], word)
		}
	}
	if _, ok := problems["secret"]; ok || strings.Contains(strings.Join(got, " "), "secret") {
		t.Error("a linked skill directory was read")
	}

	// .zuno/skills itself a link out of the checkout: nothing of it is read.
	repo2 := filepath.Join(base, "repo2")
	must(t, os.MkdirAll(filepath.Join(repo2, ".zuno"), 0o755))
	must(t, os.Symlink(outside, filepath.Join(repo2, ".zuno", "skills")))
	cat, err = Discover(Dirs("", nil, repo2))
	if err != nil || len(cat.Skills) != 0 || len(cat.Problems) != 1 || !strings.Contains(cat.Problems[0].Error, "symbolic link") {
		t.Fatalf("linked .zuno/skills: %+v %v", cat, err)
	}
	// .zuno a link: the same.
	repo3 := filepath.Join(base, "repo3")
	must(t, os.MkdirAll(repo3, 0o755))
	must(t, os.Symlink(filepath.Join(repo, ".zuno"), filepath.Join(repo3, ".zuno")))
	cat, err = Discover(Dirs("", nil, repo3))
	if err != nil || len(cat.Skills) != 0 {
		t.Fatalf("linked .zuno: %+v %v", cat, err)
	}
	// A user's directory may hold a link to a skill (the user's own choice, trusted layer).
	must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(home, "skills", "secret")))
	cat, err = Discover(Dirs(home, nil, ""))
	if err != nil || len(cat.Skills) != 2 {
		t.Fatalf("user link: %+v %v", cat, err)
	}
	// Missing directories hold nothing.
	if cat, err := Discover(Dirs(filepath.Join(base, "none"), []string{filepath.Join(base, "nothing")}, filepath.Join(base, "no-repo"))); err != nil || len(cat.Skills)+len(cat.Problems) != 0 {
		t.Fatalf("missing: %+v %v", cat, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A checkout cannot make a turn hold more than MaxTotalBytes of skill files.
func TestDiscoverTotalBound(t *testing.T) {
	repo := t.TempDir()
	n := MaxTotalBytes/domskills.MaxFileBytes + 2
	for i := range n {
		name := fmt.Sprintf("s%03d", i)
		text := skillText(name)
		write(t, filepath.Join(repo, ".zuno", "skills", name, "SKILL.md"), text+strings.Repeat("x", domskills.MaxFileBytes-len(text)))
	}
	cat, err := Discover(Dirs("", nil, repo))
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Skills) != MaxTotalBytes/domskills.MaxFileBytes || len(cat.Problems) != 1 || !strings.Contains(cat.Problems[0].Error, "in all") {
		t.Fatalf("%d skills, problems %v", len(cat.Skills), cat.Problems)
	}
}

// A directory of more names than discovery reads is left out whole, whatever order the file
// system lists it in.
func TestDiscoverHugeDirectory(t *testing.T) {
	repo := t.TempDir()
	write(t, filepath.Join(repo, ".zuno", "skills", "real", "SKILL.md"), skillText("real"))
	for i := range maxEntries {
		write(t, filepath.Join(repo, ".zuno", "skills", fmt.Sprintf("f%05d", i)), "x")
	}
	cat, err := Discover(Dirs("", nil, repo))
	if err != nil || len(cat.Skills) != 0 || len(cat.Problems) != 1 || !strings.Contains(cat.Problems[0].Error, "more than") {
		t.Fatalf("%+v %v", cat, err)
	}
}
