package bg

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testGrace keeps the TERM→KILL escalation short so tests stay fast.
const testGrace = 300 * time.Millisecond

// codeOf returns the Code of a *Error in err's chain, or "".
func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newManager(t *testing.T, opts ...Option) *Manager {
	t.Helper()
	withGrace := func(m *Manager) { m.grace = testGrace }
	m, err := NewManager(t.TempDir(), append([]Option{withGrace}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func start(t *testing.T, m *Manager, command string) TaskInfo {
	t.Helper()
	info, err := m.Start(context.Background(), StartRequest{Command: command, SessionID: "s1", CallID: "c1"})
	if err != nil {
		t.Fatalf("Start(%q): %v", command, err)
	}
	return info
}

// settled waits (bounded) for a task to end and returns its latest window.
func settled(t *testing.T, m *Manager, id string) Window {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := m.Wait(ctx, id, 0, nil, 0)
	if err != nil {
		t.Fatalf("Wait(%s): %v", id, err)
	}
	if w.Status == StatusRunning {
		t.Fatalf("task %s still running", id)
	}
	return w
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ptr(v int64) *int64 { return &v }

func wantCode(t *testing.T, err error, code, field string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *bg.Error", err)
	}
	if e.Code != code || (field != "" && e.Field != field) {
		t.Fatalf("error %v: got code %q field %q, want %q %q", err, e.Code, e.Field, code, field)
	}
	if e.Message == "" {
		t.Fatalf("error %v has no message", err)
	}
}

// alive reports whether pid is a live (non-zombie) process. A plain kill -0
// would count a zombie left to a non-reaping init as alive.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	state := s[i+2]
	return state != 'Z' && state != 'X'
}

// readPid polls a pid file the command writes.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	eventually(t, "pid file "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// mustList lists m's tasks, failing the test on an error.
func mustList(t *testing.T, m *Manager) []TaskInfo {
	t.Helper()
	list, err := m.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return list
}
