package toolset

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// A shell call that would commit generated artifacts is refused before anything runs; one
// that delivers source runs.
func TestShellGitPreflight(t *testing.T) {
	s, root := newSet(t)
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	put(t, root, "node_modules/dep/index.js", "x")
	put(t, root, "main.go", "package main\n")

	r := call(t, s, tools.NameShell, `{"command":"git add . && touch ran"}`)
	want(t, r, tools.OutcomeError, "generated_artifact")
	if !strings.Contains(r.Output, "node_modules/dep/index.js") || !strings.Contains(r.Output, "it was not run") {
		t.Errorf("output:\n%s", r.Output)
	}
	if staged := git("diff", "--cached", "--name-only"); staged != "" {
		t.Errorf("something was staged: %q", staged)
	}
	r = call(t, s, tools.NameShell, `{"command":"git add main.go","background":false}`)
	want(t, r, tools.OutcomeCompleted, "")
	if staged := git("diff", "--cached", "--name-only"); staged != "main.go\n" {
		t.Errorf("staged %q", staged)
	}
}
