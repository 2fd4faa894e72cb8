//go:build unix

package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestCancelKillsRG(t *testing.T) {
	needRG(t)
	root := t.TempDir()
	line := []byte("alpha beta gamma delta zuno ripgrep search naive words and more words here\n")
	content := bytes.Repeat(line, 4000) // ~300 KB
	for d := range 10 {
		dir := filepath.Join(root, fmt.Sprintf("d%d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 25 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", f)), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	var pid atomic.Int64
	s.started = func(p int) { pid.Store(int64(p)) }
	if _, err := s.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	start := time.Now()
	_, err = s.Grep(ctx, GrepRequest{Pattern: `[\w\s]{300}\d`})
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		if err == nil {
			t.Skipf("SKIP: rg finished the slow search in %v, before the cancel; nothing to cancel", elapsed)
		}
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("cancelled grep returned after %v", elapsed)
	}
	p := int(pid.Load())
	if p == 0 {
		t.Fatal("rg was never started")
	}
	if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("rg pid %d still exists after cancel (kill 0: %v)", p, err)
	}
	t.Logf("cancelled after %v", elapsed)
}

// TestUnreadable needs a user that permission bits stop. As root it runs rg as nobody
// through setpriv (skipping when that is impossible).
func TestUnreadable(t *testing.T) {
	s, root := tree(t, map[string]string{"open/a.txt": "needle\n", "closed/b.txt": "needle\n", "closedfile.txt": "needle\n"})
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("SKIP: running as root without setpriv; permission bits do not stop root")
		}
		rg, _ := exec.LookPath("rg")
		wrapper := filepath.Join(t.TempDir(), "rg-as-nobody")
		script := fmt.Sprintf("#!/bin/sh\nexec %s --reuid=65534 --regid=65534 --clear-groups %s \"$@\"\n", setpriv, rg)
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		// nobody must reach the tree; the probe would run in a private temporary directory,
		// so take its result as given.
		for d := root; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		s.feat = &Features{Path: wrapper, Version: "ripgrep (as nobody)"}
		if out, err := exec.Command(wrapper, "--files", root).CombinedOutput(); err != nil {
			t.Skipf("SKIP: cannot run rg as nobody: %v %s", err, out)
		}
	}
	closed := filepath.Join(root, "closed")
	for _, p := range []string{closed, filepath.Join(root, "closedfile.txt")} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o755) })
	}
	if os.Geteuid() != 0 {
		// The path checks run in this process: they are only meaningful when it is not root.
		_, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle", Path: "closed"})
		wantCode(t, err, InvalidArguments, "path", "does not exist or cannot be read")
		_, err = s.Grep(context.Background(), GrepRequest{Pattern: "needle", Path: "closedfile.txt"})
		wantCode(t, err, InvalidArguments, "path", "does not exist or cannot be read")
	}
	r, err := s.Grep(context.Background(), GrepRequest{Pattern: "needle"})
	if err != nil || !slices.Equal(r.Paths, []string{"open/a.txt"}) {
		t.Fatalf("grep past unreadable entries: %v %q", err, r.Paths)
	}
	r, err = s.Grep(context.Background(), GrepRequest{Pattern: "nothing"})
	if err != nil || r.Output != "No files found\n" {
		t.Fatalf("no match beside unreadable entries: %v %q", err, r.Output)
	}
	g, err := s.Glob(context.Background(), GlobRequest{Pattern: "*.txt"})
	if err != nil || !slices.Equal(g.Paths, []string{"closedfile.txt", "open/a.txt"}) {
		t.Fatalf("glob past an unreadable dir: %v %q", err, g.Paths)
	}
}
