package preflight

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/gitcheck"
)

// repo makes a real repository with one commit, and returns its directory.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	write(t, dir, "src/main.go", "package main\n")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func code(r *gitcheck.Refusal) string {
	if r == nil {
		return ""
	}
	return r.Code()
}

func TestGeneratedArtifactsRefused(t *testing.T) {
	dir := repo(t)
	write(t, dir, "node_modules/left-pad/index.js", "x")
	write(t, dir, "src/lib.go", "package main\n")
	write(t, dir, "sub/keep.txt", "k")
	c := &Checker{}
	for _, tc := range []struct{ command, code string }{
		{"git add .", gitcheck.CodeGeneratedArtifact},
		{"git add -A && git commit -m m", gitcheck.CodeGeneratedArtifact},
		{"cd . && bash -c 'git add node_modules'", gitcheck.CodeGeneratedArtifact},
		{"git add src", ""},
		{"git -C sub add .", ""},
		{"git add -n .", ""},
		{"echo 'git add .'", ""},
		{"git status", ""},
		{"git commit -m nothing-staged", ""},
	} {
		if got := code(c.Check(context.Background(), dir, tc.command)); got != tc.code {
			t.Errorf("%q: %q, want %q", tc.command, got, tc.code)
		}
	}
	r := c.Check(context.Background(), dir, "git add .")
	if !strings.Contains(r.Error(), "node_modules/left-pad/index.js") || !strings.Contains(r.Error(), "it was not run") {
		t.Errorf("the refusal names the artifact and that nothing ran: %s", r)
	}
	// A staged artifact refuses the commit that would deliver it.
	gitIn(t, dir, "add", "-f", "node_modules/left-pad/index.js")
	if got := code(c.Check(context.Background(), dir, "git commit -m deps")); got != gitcheck.CodeGeneratedArtifact {
		t.Errorf("commit of a staged artifact: %q", got)
	}
	// Outside a repository the read fails: the repository state is unknown, so refused.
	if got := code(c.Check(context.Background(), t.TempDir(), "git add x")); got != gitcheck.CodePreflightFailed {
		t.Errorf("outside a repository: %q", got)
	}
}

// hangingRepo is a real repository whose `git status` does not answer: its fsmonitor hook
// (a real hook git runs during status) records its pid and its child's, then waits forever.
func hangingRepo(t *testing.T) (dir, pids string) {
	t.Helper()
	dir = repo(t)
	pids = t.TempDir()
	hook := filepath.Join(t.TempDir(), "fsmonitor")
	write(t, filepath.Dir(hook), "fsmonitor", "#!/bin/sh\necho $$ > "+pids+"/hook.pid\nsleep 300 &\necho $! > "+pids+"/child.pid\nwait\n")
	gitIn(t, dir, "config", "core.fsmonitor", hook)
	write(t, dir, "src/new.go", "package main\n")
	return dir, pids
}

func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the hook never ran: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after the refusal", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A read that does not answer: refused within the budget with the seeds' exact message, the
// hung git and its children stopped as a process group first.
func TestHungReadRefusedWithinBudget(t *testing.T) {
	dir, pids := hangingRepo(t)
	c := &Checker{Budget: 4 * time.Second}
	start := time.Now()
	r := c.Check(context.Background(), dir, "git add src")
	elapsed := time.Since(start)
	const want = "`git status --porcelain` did not answer within the 4s this command's pre-flight repository reads share, so the repository state it depends on is unknown; it was not run"
	if code(r) != gitcheck.CodePreflightUnanswered || r.Message != want {
		t.Fatalf("got %v", r)
	}
	if elapsed > 4*time.Second {
		t.Errorf("the pre-flight took %v, more than its 4s budget", elapsed)
	}
	// Stopped before the refusal was returned: no grace period to wait out.
	for _, f := range []string{"hook.pid", "child.pid"} {
		assertGone(t, pidIn(t, filepath.Join(pids, f)))
	}
}

// Cancellation during a read also refuses, after stopping the read's group.
func TestCancelledReadRefuses(t *testing.T) {
	dir, pids := hangingRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(pids, "child.pid")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r := (&Checker{}).Check(ctx, dir, "git commit -am m")
	if code(r) != gitcheck.CodePreflightCancelled || !strings.Contains(r.Error(), "it was not run") {
		t.Fatalf("got %v", r)
	}
	for _, f := range []string{"hook.pid", "child.pid"} {
		assertGone(t, pidIn(t, filepath.Join(pids, f)))
	}
}

// The reads share one budget, not one each: a budget that one slow read fits, two do not.
// The budget is sized from this run's own cost of a pre-flight (baseline in the same run).
func TestReadsShareOneBudget(t *testing.T) {
	dir := repo(t)
	start := time.Now()
	if r := (&Checker{}).Check(context.Background(), dir, "git add src"); r != nil {
		t.Fatal(r)
	}
	baseline := time.Since(start) // two reads
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(t.TempDir(), "git")
	write(t, filepath.Dir(slow), "git", "#!/bin/sh\nsleep 1\nexec "+real+" \"$@\"\n")
	// The reads race budget-Reserve (0.9 of it): one read costs 1 s + baseline/2, two 2 s + baseline.
	budget := time.Duration((1.5*float64(time.Second) + 0.75*float64(baseline)) / 0.9)
	r := (&Checker{Git: slow, Budget: budget}).Check(context.Background(), dir, "git add src")
	if code(r) != gitcheck.CodePreflightUnanswered || !strings.HasPrefix(r.Message, "`git status --porcelain` did not answer within the "+budget.String()) {
		t.Fatalf("budget %v (baseline %v): %v", budget, baseline, r)
	}
	if r := (&Checker{Git: slow, Budget: 2 * budget}).Check(context.Background(), dir, "git add src"); r != nil {
		t.Fatalf("within twice the budget: %v", r)
	}
}
