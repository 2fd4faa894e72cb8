package sandbox_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain/sandbox"
)

func TestSystemProbe(t *testing.T) {
	st := requireBwrap(t)
	if st.Launcher == "" || st.Version == "" || st.Reason.Code != sandbox.ReasonConfinedReady {
		t.Fatalf("status %+v", st)
	}
}

// TestWorkspaceWriteBoundary: the attacks on the filesystem boundary, one row each.
func TestWorkspaceWriteBoundary(t *testing.T) {
	ws := t.TempDir()
	outside := hostDir(t)
	root := hostDir(t)
	for _, d := range []string{".git", "secrets", "src"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link-out")); err != nil {
		t.Fatal(err)
	}
	sess := confined(t, ws, fmt.Sprintf(`{"writableRoots": [%q], "protectedPaths": [".git", "secrets", %q]}`, root, filepath.Join(ws, "src")), false)
	for _, tc := range []struct {
		name, cmd string
		ok        bool
		host      string // the file that must (ok) or must not exist on the host afterwards
	}{
		{"a write in the workspace succeeds", "echo x > inside", true, filepath.Join(ws, "inside")},
		{"a write to a writable root succeeds", fmt.Sprintf("echo x > %s/cache", root), true, filepath.Join(root, "cache")},
		{"a write outside the workspace fails", fmt.Sprintf("echo x > %s/out", outside), false, filepath.Join(outside, "out")},
		{"a write through a symlink leading out fails", "echo x > link-out/via-link", false, filepath.Join(outside, "via-link")},
		{"a write by .. escape fails", fmt.Sprintf("echo x > ../../../..%s/dots", outside), false, filepath.Join(outside, "dots")},
		{"a write to a protected path (relative) fails", "echo x > .git/config", false, filepath.Join(ws, ".git", "config")},
		{"a protected path cannot be replaced by rename", "mv secrets gone", false, filepath.Join(ws, "gone")},
		{"a write under a protected path spelled absolute fails", "echo x > src/main.go", false, filepath.Join(ws, "src", "main.go")},
		{"a protected path cannot be unmounted", "umount secrets; umount -l secrets; echo x > secrets/k", false, filepath.Join(ws, "secrets", "k")},
		{"remounting the root read-write fails", fmt.Sprintf("mount -o remount,rw /; echo x > %s/rw", outside), false, filepath.Join(outside, "rw")},
		{"a new user namespace cannot be created to regain mounts", fmt.Sprintf("unshare -Urm sh -c 'echo x > %s/ns'", outside), false, filepath.Join(outside, "ns")},
		{"/tmp is private: a write there does not reach the host", "echo x > /tmp/zuno-sandbox-private-probe", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runIn(t, sess, ws, tc.cmd)
			if (res.ExitCode == 0) != tc.ok {
				t.Fatalf("exit %d, want ok=%v; output: %s", res.ExitCode, tc.ok, res.Output)
			}
			if tc.host != "" {
				if _, err := os.Stat(tc.host); (err == nil) != tc.ok {
					t.Fatalf("host file %s exists=%v, want %v", tc.host, err == nil, tc.ok)
				}
			}
		})
	}
	if _, err := os.Stat("/tmp/zuno-sandbox-private-probe"); err == nil {
		t.Fatal("a write to the sandbox's /tmp reached the host")
	}
}

func TestReadOnlyWritesNowhere(t *testing.T) {
	ws := t.TempDir()
	outside := hostDir(t)
	sess := confined(t, ws, "", true)
	if sess.Resolution.EffectiveAuthority != sandbox.ModeReadOnly {
		t.Fatalf("%+v", sess.Resolution)
	}
	for _, target := range []string{filepath.Join(ws, "f"), filepath.Join(outside, "f"), "/root/zuno-ro-probe", "/var/tmp/zuno-ro-probe"} {
		res := runIn(t, sess, ws, "echo x > "+target)
		if res.ExitCode == 0 || !strings.Contains(string(res.Output), "Read-only file system") {
			t.Errorf("write to %s: exit %d, %s", target, res.ExitCode, res.Output)
		}
		if _, err := os.Stat(target); err == nil {
			os.Remove(target)
			t.Errorf("%s was written", target)
		}
	}
	if res := runIn(t, sess, ws, "cat /etc/hostname >/dev/null && ls >/dev/null"); res.ExitCode != 0 {
		t.Errorf("a read-only sandbox could not read: %s", res.Output)
	}
}

func TestNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", port)
	ws := t.TempDir()
	for _, tc := range []struct {
		cfg string
		ok  bool
	}{
		{"", false}, // the default network is deny
		{`{"network": "deny"}`, false},
		{`{"network": "allow"}`, true},
	} {
		res := runIn(t, confined(t, ws, tc.cfg, false), ws, connect)
		if got := res.ExitCode == 0 && strings.Contains(string(res.Output), "hello"); got != tc.ok {
			t.Errorf("network %q: connected=%v, want %v (exit %d: %s)", tc.cfg, got, tc.ok, res.ExitCode, res.Output)
		}
	}
}

func TestEnvironmentScrubbedInside(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	res := runIn(t, sess, ws, "env", "PATH=/usr/bin:/bin", "ZUNO_Pid=1", "zuno_server_password=s3cret",
		"ZUNO_CONFIG_CONTENT={}", "ZUNO=1", "AGENT=zuno")
	out := string(res.Output)
	for _, gone := range []string{"ZUNO_Pid", "zuno_server_password", "ZUNO_CONFIG_CONTENT", "s3cret"} {
		if strings.Contains(out, gone) {
			t.Errorf("%s visible inside the sandbox:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"\nZUNO=1\n", "AGENT=zuno"} {
		if !strings.Contains("\n"+out, kept) {
			t.Errorf("%q missing inside the sandbox:\n%s", kept, out)
		}
	}
	// The host's process environment cannot be read through /proc either: the pid namespace
	// hides Zuno's process.
	res = runIn(t, sess, ws, fmt.Sprintf("cat /proc/%d/environ", os.Getpid()))
	if res.ExitCode == 0 {
		t.Errorf("Zuno's environment readable inside the sandbox: %s", res.Output)
	}
}

func TestExitStatusPassesThrough(t *testing.T) {
	ws := t.TempDir()
	res := runIn(t, confined(t, ws, "", false), ws, "echo out; exit 3")
	if !res.HasExitCode || res.ExitCode != 3 || string(res.Output) != "out\n" || res.Argv[0] == "bash" {
		t.Fatalf("%+v", res)
	}
}

// marker is a unique sleep argument: the processes of one test are found by it on the host.
func marker() string { return fmt.Sprintf("%d", 100000+rand.IntN(800000)) }

func TestKilledCommandLeavesNothing(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	m := marker()
	r := &shell.Runner{Root: ws, Launcher: sess.Launcher, KillGrace: 200 * time.Millisecond}
	// A child, a grandchild that starts its own session, and one that ignores SIGTERM.
	cmd := fmt.Sprintf("sleep %s & setsid sleep %s & (trap '' TERM; sleep %s) & wait", m, m, m)
	res, err := r.Run(context.Background(), shell.Request{Command: cmd, Timeout: 500 * time.Millisecond})
	if err != nil || !res.TimedOut || !res.Killed {
		t.Fatalf("%+v %v", res, err)
	}
	assertNoneLeft(t, m)

	ctx, cancel := context.WithCancel(context.Background())
	m2 := marker()
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	res, err = r.Run(ctx, shell.Request{Command: fmt.Sprintf("setsid sleep %s & sleep %s", m2, m2)})
	if err != nil || !res.Cancelled {
		t.Fatalf("%+v %v", res, err)
	}
	assertNoneLeft(t, m2)

	// Killed at any moment of bwrap's setup, nothing outlives the call.
	for _, d := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 80 * time.Millisecond} {
		m := marker()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		_, err := r.Run(ctx, shell.Request{Command: fmt.Sprintf("setsid sleep %s & (trap '' TERM; sleep %s)", m, m)})
		cancel()
		if err != nil && shell.CodeOf(err) != shell.CodeInvalidArguments {
			t.Fatal(err)
		}
		assertNoneLeft(t, m)
	}

	// A command that exits and leaves a background child behind does not leave it running.
	m3 := marker()
	if res := runIn(t, sess, ws, fmt.Sprintf("setsid sleep %s >/dev/null 2>&1 & echo started", m3)); res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	assertNoneLeft(t, m3)
}

func TestBackgroundTaskConfinedAndCancelled(t *testing.T) {
	ws := t.TempDir()
	outside := hostDir(t)
	sess := confined(t, ws, "", false)
	mgr, err := bg.NewManager(t.TempDir(), bg.WithLauncher(sess.Launcher))
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	m := marker()
	info, err := mgr.Start(context.Background(), bg.StartRequest{Dir: ws,
		Command: fmt.Sprintf("echo x > %s/bg; echo rc=$?; setsid sleep %s & sleep %s", outside, m, m)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(processesWithArgs(m)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := mgr.Cancel(context.Background(), info.ID); err != nil {
		t.Fatal(err)
	}
	assertNoneLeft(t, m)
	if _, err := os.Stat(filepath.Join(outside, "bg")); err == nil {
		t.Fatal("a background command wrote outside the workspace")
	}
	w, err := mgr.Wait(context.Background(), info.ID, 5*time.Second, nil, 0)
	if err != nil || !strings.Contains(w.Text, "Read-only file system") {
		t.Fatalf("output %q, %v", w.Text, err)
	}
}

func TestCheckExecution(t *testing.T) {
	ws := t.TempDir()
	ex := adsandbox.CheckExecution(context.Background(), confined(t, ws, "", false), ws)
	if !ex.ExecutionReady || ex.ResolutionKind != sandbox.KindConfined || !strings.HasSuffix(ex.Argv[0], "bwrap") {
		t.Fatalf("%+v", ex)
	}
	// Native: executionReady even though the OS confinement is not ready.
	sess, err := adsandbox.Assemble(context.Background(), mergeGlobal(t, `{"backend": "native"}`),
		adsandbox.Request{Workspace: ws, ReadOnlyAgent: true, Platform: "linux"}, adsandbox.Probe{Launcher: "/nonexistent/bwrap"})
	if err != nil || sess.Probe != nil {
		t.Fatalf("native assembly probed or failed: %+v %v", sess, err)
	}
	ex = adsandbox.CheckExecution(context.Background(), sess, ws)
	if !ex.ExecutionReady || ex.ResolutionKind != sandbox.KindTrustedNative || ex.Argv[0] == "" || strings.HasSuffix(ex.Argv[0], "bwrap") {
		t.Fatalf("%+v", ex)
	}
	if st := (adsandbox.Probe{Launcher: "/nonexistent/bwrap"}).Check(context.Background()); st.Ready {
		t.Fatalf("ready without a launcher: %+v", st)
	}
}
