package guard

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sessionConn is a test's side of a real session guard process (this test binary, whose
// init runs SessionMain under SessionName).
type sessionConn struct {
	t     testing.TB
	fd    int
	lines *bufio.Reader
	cmd   *exec.Cmd
}

func startSession(t testing.TB) *sessionConn {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "theirs")
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{SessionName}, Env: []string{}, Dir: "/",
		ExtraFiles: []*os.File{theirs}, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	s := &sessionConn{t: t, fd: fds[0], cmd: cmd}
	s.lines = bufio.NewReader(os.NewFile(uintptr(fds[0]), "ours"))
	t.Cleanup(func() {
		syscall.Close(s.fd)
		_ = cmd.Wait()
	})
	return s
}

// send writes one request: argv run in dir with env, its output to out.
func (s *sessionConn) send(dir string, argv, env []string, out *os.File) {
	s.t.Helper()
	header, body := EncodeRequest(ModeSetpgid, dir, argv, env, false, 1)
	if err := syscall.Sendmsg(s.fd, header, syscall.UnixRights(int(out.Fd())), nil, 0); err != nil {
		s.t.Fatal(err)
	}
	if _, err := syscall.Write(s.fd, body); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sessionConn) line() string {
	s.t.Helper()
	l, err := s.lines.ReadString('\n')
	if err != nil {
		s.t.Fatalf("reading a reply: %v", err)
	}
	return strings.TrimSuffix(l, "\n")
}

// run sends argv and returns the reply lines up to the report, and the output.
func (s *sessionConn) run(dir string, argv ...string) (replies []string, output string) {
	s.t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		s.t.Fatal(err)
	}
	defer r.Close()
	s.send(dir, argv, []string{"PATH=" + os.Getenv("PATH")}, w)
	w.Close()
	for {
		l := s.line()
		replies = append(replies, l)
		if !strings.HasPrefix(l, ReplyPID+" ") {
			break
		}
	}
	b := make([]byte, 4096)
	n, _ := r.Read(b)
	return replies, string(b[:n])
}

func alive(pid int) bool {
	state, _, _, ok := Stat(pid)
	return ok && state != 'Z' && state != 'X'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
	}
}

// What a command leaves in its group after it ended is the runtime's to stop (TERM, then KILL
// after its grace); whatever is still there when the next request comes is killed before the
// next command starts, so every descendant of the guard is its running command's.
func TestSessionGuardClearsTheLastCommandsProcesses(t *testing.T) {
	s := startSession(t)
	replies, out := s.run("/", "sh", "-c", "sleep 30 & echo $!")
	if len(replies) != 2 || !strings.HasPrefix(replies[1], "exit 0 ") {
		t.Fatalf("replies %q", replies)
	}
	leftover, ok := atoi(strings.TrimSpace(out))
	if !ok || !alive(leftover) {
		t.Fatalf("leftover %q not running", out)
	}
	replies, _ = s.run("/", "true")
	if len(replies) != 2 || !strings.HasPrefix(replies[1], "exit 0 ") {
		t.Fatalf("replies %q", replies)
	}
	if alive(leftover) {
		t.Fatalf("the last command's process %d survived into the next command", leftover)
	}
}

// A request is refused before anything starts when it cannot be read, its directory cannot
// be entered, or its program is not in the command's PATH; the guard serves the next one.
func TestSessionGuardRefusals(t *testing.T) {
	s := startSession(t)
	r, w, _ := os.Pipe()
	defer r.Close()
	body := []byte("v1\x00sideways\x00/\x001\x00true\x00")
	header := make([]byte, requestHeader)
	putUint32(header[0:4], uint32(len(body)))
	putUint32(header[4:8], 1)
	if err := syscall.Sendmsg(s.fd, header, syscall.UnixRights(int(w.Fd())), nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.Write(s.fd, body); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if l := s.line(); l != ReplyError+" invalid request" {
		t.Fatalf("a request with an unknown mode: %q", l)
	}
	for _, tc := range []struct {
		dir, prog, reply, output string
	}{
		{"/no/such/dir-zuno", "true", ReplyError + " could not enter the working directory /no/such/dir-zuno", ""},
		{"/", "no-such-program-zuno", "guard 127 could not start no-such-program-zuno: not found",
			DiagPrefix + "could not start no-such-program-zuno: not found\n"},
		{"/", "/etc/passwd", "guard 126 could not start /etc/passwd: permission denied",
			DiagPrefix + "could not start /etc/passwd: permission denied\n"},
		{"/", "sh", "exit 0 ", ""},
	} {
		args := []string{tc.prog}
		if tc.prog == "sh" {
			args = append(args, "-c", "exit 0")
		}
		replies, out := s.run(tc.dir, args...)
		last := replies[len(replies)-1]
		if !strings.HasPrefix(last, tc.reply) || out != tc.output {
			t.Errorf("%s in %s: %q %q", tc.prog, tc.dir, replies, out)
		}
	}
}

// The runtime's end closing is the lifeline: the running command, its group and its
// escapees die, and so does the guard.
func TestSessionGuardLifeline(t *testing.T) {
	s := startSession(t)
	r, w, _ := os.Pipe()
	defer r.Close()
	s.send("/", []string{"sh", "-c", `setsid sleep 30 & sleep 30 & echo $! $$; exec sleep 30`},
		[]string{"PATH=" + os.Getenv("PATH")}, w)
	w.Close()
	if l := s.line(); !strings.HasPrefix(l, ReplyPID+" ") {
		t.Fatalf("%q", l)
	}
	b := make([]byte, 64)
	n, _ := r.Read(b)
	var pids []int
	for _, f := range strings.Fields(string(b[:n])) {
		p, _ := atoi(f)
		pids = append(pids, p)
	}
	time.Sleep(100 * time.Millisecond) // the setsid child has started
	all := append(descendants(s.cmd.Process.Pid), s.cmd.Process.Pid)
	if len(all) < 4 || !slices.Contains(all, pids[0]) {
		t.Fatalf("descendants %v, started %v", all, pids)
	}
	syscall.Close(s.fd)
	_ = s.cmd.Wait()
	s.fd = -1
	for _, p := range all {
		waitGone(t, p)
	}
}

// Row by row: what EncodeRequest writes decodeRequest reads back; anything else is refused.
func TestRequestFrame(t *testing.T) {
	_, body := EncodeRequest(ModeSetsid, "/w", []string{"bash", "-c", "echo a\x01b"}, []string{"A=1", "B="}, true, 3)
	req, ok := decodeRequest(body)
	if !ok || !req.setsid || !req.split || req.dir != "/w" || !slices.Equal(req.argv, []string{"bash", "-c", "echo a\x01b"}) ||
		!slices.Equal(req.env, []string{"A=1", "B="}) {
		t.Fatalf("%+v %v", req, ok)
	}
	for _, bad := range []string{
		"", "v1\x00", "v3\x00setpgid\x00/\x001\x00true\x00", "v2\x00", "v1\x00setpgid\x00/\x001\x00true",
		"v1\x00setpgid\x00rel\x001\x00true\x00", "v1\x00setpgid\x00/\x002\x00true\x00",
		"v1\x00setpgid\x00/\x000\x00true\x00", "v1\x00setpgid\x00/\x00x\x00true\x00",
		"v1\x00setpgid\x00/\x001\x00\x00", "v1\x00both\x00/\x001\x00true\x00",
	} {
		if req, ok := decodeRequest([]byte(bad)); ok {
			t.Errorf("%q accepted: %+v", bad, req)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	_, body := EncodeRequest(ModeSetpgid, "/", []string{"bash", "-c", "true"}, []string{"PATH=/bin"}, false, 1)
	f.Add(body)
	f.Fuzz(func(t *testing.T, b []byte) {
		req, ok := decodeRequest(b)
		if !ok {
			return
		}
		mode := ModeSetpgid
		if req.setsid {
			mode = ModeSetsid
		}
		_, again := EncodeRequest(mode, req.dir, req.argv, req.env, req.split, 1)
		if string(again) != string(b) {
			t.Fatalf("%q decoded to %+v, which encodes to %q", b, req, again)
		}
	})
}

// BenchmarkSessionGuard measures `bash -c true` started by a session guard (one request, its
// two reply lines) against bash started directly, one of each in turn, so that the machine's
// load moves both alike: the guard's own cost, without the shell runner's (output capture,
// environment, directory checks), which BenchmarkGuardedRun in package shell includes.
func BenchmarkSessionGuard(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	s := startSession(b)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	var direct, guarded time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command(bash, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		s.send("/", []string{bash, "-c", "true"}, os.Environ(), devnull)
		if l := s.line(); !strings.HasPrefix(l, ReplyPID+" ") {
			b.Fatal(l)
		}
		if l := s.line(); !strings.HasPrefix(l, "exit 0 ") {
			b.Fatal(l)
		}
		direct += t1.Sub(t0)
		guarded += time.Since(t1)
	}
	b.ReportMetric(float64(direct.Nanoseconds())/float64(b.N), "bash-ns/op")
	b.ReportMetric(float64(guarded.Nanoseconds())/float64(b.N), "session-ns/op")
	b.ReportMetric(float64(guarded)/float64(direct), "session/bash")
}

// A split request (the git pre-flight's) gives the command's fd 1 and fd 2 descriptors of
// their own, and a start failure's diagnostic goes to fd 2, as the per-command guard writes
// it; a split request that brings one descriptor is refused and nothing starts.
func TestSessionGuardSplitOutput(t *testing.T) {
	s := startSession(t)
	env := []string{"PATH=" + os.Getenv("PATH")}
	pipes := func() (r1, w1, r2, w2 *os.File) {
		var err error
		if r1, w1, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		if r2, w2, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		return
	}
	send := func(argv []string, fds ...int) {
		header, body := EncodeRequest(ModeSetpgid, "/", argv, env, true, len(fds))
		if err := syscall.Sendmsg(s.fd, header, syscall.UnixRights(fds...), nil, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := syscall.Write(s.fd, body); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func(f *os.File) string {
		b, _ := io.ReadAll(f)
		f.Close()
		return string(b)
	}
	for _, tc := range []struct {
		argv           []string
		report         string
		stdout, stderr string
	}{
		{[]string{"sh", "-c", "echo out; echo err >&2; exit 3"}, "exit 3 ", "out\n", "err\n"},
		{[]string{"no-such-program-zuno"}, "guard 127 ", "", DiagPrefix + "could not start no-such-program-zuno: not found\n"},
	} {
		r1, w1, r2, w2 := pipes()
		send(tc.argv, int(w1.Fd()), int(w2.Fd()))
		w1.Close()
		w2.Close()
		l := s.line()
		if strings.HasPrefix(l, ReplyPID+" ") {
			l = s.line()
		}
		if out, errOut := readAll(r1), readAll(r2); !strings.HasPrefix(l, tc.report) || out != tc.stdout || errOut != tc.stderr {
			t.Errorf("%q: report %q, stdout %q, stderr %q", tc.argv, l, out, errOut)
		}
	}
	r1, w1, r2, w2 := pipes()
	defer r1.Close()
	defer r2.Close()
	defer w2.Close()
	send([]string{"sh", "-c", "echo ran"}, int(w1.Fd()))
	w1.Close()
	if l := s.line(); l != ReplyInvalid {
		t.Fatalf("a split request with one descriptor: %q", l)
	}
	if replies, _ := s.run("/", "true"); !strings.HasPrefix(replies[len(replies)-1], "exit 0 ") {
		t.Fatalf("the next request: %q", replies)
	}
}
