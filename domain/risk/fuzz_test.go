package risk_test

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

// FuzzAssess: any command text is assessed without a panic, the same way twice, and a
// catastrophic verdict is denied in every mode.
func FuzzAssess(f *testing.F) {
	for _, r := range attacks {
		f.Add(r.command, home)
	}
	f.Add("rm -rf {1..99999999}{1..99999999}", "")
	f.Add("x=$'\\u{110000}\\c'; eval \"$x\"", "/")
	f.Add("a=1; a+=2; a[0]=/; rm -rf ${a[@]} ${#a} ${a:1:2} ${a/x/y} ${!a} $((1+1))", "relative")
	f.Fuzz(func(t *testing.T, command, homeDir string) {
		env := risk.Env{Home: homeDir}
		v := risk.Assess(command, env)
		if again := risk.Assess(command, env); again != v {
			t.Fatalf("%q: %+v then %+v", command, v, again)
		}
		switch v.Level {
		case risk.Safe, risk.Destructive, risk.Catastrophic:
		default:
			t.Fatalf("%q: level %q", command, v.Level)
		}
		for _, m := range []string{risk.ModeStandard, risk.ModeStrict, risk.ModeAllowAll} {
			if v.Level == risk.Catastrophic && risk.Decide(v, m) != risk.Deny {
				t.Fatalf("%q: catastrophic but %s in %s", command, risk.Decide(v, m), m)
			}
		}
	})
}

// FuzzAssessInWorkspace: the same properties with a working directory and Zuno's data
// directory, and the parser paths they open (substitutions read for their output, find's name
// tests, archivers, remote shells, editors and interpreters): no panic, deterministic, and a
// catastrophic verdict denied in every mode.
func FuzzAssessInWorkspace(f *testing.F) {
	for _, r := range homeAttacks {
		f.Add(r.command, home, project, zunoData)
	}
	for _, r := range reviewHomeAttacks {
		f.Add(r.command, home, project, zunoData)
	}
	for _, r := range reviewBAttacks {
		f.Add(r.command, home, project, zunoData)
	}
	// The second review's parsers: concatenated literals, calls by name, eval of a literal,
	// chdir in code, descriptors, git aliases, gio URIs.
	f.Add(`python3 -c 'exec("'; python3 -c 'getattr(x,"a"+' ; node -e 'f[""](' ; perl -e 'eval "a".'; perl -e 'chdir'`, home, project, zunoData)
	f.Add(`ruby -e 'x.send(:a)'; php -r 'eval(');'; lua -e 'load("x")'; node -e 'eval("eval(\"x\")")'`, "", "relative", "")
	f.Add(`rm -rf /dev/fd/ /dev/fd/x/.. //dev//stdin// /proc/1/fd/0/; exec <&-; exec 0<; git -c alias.=x ; gio; gio move file://`, home, "/dev/fd/3", zunoData)
	f.Add(`alias a='a'; a; alias b='c' c='b'; b; set --; "$@"; mapfile -C; sed 's/'; sed e; tclsh <<< 'exec'`, home, project, zunoData)
	f.Add(`find ~ -name '[' -delete; find / -regex '(' -delete; find . -name '[]' -delete`, home, "/", "/")
	f.Add(`perl -e 'qx{rm -rf ~'; vim -c '!'; awk 'BEGIN{system(}'; python -c 'os.system(("x"'`, "", "relative", "")
	f.Add(`tar; tar -; tar cCf; zip -; 7z; ssh; ssh -o; git -c; git -c =; env -C`, home, project, "")
	f.Fuzz(func(t *testing.T, command, homeDir, cwd, data string) {
		env := risk.Env{Home: homeDir, Cwd: cwd, Zuno: []string{data}}
		v := risk.Assess(command, env)
		if again := risk.Assess(command, env); again != v {
			t.Fatalf("%q: %+v then %+v", command, v, again)
		}
		switch v.Level {
		case risk.Safe, risk.Destructive, risk.Catastrophic:
		default:
			t.Fatalf("%q: level %q", command, v.Level)
		}
		if v.Level == risk.Catastrophic && risk.Decide(v, risk.ModeAllowAll) != risk.Deny {
			t.Fatalf("%q: catastrophic but not denied under allow_all", command)
		}
	})
}

// FuzzPathsNamed: any text, read for the paths it names, never panics, reads the same twice,
// and every path it returns is absolute and clean.
func FuzzPathsNamed(f *testing.F) {
	for _, r := range homeAttacks {
		f.Add(r.command)
	}
	f.Add(`cat ~/notes.txt "$DIR/x" --file=/etc/passwd < /etc/hosts; cd ..; cat "$(cat f)/y"`)
	f.Fuzz(func(t *testing.T, command string) {
		env := risk.Env{Home: home, Cwd: project}
		n, ok := risk.PathsNamed(command, env)
		again, ok2 := risk.PathsNamed(command, env)
		if ok != ok2 || !slices.Equal(n.Paths, again.Paths) || !slices.Equal(n.Undecided, again.Undecided) {
			t.Fatalf("%q: two readings differ", command)
		}
		for _, p := range n.Paths {
			if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
				t.Fatalf("%q: path %q is not absolute and clean", command, p)
			}
		}
	})
}
