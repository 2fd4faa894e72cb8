package risk_test

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

// TestRealProgramsHandRmTheGatesTarget runs issue 25's spellings from a working directory
// at ~/proj under real bash, awk, perl, python3 and git, with rm a recorder first in PATH
// and the file system read-only (bwrap), and checks that the path rm receives is the Target
// the gate read with Env.Cwd: the gate resolves `..`, substitutions and the interpreters'
// commands to what really runs.
func TestRealProgramsHandRmTheGatesTarget(t *testing.T) {
	h := newRmRecorder(t)
	encoded := base64.StdEncoding.EncodeToString([]byte(h.home))
	commands := []string{
		`rm -rf "$(cd ..; pwd)"`,
		`rm -rf "$(cd .. && pwd -P)"`,
		`d=$(cd ..; pwd); rm -rf "$d"`,
		`rm -rf "$(dirname "$PWD")"`,
		`rm -rf "$(realpath ..)"`,
		`rm -rf "$(readlink -f ..)"`,
		`rm -rf "$(echo ` + encoded + ` | base64 -d)"`,
		`cd .. && rm -rf "$PWD"`,
		`rm -rf ~+/..`,
		`rm -rf "$PWD/.."`,
		`env -C .. rm -rf ../home`,
		`cd ..; cd ..; cd home; rm -rf ../home`,
	}
	if _, err := exec.LookPath("awk"); err == nil {
		commands = append(commands, `awk 'BEGIN{system("rm -rf ~")}'`, `awk 'BEGIN { system("rm -rf " ENVIRON["HOME"]) }'`)
	}
	if _, err := exec.LookPath("perl"); err == nil {
		commands = append(commands, `perl -e 'system("rm -rf ~")'`, `perl -e 'system "rm", "-rf", $ENV{HOME}'`)
	}
	if _, err := exec.LookPath("python3"); err == nil {
		commands = append(commands, `python3 -c 'import os; os.system("rm -rf ~")'`,
			`python3 -c 'import subprocess, os; subprocess.run(["rm", "-rf", os.path.expanduser("~")])'`)
	}
	if _, err := exec.LookPath("git"); err == nil {
		commands = append(commands, `git -c alias.x="!rm -rf ~" x`)
	}
	for _, c := range commands {
		t.Run(c, func(t *testing.T) { h.check(t, c) })
	}
}

// TestRealProgramsRunTheReviewSpellings: the issue 25 review's spellings (finding 6) under
// real bash, sed, awk, python3, perl, node and tclsh, rm a recorder: what rm receives is the
// Target the gate read, so the gate follows aliases, "$@", $0, read, mapfile, xargs -a,
// $OLDPWD and the interpreters' standard input the way they really run.
func TestRealProgramsRunTheReviewSpellings(t *testing.T) {
	h := newRmRecorder(t)
	commands := []string{
		"shopt -s expand_aliases\nalias r='rm -rf'\nr ~",
		`set -- rm -rf ~; "$@"`,
		`sh -c 'rm -rf $0' ~`,
		`while read d; do rm -rf "$d"; done <<< ~`,
		`mapfile -t a <<< ~; rm -rf "${a[0]}"`,
		`xargs -a <(echo ~) rm -rf`,
		`cd ..; cd proj; rm -rf "$OLDPWD"`,
		`echo x | sed 'e rm -rf ~'`,
		`awk 'BEGIN{print "rm -rf ~" | "sh"}'`,
	}
	for prog, c := range map[string]string{
		"python3": `python3 - <<< 'import os; os.system("rm -rf ~")'`,
		"perl":    `perl <<< 'system("rm -rf ~")'`,
		"node":    `node - <<< 'require("child_process").execSync("rm -rf ~")'`,
		"tclsh":   `tclsh <<< 'exec rm -rf $env(HOME)'`,
	} {
		if _, err := exec.LookPath(prog); err == nil {
			commands = append(commands, c)
		}
	}
	for _, c := range commands {
		t.Run(c, func(t *testing.T) { h.check(t, c) })
	}
}

// rmRecorder runs a command under real bash in bwrap (the file system read-only but for a
// scratch directory), from ~/proj of a scratch home, with rm a recorder first in PATH.
type rmRecorder struct {
	bwrap, bin, out, home, proj string
}

func newRmRecorder(t *testing.T) *rmRecorder {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed")
	}
	h := &rmRecorder{bwrap: bwrap, bin: t.TempDir(), out: t.TempDir()}
	h.home = filepath.Join(h.out, "home")
	h.proj = filepath.Join(h.home, "proj")
	if err := os.MkdirAll(h.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// The recorder writes the last argument as an absolute path, from its own working
	// directory, so the directory the gate assumed is checked too.
	recorder := "#!/bin/sh\nfor a in \"$@\"; do last=$a; done\ncase $last in /*) ;; *) last=$(pwd)/$last;; esac\nprintf '%s\\n' \"$last\" >> \"$OUT/targets\"\n"
	if err := os.WriteFile(filepath.Join(h.bin, "rm"), []byte(recorder), 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// check runs c and asserts that the gate grades it catastrophic and that rm received the
// path the gate read as its Target.
func (h *rmRecorder) check(t *testing.T, c string) {
	t.Helper()
	log := filepath.Join(h.out, "targets")
	_ = os.Remove(log)
	pathEnv := h.bin + ":" + os.Getenv("PATH")
	cmd := exec.Command(h.bwrap, "--ro-bind", "/", "/", "--bind", h.out, h.out, "--dev", "/dev",
		"--proc", "/proc", "--unshare-all", "--die-with-parent", "--clearenv", "--chdir", h.proj,
		"--setenv", "HOME", h.home, "--setenv", "PATH", pathEnv, "--setenv", "OUT", h.out, "--setenv", "TMPDIR", h.out,
		"/bin/bash", "-c", c)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v\n%s", err, b)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("rm never ran: %v", err)
	}
	v := risk.Assess(c, risk.Env{Home: h.home, Cwd: h.proj})
	if v.Level != risk.Catastrophic {
		t.Fatalf("the gate let it through: %+v", v)
	}
	found := false
	for _, l := range strings.Fields(string(b)) {
		found = found || path.Clean(l) == v.Target
	}
	if !found {
		t.Errorf("rm got %q; the gate read %q", strings.Fields(string(b)), v.Target)
	}
}
