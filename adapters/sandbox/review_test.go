package sandbox_test

// Security review (helper/review): attacks on the confined backend with the real bubblewrap.
// A test fails when the attack gets out.

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Attack: with network deny, a command connects to a Unix socket of the host file system (the
// read-only bind of / does not stop connect(2)). Any host daemon on a socket — the Docker or
// containerd socket, the user's D-Bus session bus (systemd-run --user), ssh-agent, gpg-agent —
// then acts outside the sandbox on the command's behalf. The seeds say network deny "refuses
// network system calls".
func TestReviewNetworkDenyHostUnixSocket(t *testing.T) {
	ws := hostDir(t)
	outside := hostDir(t)
	sock := filepath.Join(outside, "daemon.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 64)
		n, _ := c.Read(b)
		got <- string(b[:n])
	}()
	sess := confined(t, ws, `{"network": "deny"}`, false)
	res := runIn(t, sess, ws, `perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => "`+sock+`") or die "refused: $!\n"; print $s "escaped"; close $s'`)
	select {
	case m := <-got:
		t.Errorf("BROKEN: a command under network deny reached a host Unix socket and sent %q (output %q)", m, res.Output)
	case <-time.After(2 * time.Second):
	}
}

// Attack: a protected path below a writable directory is protected as a mount point only; the
// command renames its parent and plants a new file at the protected path.
func TestReviewProtectedPathParentRename(t *testing.T) {
	ws := hostDir(t)
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	sess := confined(t, ws, `{"protectedPaths": [".git/hooks"]}`, false)
	res := runIn(t, sess, ws, `echo x > .git/hooks/pre-commit 2>/dev/null; `+
		`mv .git .git.old && mkdir -p .git/hooks && printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit; echo done`)
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("BROKEN: the command planted .git/hooks/pre-commit on the host despite protectedPaths [.git/hooks] (output %q)", res.Output)
	}
}

// Held: a direct write to a protected path fails.
func TestReviewProtectedPathDirect(t *testing.T) {
	ws := hostDir(t)
	if err := os.MkdirAll(filepath.Join(ws, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	sess := confined(t, ws, `{"protectedPaths": ["secrets"]}`, false)
	runIn(t, sess, ws, `echo x > secrets/a; rm -rf secrets; mv secrets s2; ln -sfn /tmp secrets; true`)
	if _, err := os.Stat(filepath.Join(ws, "secrets", "a")); err == nil {
		t.Errorf("BROKEN: wrote secrets/a")
	}
	if fi, err := os.Lstat(filepath.Join(ws, "secrets")); err != nil || !fi.IsDir() {
		t.Errorf("BROKEN: secrets was removed or replaced: %v", err)
	}
}

// Held: a workspace whose name carries commas, newlines and option-like text is one argv
// element for bwrap; nothing outside becomes writable.
func TestReviewWorkspaceNameInjection(t *testing.T) {
	base := hostDir(t)
	outside := hostDir(t)
	ws := filepath.Join(base, "a,b\n--bind / /\n--bind "+outside+" "+outside)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	sess := confined(t, ws, "", false)
	res := runIn(t, sess, ws, `echo in > inside.txt; echo out > `+filepath.Join(outside, "x")+`; echo out > `+filepath.Join(base, "y")+`; true`)
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("the workspace was not writable: %q", res.Output)
	}
	for _, p := range []string{filepath.Join(outside, "x"), filepath.Join(base, "y")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("BROKEN: wrote %s from a workspace named %q", p, ws)
		}
	}
}

// Held: Zuno's private variables do not reach the command; note that everything else does
// (API keys included), so a command can read e.g. OPENAI_API_KEY.
func TestReviewEnvScrub(t *testing.T) {
	ws := hostDir(t)
	sess := confined(t, ws, "", false)
	res := runIn(t, sess, ws, `env; cat /proc/1/environ 2>/dev/null | tr '\0' '\n'`,
		"PATH=/usr/bin:/bin", "ZUNO_DB=/secret/z.db", "zuno_token=abc", "Zuno_X=1", "OPENAI_API_KEY=sk-test")
	out := string(res.Output)
	for _, leak := range []string{"/secret/z.db", "zuno_token", "Zuno_X"} {
		if strings.Contains(out, leak) {
			t.Errorf("BROKEN: %s reached the sandbox: %s", leak, out)
		}
	}
	if strings.Contains(out, "sk-test") {
		t.Logf("NOTE: provider credentials reach sandboxed commands (OPENAI_API_KEY); only ZUNO_* is scrubbed")
	}
}
