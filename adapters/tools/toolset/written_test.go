package toolset

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// writtenPaths for shell is a deliberate lower bound (seeds 000, "一次 Shell 调用会报告自己写了
// 什么"): a statically named path is reported only when its before and after observations
// differ. One row per rule.
func TestShellWrittenPathsLowerBound(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name, command string
		want          []string
	}{
		{"sed -i rewrites a named file", `sed -i 's/aaa/bbbb/' f.txt`, []string{"f.txt"}},
		{"cp names its target", `cp f.txt copy.txt`, []string{"copy.txt"}},
		{"touch creates a named file", `touch new.txt`, []string{"new.txt"}},
		{"touch of an existing file changes its mtime", `sleep 0.01; touch f.txt`, []string{"f.txt"}},
		{"a redirection target is the shell's, not reported", `echo x > redirected.txt; echo y >> f.txt`, nil},
		{"a here-document's target is not reported", "cat > doc.txt <<EOF\nbody\nEOF", nil},
		{"an expanded target is skipped, not guessed", `OUT=exp.txt; touch "$OUT" *.md $(printf %s sub.txt)`, nil},
		{"a deletion is not reported", `rm f.txt`, nil},
		{"a rewrite keeping size and mtime is not reported",
			`cp -p f.txt /tmp/keep-$$; sed -i 's/aaa/zzz/' f.txt; touch -r /tmp/keep-$$ f.txt; rm /tmp/keep-$$`, nil},
		{"a path outside the workspace is not reported", `touch ` + filepath.Join(outside, "out.txt"), nil},
		{"reading is not writing", `cat f.txt; wc -c f.txt`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := newSet(t)
			put(t, root, "f.txt", "aaa\n")
			put(t, root, "a.md", "")
			r := call(t, s, tools.NameShell, args("command", tc.command))
			want(t, r, tools.OutcomeCompleted, "")
			if !slices.Equal(r.Metadata.WrittenPaths, tc.want) {
				t.Errorf("writtenPaths %v, want %v\n%s", r.Metadata.WrittenPaths, tc.want, r.Output)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err != nil {
		t.Fatalf("the outside write did not happen, so the row proved nothing: %v", err)
	}
}

// watchPaths reads untrusted command text: it never panics, never exceeds its bound, and never
// returns an option, an assignment, or a word holding a substitution's or expansion's marker.
func FuzzWatchPaths(f *testing.F) {
	for _, s := range []string{"sed -i 's/a/b/' f", "touch $(a $(b) `c`) d", "cat <<EOF\nx\nEOF", "echo 'x", "a\\\nb > c", "`unclosed"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, command string) {
		got := watchPaths(command)
		if len(got) > maxWatchPaths {
			t.Fatalf("%d paths", len(got))
		}
		for _, p := range got {
			if !isPathWord(p) {
				t.Fatalf("%q is not a path word", p)
			}
		}
	})
}
