package risk_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

// What a command names outside the workspace (/home/u/proj), as the external_directory check
// reads it (docs/permissions.md, "Shell
// commands outside the workspace"): every spelling of a path outside, and the quiet cases.
func TestPathsNamed(t *testing.T) {
	env := risk.Env{Home: "/home/u", Cwd: "/home/u/proj"}
	for _, tc := range []struct {
		cmd       string
		paths     []string
		undecided []string
	}{
		{"cat ~/notes.txt", []string{"/home/u/notes.txt"}, nil},
		{"cat $HOME/notes.txt", []string{"/home/u/notes.txt"}, nil},
		{`cat "${HOME}/notes.txt"`, []string{"/home/u/notes.txt"}, nil},
		{"cat /etc/passwd", []string{"/etc/passwd"}, nil},
		{"head -n1 < /etc/passwd", []string{"/etc/passwd"}, nil},
		{"echo x > ../out.txt", []string{"/home/u/out.txt"}, nil},
		{"cat ../other/a.go", []string{"/home/u/other/a.go"}, nil},
		{"cd .. && cat notes.txt", []string{"/home/u"}, nil},
		{"cd /etc; cat ./passwd", []string{"/etc", "/etc/passwd"}, nil},
		{"env -C /etc cat passwd", []string{"/etc"}, nil},
		{"sudo cat /root/x", []string{"/root/x"}, nil},
		{"bash -c 'cat /etc/shadow'", []string{"/etc/shadow"}, nil},
		{"f=/etc/hosts; cat $f", []string{"/etc/hosts"}, nil},
		{"sort --output=/var/out x", []string{"/var/out"}, nil},
		{`cat "$DIR/x"`, nil, []string{"…/x"}}, // an environment variable the text does not set
		{`cat "$(pwd)/../x"`, []string{"/home/u/x"}, nil},
		{`cat "$(cat dir.txt)/x"`, nil, []string{"…/x"}},
		{`cat /home/$WHO/x`, nil, []string{"/home/…/x"}}, // a whole unknown segment may be ..
		{`cat /home/u$X/x`, []string{"/home/x"}, nil},    // inside a segment it stays below /home
		{"cat ~root/.bashrc", nil, []string{"~root/.bashrc"}},
		{"cd; cat notes.txt", []string{"/home/u"}, nil},
		{"cd -P; cat notes.txt", []string{"/home/u"}, nil},
		{"cd - && cat notes.txt", nil, []string{"…"}},
		{"cat ~-/x", nil, []string{"…/x"}},
		{"cat $(echo ~/x) /e''tc/passwd", []string{"/etc/passwd", "/home/u/x"}, nil},
		// Quiet: the program itself, bare words, expansions that spell no path, in-workspace
		// paths.
		{"python3 -V", nil, nil},
		{"/usr/bin/python3 -V", nil, nil},
		{"cat notes.txt src/a.go ./b.go ../proj/c.go", nil, nil},
		{"echo $X", nil, nil},
		{`git commit -m "$(cat msg)"`, nil, nil},
		{"ls >&2", nil, nil},
	} {
		n, ok := risk.PathsNamed(tc.cmd, env)
		if !ok {
			t.Fatalf("%q: not read", tc.cmd)
		}
		var outside []string
		for _, p := range n.Paths {
			if p != "/home/u/proj" && !strings.HasPrefix(p, "/home/u/proj/") {
				outside = append(outside, p)
			}
		}
		if !slices.Equal(outside, tc.paths) || !slices.Equal(n.Undecided, tc.undecided) {
			t.Errorf("%q: paths outside %q undecided %q, want %q %q", tc.cmd, outside, n.Undecided, tc.paths, tc.undecided)
		}
	}
	if _, ok := risk.PathsNamed("cat 'unterminated", env); ok {
		t.Error("a text the parser cannot read was read")
	}
}
