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
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed")
	}
	bin, out := t.TempDir(), t.TempDir()
	homeDir := filepath.Join(out, "home")
	proj := filepath.Join(homeDir, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// The recorder writes the last argument as an absolute path, from its own working
	// directory, so the directory the gate assumed is checked too.
	recorder := "#!/bin/sh\nfor a in \"$@\"; do last=$a; done\ncase $last in /*) ;; *) last=$(pwd)/$last;; esac\nprintf '%s\\n' \"$last\" >> \"$OUT/targets\"\n"
	if err := os.WriteFile(filepath.Join(bin, "rm"), []byte(recorder), 0o755); err != nil {
		t.Fatal(err)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(homeDir))
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
	env := risk.Env{Home: homeDir, Cwd: proj}
	for _, c := range commands {
		t.Run(c, func(t *testing.T) {
			log := filepath.Join(out, "targets")
			_ = os.Remove(log)
			pathEnv := bin + ":" + os.Getenv("PATH")
			cmd := exec.Command(bwrap, "--ro-bind", "/", "/", "--bind", out, out, "--dev", "/dev",
				"--proc", "/proc", "--unshare-all", "--die-with-parent", "--clearenv", "--chdir", proj,
				"--setenv", "HOME", homeDir, "--setenv", "PATH", pathEnv, "--setenv", "OUT", out,
				"/bin/bash", "-c", c)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("bash: %v\n%s", err, b)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("rm never ran: %v", err)
			}
			v := risk.Assess(c, env)
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
		})
	}
}
