package gitcheck

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Attacks on the pre-flight's reading of a command: every spelling and route to a git add
// or commit, and text that only looks like one.
func TestFind(t *testing.T) {
	add := func(f func(*Invocation)) []Invocation {
		inv := Invocation{Sub: "add"}
		f(&inv)
		return []Invocation{inv}
	}
	commit := func(f func(*Invocation)) []Invocation {
		inv := Invocation{Sub: "commit"}
		f(&inv)
		return []Invocation{inv}
	}
	specs := func(s ...string) func(*Invocation) { return func(i *Invocation) { i.Pathspecs = s } }
	for _, tc := range []struct {
		command string
		want    []Invocation
	}{
		{"git add .", add(specs("."))},
		{"git add -A", add(func(i *Invocation) { i.Whole = true })},
		{"git add --all", add(func(i *Invocation) { i.Whole = true })},
		{"git add -u", add(func(i *Invocation) { i.Whole, i.Tracked = true, true })},
		{"git add src/a.go node_modules/", add(specs("src/a.go", "node_modules"))},
		{"git add -- -weird", add(specs("-weird"))},
		{"git add '*.go'", add(func(i *Invocation) { i.AnyPath = true })},
		{"git add $F", add(func(i *Invocation) { i.AnyPath = true })},
		{"git add :/", add(func(i *Invocation) { i.AnyPath = true })},
		{"git add -n .", add(func(i *Invocation) { i.Pathspecs, i.DryRun = []string{"."}, true })},
		{"git -C sub add .", add(func(i *Invocation) { i.Dir, i.Pathspecs = "sub", []string{"."} })},
		{"git -C a -C b add x", add(func(i *Invocation) { i.Dir, i.Pathspecs = "a/b", []string{"x"} })},
		{"git -C $D add x", add(func(i *Invocation) { i.DirUnknown, i.Pathspecs = true, []string{"x"} })},
		{"git -c user.name=x --no-pager add x", add(specs("x"))},
		{"/usr/bin/git add x", add(specs("x"))},
		{"sudo git add x", add(specs("x"))},
		{"env GIT_TRACE=1 git add x", add(specs("x"))},
		{"bash -c 'git add x'", add(specs("x"))},
		{"g=git; $g add x", add(specs("x"))},
		{"f() { git add x; }; f", add(specs("x"))},
		{"git commit -m 'add things'", commit(func(*Invocation) {})},
		{"git commit -am msg", commit(func(i *Invocation) { i.Whole, i.Tracked = true, true })},
		{"git commit -a -m msg", commit(func(i *Invocation) { i.Whole, i.Tracked = true, true })},
		{"git commit -m msg src/a.go", commit(specs("src/a.go"))},
		{"git commit -F msg.txt", commit(func(*Invocation) {})},
		{"git commit --dry-run", commit(func(i *Invocation) { i.DryRun = true })},
		{"echo 'git add .'", nil},
		{"echo git add .", nil},
		{"git status", nil},
		{"git log --grep 'git add'", nil},
		{"# git add .", nil},
		{"$GIT add x", nil},
	} {
		got, ok := Find(tc.command)
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v (ok %v), want %+v", tc.command, got, ok, tc.want)
		}
	}
	if _, ok := Find("git add 'unterminated"); ok {
		t.Error("unreadable text read as running nothing")
	}
	// Two invocations, in text order.
	got, _ := Find("git add a && git commit -m m")
	if len(got) != 2 || got[0].Sub != "add" || got[1].Sub != "commit" {
		t.Errorf("chain: %+v", got)
	}
}

func TestDeliveredAndArtifacts(t *testing.T) {
	status := []Entry{
		{'?', '?', "node_modules/x/index.js"},
		{'?', '?', "src/new.go"},
		{' ', 'M', "src/lib.go"},
		{' ', 'M', "build/out.o"},
		{'A', ' ', "pkg/__pycache__/m.pyc"},
		{' ', 'D', "gone.o"},
		{'D', ' ', "old/node_modules/y.js"},
	}
	for _, tc := range []struct {
		command, prefix string
		delivered       []string
		artifacts       []string
	}{
		{"git add .", "", []string{"node_modules/x/index.js", "src/new.go", "src/lib.go", "build/out.o"}, []string{"node_modules/x/index.js", "build/out.o"}},
		{"git add src", "", []string{"src/new.go", "src/lib.go"}, nil},
		{"git add .", "src/", []string{"src/new.go", "src/lib.go"}, nil},
		{"git add ../build", "src/", []string{"build/out.o"}, []string{"build/out.o"}},
		{"git add -u", "", []string{"src/lib.go", "build/out.o"}, []string{"build/out.o"}},
		{"git add", "", nil, nil},
		{"git add -n .", "", nil, nil},
		{"git commit -m m", "", []string{"pkg/__pycache__/m.pyc"}, []string{"pkg/__pycache__/m.pyc"}},
		{"git commit -am m", "", []string{"src/lib.go", "build/out.o", "pkg/__pycache__/m.pyc"}, []string{"build/out.o", "pkg/__pycache__/m.pyc"}},
		{"git commit -m m src/lib.go", "", []string{"src/lib.go"}, nil},
	} {
		invs, _ := Find(tc.command)
		var delivered, artifacts []string
		for _, inv := range invs {
			delivered = append(delivered, inv.Delivered(tc.prefix, status)...)
			artifacts = append(artifacts, inv.Artifacts(tc.prefix, status)...)
		}
		if !sameSet(delivered, tc.delivered) || !sameSet(artifacts, tc.artifacts) {
			t.Errorf("%q in %q: delivered %v artifacts %v; want %v %v", tc.command, tc.prefix, delivered, artifacts, tc.delivered, tc.artifacts)
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestGenerated(t *testing.T) {
	for p, want := range map[string]bool{
		"node_modules/a.js": true, "web/node_modules/a/b.js": true, "a/__pycache__/m.cpython-312.pyc": true,
		"m.pyc": true, "lib/x.o": true, "x.so": true, "Main.class": true, "pkg.egg-info/PKG-INFO": true,
		".venv/bin/python": true, ".spool-123.out": true,
		"src/main.go": false, "node_modules.md": false, "build/script.sh": false, "docs/.o": false,
		"README": false, "dist/index.html": false, "target/readme.txt": false,
	} {
		if Generated(p) != want {
			t.Errorf("Generated(%q) = %v, want %v", p, !want, want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	got, ok := ParseStatus([]byte("?? a b\x00 M c\x00A  d/e\x00"))
	want := []Entry{{'?', '?', "a b"}, {' ', 'M', "c"}, {'A', ' ', "d/e"}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v %v", got, ok)
	}
	for _, bad := range []string{"?", "XYZ\x00", "fatal: not a git repository\n"} {
		if _, ok := ParseStatus([]byte(bad)); ok {
			t.Errorf("%q read as a status", bad)
		}
	}
	if got, ok := ParseStatus(nil); !ok || got != nil {
		t.Error("an empty status is a clean repository")
	}
}

func TestPlan(t *testing.T) {
	find := func(c string) []Invocation { invs, _ := Find(c); return invs }
	dirs, byDir, r := Plan(find("git add a && git -C sub commit -m m && git commit -m again"))
	if r != nil || !reflect.DeepEqual(dirs, []string{"", "sub"}) || len(byDir[""]) != 2 {
		t.Errorf("%v %v %v", dirs, byDir, r)
	}
	if dirs, _, r := Plan(find("git status; git add -n .")); r != nil || len(dirs) != 0 {
		t.Errorf("nothing to deliver needs no reads: %v %v", dirs, r)
	}
	if _, _, r := Plan(find("git -C a add x; git -C b add x; git -C c add x")); r == nil || r.Code() != CodePreflightFailed {
		t.Errorf("three repositories need six reads: %v", r)
	}
	if _, _, r := Plan(find("git -C $D add x")); r == nil || r.Code() != CodePreflightFailed {
		t.Errorf("an unknown repository: %v", r)
	}
}

// The seeds' exact message for a read that does not answer.
func TestUnansweredMessage(t *testing.T) {
	const seeds = "`git status --porcelain` did not answer within the 30s this command's pre-flight repository reads share, so the repository state it depends on is unknown; it was not run"
	r := Unanswered(StatusRead.Display, 30*time.Second)
	if r.Message != seeds || r.Code() != CodePreflightUnanswered || !strings.HasPrefix(r.Error(), seeds) {
		t.Fatalf("%q", r.Message)
	}
}

func FuzzFind(f *testing.F) {
	for _, s := range []string{"git add .", "git -C x commit -am m", "bash -c 'git add $x'", "git add 'a", "g=git; $g -C \"$d\" add -- *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, command string) {
		invs, ok := Find(command)
		if !ok && invs != nil {
			t.Fatal("unreadable text with invocations")
		}
		for _, inv := range invs {
			if inv.Sub != "add" && inv.Sub != "commit" {
				t.Fatalf("sub %q", inv.Sub)
			}
			_ = inv.Artifacts("", []Entry{{'?', '?', "x"}})
		}
		Plan(invs)
	})
}

// git status output carries file names the model chose: the parser never panics, and what it
// accepts it accepts whole (every record two status letters, a space and a path).
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"?? a\x00 M b\x00", "", "A  x y\x00\x00", "bad"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		entries, ok := ParseStatus(out)
		if !ok && entries != nil {
			t.Fatal("entries from unreadable output")
		}
		for _, e := range entries {
			if e.Path == "" {
				t.Fatalf("empty path from %q", out)
			}
			_ = Generated(e.Path)
		}
	})
}
