package skills

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkDiscover is what discovery adds to every turn (it runs once per turn's
// configuration): a repository whose .zuno/skills is empty is the baseline, then 10 and 100
// project skills read through the handle walk and parsed.
func BenchmarkDiscover(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			repo := b.TempDir()
			dir := filepath.Join(repo, ".zuno", "skills")
			for i := range n {
				name := fmt.Sprintf("skill-%03d", i)
				write(b, filepath.Join(dir, name, "SKILL.md"), skillText(name)+"Some instructions of a paragraph or two.\n")
			}
			if n == 0 {
				write(b, filepath.Join(dir, "README"), "none")
			}
			dirs := Dirs("", nil, repo)
			b.ReportAllocs()
			for b.Loop() {
				cat, err := Discover(dirs)
				if err != nil || len(cat.Skills) != n {
					b.Fatalf("%d skills, %v", len(cat.Skills), err)
				}
			}
		})
	}
}
