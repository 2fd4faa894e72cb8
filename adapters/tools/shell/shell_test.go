package shell

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func run(t *testing.T, r *Runner, req Request) Result {
	t.Helper()
	if r == nil {
		r = &Runner{}
	}
	res, err := r.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run(%q): %v", req.Command, err)
	}
	return res
}

func TestExitCodes(t *testing.T) { bothGuards(t, testExitCodes) }

func testExitCodes(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		code int
		auth bool
		out  string
	}{
		{"echo hi", 0, true, "hi\n"},
		{"exit 3", 3, true, ""},
		{"echo out; echo err >&2; exit 7", 7, true, "out\nerr\n"},
		{"definitely-not-a-command-zuno", 127, true, ""}, // bash's own failing status, not the guard's
	} {
		res := run(t, nil, Request{Command: tc.cmd})
		if !res.HasExitCode || res.ExitCode != tc.code || res.Authoritative != tc.auth {
			t.Errorf("%q: exit=%v/%d auth=%v, want %d auth=%v", tc.cmd, res.HasExitCode, res.ExitCode, res.Authoritative, tc.code, tc.auth)
		}
		if tc.out != "" && string(res.Output) != tc.out {
			t.Errorf("%q: output %q, want %q", tc.cmd, res.Output, tc.out)
		}
		if res.Killed || res.TimedOut || res.Cancelled || res.Withheld != nil {
			t.Errorf("%q: unexpected flags %+v", tc.cmd, res)
		}
	}
}

func TestSignalled(t *testing.T) { bothGuards(t, testSignalled) }

func testSignalled(t *testing.T) {
	res := run(t, nil, Request{Command: "kill -KILL $$"})
	if res.HasExitCode || res.Signal != "SIGKILL" || res.Authoritative {
		t.Fatalf("got %+v", res)
	}
}

func TestExitPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy ExitPolicy
		cmd    string
		code   int
	}{
		{"", "false | true", 1},
		{PolicyPipefail, "false | true", 1},
		{PolicyPipefail, "exit 4 | true", 4},
		{PolicyLast, "false | true", 0},
		{PolicyPipefail, "false; true", 0},
		{PolicyAll, "false; true", 1},
	} {
		res := run(t, nil, Request{Command: tc.cmd, ExitPolicy: tc.policy})
		if !res.HasExitCode || res.ExitCode != tc.code {
			t.Errorf("policy %q %q: exit %d, want %d", tc.policy, tc.cmd, res.ExitCode, tc.code)
		}
	}
	_, err := (&Runner{}).Run(context.Background(), Request{Command: "true", ExitPolicy: "bogus"})
	if CodeOf(err) != CodeInvalidArguments {
		t.Fatalf("bogus policy: %v", err)
	}
}

func TestInvalidArguments(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Root: root}
	for name, req := range map[string]Request{
		"empty":       {Command: "  \n"},
		"outside abs": {Command: "true", Dir: outside},
		"outside rel": {Command: "true", Dir: "../"},
		"symlink out": {Command: "true", Dir: "escape"},
		"missing":     {Command: "true", Dir: "nope"},
		"bad env":     {Command: "true", Env: []string{"NOEQUALS"}},
		"neg timeout": {Command: "true", Timeout: -time.Second},
	} {
		_, err := r.Run(context.Background(), req)
		if CodeOf(err) != CodeInvalidArguments {
			t.Errorf("%s: err=%v, want invalid_arguments", name, err)
		}
	}
	res := run(t, r, Request{Command: "pwd", Dir: "sub"})
	want, _ := filepath.EvalSymlinks(filepath.Join(root, "sub"))
	if strings.TrimSpace(string(res.Output)) != want {
		t.Fatalf("pwd %q, want %q", res.Output, want)
	}
	res = run(t, r, Request{Command: "pwd"})
	want, _ = filepath.EvalSymlinks(root)
	if strings.TrimSpace(string(res.Output)) != want {
		t.Fatalf("default dir %q, want root %q", res.Output, want)
	}
}

func TestUnavailable(t *testing.T) {
	r := &Runner{Bash: filepath.Join(t.TempDir(), "no-bash")}
	_, err := r.Run(context.Background(), Request{Command: "true"})
	if CodeOf(err) != CodeUnavailable {
		t.Fatalf("err=%v, want unavailable", err)
	}
}

func TestEnvScrubbing(t *testing.T) { bothGuards(t, testEnvScrubbing) }

func testEnvScrubbing(t *testing.T) {
	r := &Runner{BaseEnv: func() []string {
		return []string{
			"PATH=" + os.Getenv("PATH"), "HOME=/home/x", "LANG=C.UTF-8",
			"ZUNO_CONFIG_CONTENT=secret-provider-key", "zuno_server_password=pw",
			"Zuno_Pid=1", "ZUNO=1", "AGENT=zuno", "GH_TOKEN=keep-me", "OPENAI_API_KEY=keep-too",
		}
	}}
	res := run(t, r, Request{Command: "env | sort", Env: []string{"ZUNO_PUT_BACK=hook", "EXTRA=1"}})
	out := string(res.Output)
	for _, gone := range []string{"secret-provider-key", "zuno_server_password", "Zuno_Pid", "ZUNO_CONFIG_CONTENT"} {
		if strings.Contains(out, gone) {
			t.Errorf("%s leaked:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"HOME=/home/x", "LANG=C.UTF-8", "ZUNO=1\n", "AGENT=zuno", "GH_TOKEN=keep-me", "OPENAI_API_KEY=keep-too", "ZUNO_PUT_BACK=hook", "EXTRA=1"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%s missing:\n%s", kept, out)
		}
	}
}

func TestOutputOrderInterleaved(t *testing.T) {
	res := run(t, nil, Request{Command: `for i in 1 2 3 4 5; do echo "out$i"; echo "err$i" >&2; done`})
	want := "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\n"
	if string(res.Output) != want {
		t.Fatalf("got %q", res.Output)
	}
}

func TestOutputCaps(t *testing.T) {
	// Bytes: 60000 bytes on 1 line, all of them in the spool and none in memory.
	spools := t.TempDir()
	res := run(t, &Runner{SpoolDir: spools}, Request{Command: "head -c 60000 /dev/zero | tr '\\0' a"})
	if res.TotalBytes != 60000 || res.Output != nil || filepath.Dir(res.Spool) != spools {
		t.Fatalf("bytes %d, %d in memory, spool %q", res.TotalBytes, len(res.Output), res.Spool)
	}
	if b, err := os.ReadFile(res.Spool); err != nil || string(b) != strings.Repeat("a", 60000) {
		t.Fatalf("spool: %d bytes, %v", len(b), err)
	}
	res.RemoveSpool()
	if res.Withheld == nil || res.Withheld.Limit != "max_bytes" || res.Withheld.Bytes != 60000 || res.InlineText() != "" {
		t.Fatalf("withheld %+v", res.Withheld)
	}
	if !res.Authoritative || res.ExitCode != 0 {
		t.Fatalf("withholding must not fail the call: %+v", res)
	}
	// Lines: 2001 short lines, well under the byte cap.
	res = run(t, nil, Request{Command: "seq 1 2001"})
	if res.Withheld == nil || res.Withheld.Limit != "max_lines" || res.TotalLines != 2001 {
		t.Fatalf("lines: %+v total=%d", res.Withheld, res.TotalLines)
	}
	if !strings.HasSuffix(string(res.Output), "\n2000\n2001\n") || res.Spool != "" {
		t.Fatal("output truncated, or spooled while under the byte cap")
	}
	// Exactly at the caps: inline.
	res = run(t, nil, Request{Command: "seq 1 2000"})
	if res.Withheld != nil || res.InlineText() == "" {
		t.Fatalf("2000 lines withheld: %+v", res.Withheld)
	}
	// Large output (several MiB) is captured in full.
	res = run(t, nil, Request{Command: "head -c 5000000 /dev/urandom | base64 -w 100"})
	if res.Withheld == nil || res.TotalLines < 60000 || res.TotalBytes < 6_000_000 {
		t.Fatalf("large: bytes=%d lines=%d", res.TotalBytes, res.TotalLines)
	}
	if fi, err := os.Stat(res.Spool); err != nil || fi.Size() != res.TotalBytes {
		t.Fatalf("large: spool %v, want %d bytes", err, res.TotalBytes)
	}
	res.RemoveSpool()
	// Empty.
	res = run(t, nil, Request{Command: "true"})
	if res.InlineText() != "(no output)" {
		t.Fatalf("empty inline %q", res.InlineText())
	}
	// Configured caps.
	res = run(t, &Runner{MaxBytes: 10, MaxLines: 100}, Request{Command: "echo 12345678901"})
	if res.Withheld == nil || res.Withheld.MaxBytes != 10 {
		t.Fatalf("configured caps %+v", res.Withheld)
	}
	res.RemoveSpool()
}

// A spool that cannot be written loses the bytes, not the call: the command runs to its end
// (its pipe keeps draining), and the counts and the error are reported.
func TestOutputSpoolFails(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	res := run(t, &Runner{SpoolDir: missing, MaxBytes: 10}, Request{Command: "seq 1 100000; echo end >&2"})
	if res.SpoolErr == nil || res.Spool != "" || res.Withheld == nil {
		t.Fatalf("spool %q err %v withheld %+v", res.Spool, res.SpoolErr, res.Withheld)
	}
	if res.TotalLines != 100001 || res.ExitCode != 0 || !res.Authoritative {
		t.Fatalf("lines %d exit %d authoritative %v", res.TotalLines, res.ExitCode, res.Authoritative)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	if state, _, ok := procStat(pid); ok {
		return state != 'Z' && state != 'X'
	}
	if _, err := os.Stat("/proc"); err == nil {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTimeoutKillsPipelineAndGrandchildren(t *testing.T) {
	bothGuards(t, testTimeoutKillsPipelineAndGrandchildren)
}

func testTimeoutKillsPipelineAndGrandchildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "gc.pid")
	// A grandchild (subshell running sleep) in a pipeline, plus a background
	// job; everything must be gone once the call settles.
	cmd := `(sleep 300 & echo $! > bg.pid; exec sleep 301) | (sh -c 'echo $$ > gc.pid; exec sleep 302')`
	start := time.Now()
	res := run(t, nil, Request{Command: cmd, Dir: dir, Timeout: 2 * time.Second, KillGrace: 200 * time.Millisecond})
	if el := time.Since(start); el > 8*time.Second {
		t.Fatalf("took %v", el)
	}
	if !res.TimedOut || !res.Killed || res.Cancelled || res.Authoritative {
		t.Fatalf("flags: %+v", res)
	}
	assertGone(t, readPID(t, pidFile))
	assertGone(t, readPID(t, filepath.Join(dir, "bg.pid")))
}

func TestTermIgnoredEscalatesToKill(t *testing.T) { bothGuards(t, testTermIgnoredEscalatesToKill) }

func testTermIgnoredEscalatesToKill(t *testing.T) {
	dir := t.TempDir()
	res := run(t, nil, Request{
		Command:   `trap '' TERM; sh -c 'trap "" TERM; echo $$ > gc.pid; while :; do sleep 0.05; done'`,
		Dir:       dir,
		Timeout:   1500 * time.Millisecond,
		KillGrace: 200 * time.Millisecond,
	})
	if !res.TimedOut || !res.Killed || res.Signal != "SIGKILL" || res.HasExitCode {
		t.Fatalf("flags %+v", res)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "gc.pid")))
}

func TestBackgroundOrphanReapedAfterExit(t *testing.T) {
	bothGuards(t, testBackgroundOrphanReapedAfterExit)
}

func testBackgroundOrphanReapedAfterExit(t *testing.T) {
	dir := t.TempDir()
	res := run(t, nil, Request{Command: `sleep 300 & echo $! > bg.pid; echo done`, Dir: dir, KillGrace: 200 * time.Millisecond})
	if !res.Authoritative || res.ExitCode != 0 || res.Killed || string(res.Output) != "done\n" {
		t.Fatalf("got %+v %q", res, res.Output)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "bg.pid")))
}

func TestCancelViaContext(t *testing.T) { bothGuards(t, testCancelViaContext) }

func testCancelViaContext(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPID(t, filepath.Join(dir, "gc.pid"))
		cancel()
	}()
	res, err := (&Runner{}).Run(ctx, Request{
		Command:   `echo before; sh -c 'echo $$ > gc.pid; exec sleep 300'`,
		Dir:       dir,
		KillGrace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || !res.Killed || res.TimedOut || res.Authoritative {
		t.Fatalf("flags %+v", res)
	}
	if string(res.Output) != "before\n" {
		t.Fatalf("output before cancel lost: %q", res.Output)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "gc.pid")))
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Runner{}).Run(ctx, Request{Command: "true"}); err == nil {
		t.Fatal("want error for done context")
	}
}

func TestDuration(t *testing.T) {
	res := run(t, nil, Request{Command: "sleep 0.2"})
	if res.Duration < 200*time.Millisecond || res.Duration > 5*time.Second {
		t.Fatalf("duration %v", res.Duration)
	}
}

func TestWrittenPaths(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "same.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "edit.txt"), []byte("foo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "gone.txt"), []byte("foo"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Root: root}
	res := run(t, r, Request{
		Command:    `sleep 0.05; echo new > new.txt; sed -i 's/foo/barbaz/' edit.txt; rm gone.txt; cat same.txt`,
		WatchPaths: []string{"new.txt", "edit.txt", "gone.txt", "same.txt", "/etc/passwd", "edit.txt"},
	})
	rr, _ := filepath.EvalSymlinks(root)
	want := []string{filepath.Join(rr, "edit.txt"), filepath.Join(rr, "new.txt")}
	if strings.Join(res.WrittenPaths, ",") != strings.Join(want, ",") {
		t.Fatalf("writtenPaths %v, want %v", res.WrittenPaths, want)
	}
}

func TestProcessAliveSanity(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Fatal("self not alive")
	}
}

func TestScrubEnvAndCountLines(t *testing.T) {
	got := ScrubEnv([]string{"ZUNO_X=1", "zUnO_y=2", "ZUNO=1", "ZUNOX=1", "A=b"})
	if strings.Join(got, " ") != "ZUNO=1 ZUNOX=1 A=b" {
		t.Fatalf("scrub %v", got)
	}
	for in, n := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "\n\n": 2} {
		if CountLines([]byte(in)) != n {
			t.Errorf("CountLines(%q)=%d want %d", in, CountLines([]byte(in)), n)
		}
	}
}

// A process that left the command's group (setsid) still holds the output pipe: the guard,
// as a child subreaper, finds it among its descendants and stops it when the command ends,
// so the call neither hangs nor abandons the capture.
func TestSetsidEscapeeIsStoppedWithTheCommand(t *testing.T) {
	bothGuards(t, testSetsidEscapeeIsStoppedWithTheCommand)
}

func testSetsidEscapeeIsStoppedWithTheCommand(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	res := run(t, nil, Request{
		Command:   `setsid sh -c 'echo $$ > esc.pid; exec sleep 3' & while [ ! -s esc.pid ]; do sleep 0.01; done; echo ok`,
		Dir:       dir,
		KillGrace: 100 * time.Millisecond,
	})
	assertGone(t, readPID(t, filepath.Join(dir, "esc.pid")))
	if el := time.Since(start); el > 2500*time.Millisecond {
		t.Fatalf("took %v", el)
	}
	if res.OutputDetached || string(res.Output) != "ok\n" || res.ExitCode != 0 || !res.Authoritative {
		t.Fatalf("got %+v %q", res, res.Output)
	}
}

// fileLauncher hands the command one extra file holding msg and refuses plain Wrap, as the
// sandbox's network-deny launcher does.
type fileLauncher struct {
	msg    string
	handed []*os.File
}

func (l *fileLauncher) Wrap([]string, string) ([]string, error) {
	return nil, os.ErrInvalid
}

func (l *fileLauncher) WrapFiles(argv []string, dir string) ([]string, []*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	w.WriteString(l.msg)
	w.Close()
	l.handed = append(l.handed, r)
	return argv, []*os.File{r}, nil
}

func TestFileLauncherFilesAtFD3(t *testing.T) { bothGuards(t, testFileLauncherFilesAtFD3) }

func testFileLauncherFilesAtFD3(t *testing.T) {
	l := &fileLauncher{msg: "filter-bytes"}
	res := run(t, &Runner{Launcher: l}, Request{Command: `cat <&3`})
	if string(res.Output) != "filter-bytes" {
		t.Fatalf("output %q, want the launcher's file at fd 3", res.Output)
	}
	for _, f := range l.handed {
		if err := f.Close(); err == nil {
			t.Error("the runner left the parent's copy of an extra file open")
		}
	}
}

// A path spelled inside the workspace that reaches outside it through a symbolic link is not
// reported: writtenPaths names workspace files only.
func TestWrittenPathsThroughSymlinkOutside(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "t.txt")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	res := run(t, &Runner{Root: root}, Request{Command: "sleep 0.01; touch link.txt out/new.txt in.txt",
		WatchPaths: []string{"link.txt", "out/new.txt", "in.txt"}})
	rr, _ := filepath.EvalSymlinks(root)
	if want := []string{filepath.Join(rr, "in.txt")}; !slices.Equal(res.WrittenPaths, want) {
		t.Fatalf("writtenPaths %v, want %v", res.WrittenPaths, want)
	}
}
