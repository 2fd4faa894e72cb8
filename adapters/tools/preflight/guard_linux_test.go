package preflight

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
	"github.com/zuno-run/zuno/domain/gitcheck"
)

// A read runs under a session guard from the pool, as the command itself, with its standard
// output and standard error apart: a warning git prints on standard error does not reach the
// status it parses, and a failed read's refusal quotes standard error's first line. A read
// that escapes its group (a setsid daemon its hook starts) is killed when the read ends.
func TestReadsRunUnderTheSessionGuard(t *testing.T) {
	dir := repo(t)
	write(t, dir, "node_modules/x/index.js", "x")
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	marks := t.TempDir()
	bin := t.TempDir()
	write(t, bin, "git", "#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline > "+marks+"/parent\n"+
		"rm -f "+marks+"/daemon.pid\nsetsid sh -c 'echo $$ > "+marks+"/daemon.pid; exec sleep 300' &\n"+
		"while [ ! -s "+marks+"/daemon.pid ]; do sleep 0.01; done\n"+
		"echo 'warning: not part of the status' >&2\nexec "+real+" \"$@\"\n")
	c := &Checker{Git: filepath.Join(bin, "git")}
	if r := c.Check(context.Background(), dir, "git add ."); code(r) != gitcheck.CodeGeneratedArtifact {
		t.Fatalf("git add . with node_modules and a warning on standard error: %v", r)
	}
	if r := c.Check(context.Background(), dir, "git add src"); r != nil {
		t.Fatalf("git add src with a warning on standard error: %v", r)
	}
	parent, err := os.ReadFile(filepath.Join(marks, "parent"))
	if err != nil || strings.TrimSpace(string(parent)) != guard.SessionName {
		t.Fatalf("the read's parent runs %q (%v), want the session guard", parent, err)
	}
	assertGone(t, pidIn(t, filepath.Join(marks, "daemon.pid")))
	r := c.Check(context.Background(), t.TempDir(), "git add x")
	if code(r) != gitcheck.CodePreflightFailed || !strings.Contains(r.Error(), "warning: not part of the status") {
		t.Fatalf("a failed read's refusal: %v", r)
	}
}
