package risk

import "testing"

// TestPreapproves is the attack table of docs/risk.md, "Pre-approval by a rule": each row is
// an allow rule's pattern and a command it matched, graded by the real gate.
func TestPreapproves(t *testing.T) {
	env := Env{Home: "/home/u", Cwd: "/home/u/proj"}
	for _, tc := range []struct {
		pattern, command string
		want             bool
	}{
		{"rm -rf build*", "rm -rf build", true},
		{"rm -rf build*", "rm -rf build/*", true},
		{"rm *", "rm -rf dist", true},
		{"  rm -rf build*", "rm -rf build", true},
		{"find *", "find build -delete", true},
		{"git clean*", "git clean -fdx", true},
		{"git push*", "git push --force origin main", true},
		{"dd *", "dd if=/dev/zero of=x.img", true},
		// a bare * names nothing, nor does a wildcard in the program's word
		{"*", "rm -rf build", false},
		{"* -rf build", "rm -rf build", false},
		{"r*", "rm -rf build", false},
		{"*rm*", "rm -rf build", false},
		// catastrophic commands are never pre-approved, whatever the pattern names
		{"rm *", "rm -rf /", false},
		{"rm -rf *", "rm -rf ~", false},
		{"rm *", "rm -rf /home/u", false},
		{"rm *", "rm -rf ..", false},
		{"rm *", "rm -rf /etc", false},
		// a safe command needs none
		{"ls *", "ls -la", false},
		// more than one command, or words bash rewrites, are not what the rule names
		{"rm -rf build*", "rm -rf build; rm -rf src", false},
		{"rm -rf build*", "rm -rf build && rm -rf src", false},
		{"rm -rf build*", "rm -rf build || rm -rf src", false},
		{"rm -rf build*", "rm -rf build | tee x", false},
		{"rm -rf build*", "rm -rf build & rm -rf src", false},
		{"rm -rf build*", "rm -rf build\nrm -rf src", false},
		{"rm -rf build*", "rm -rf build $(echo src)", false},
		{"rm -rf build*", "rm -rf build `echo src`", false},
		{"rm -rf build*", "rm -rf build $X", false},
		{"rm -rf build*", "rm -rf build \"src\"", false},
		{"rm -rf build*", "rm -rf build 'src'", false},
		{"rm -rf build*", "rm -rf build{,/../src}", false},
		{"rm -rf build*", "rm -rf build \\src", false},
		{"rm -rf build*", "rm -rf build > x", false},
		{"rm -rf build*", "rm -rf build ~/src", false},
		{"rm*", "rm -rf build", false},
		// the pattern names a wrapper, not what it runs
		{"sudo *", "sudo rm -rf build", false},
		{"env *", "env rm -rf build", false},
		{"xargs *", "xargs rm -rf build", false},
		{"bash *", "bash -c 'rm -rf build'", false},
		{"command *", "command rm -rf build", false},
		// spelling variants of the program are not the program the pattern names
		{"rm *", "\\rm -rf build", false},
		{"rm *", "'rm' -rf build", false},
		{"rm *", "/bin/rm -rf build", false},
		{"rm *", "X=1 rm -rf build", false},
	} {
		v := Assess(tc.command, env)
		if got := Preapproves(tc.pattern, tc.command, v); got != tc.want {
			t.Errorf("Preapproves(%q, %q) [%s %q] = %v, want %v", tc.pattern, tc.command, v.Level, v.Program, got, tc.want)
		}
	}
}

// FuzzPreapproves: a command the gate reads as catastrophic is never pre-approved, whatever
// the pattern, and a pre-approved command is one plain command named by the pattern.
func FuzzPreapproves(f *testing.F) {
	f.Add("rm *", "rm -rf build")
	f.Add("rm *", "rm -rf /")
	f.Add("rm -rf build*", "rm -rf build; rm -rf ~")
	f.Fuzz(func(t *testing.T, pattern, command string) {
		v := Assess(command, Env{Home: "/home/u", Cwd: "/home/u/proj"})
		if !Preapproves(pattern, command, v) {
			return
		}
		if v.Level != Destructive {
			t.Fatalf("%q pre-approved at level %s", command, v.Level)
		}
		if _, ok := plainWords(command); !ok {
			t.Fatalf("%q pre-approved, not plain", command)
		}
	})
}
