package bg

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zuno-run/zuno/adapters/tools/shell"
)

// A command that prints more than the ring holds: windows before the ring
// come from the log file, windows after it from memory, and both agree with
// the file byte for byte, forward and backward.
func TestLargeOutputWindowsFromRingAndDisk(t *testing.T) {
	m := newManager(t)
	info := start(t, m, "head -c 3000000 /dev/urandom | base64")

	// Readers run while the command writes (exercised under -race).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				w, err := m.Output(context.Background(), info.ID, nil, MaxLimit)
				if err != nil {
					t.Error(err)
					return
				}
				if w.Cursor != w.TotalWritten || w.HasMore {
					t.Errorf("tail window ends at %d of %d (hasMore %t)", w.Cursor, w.TotalWritten, w.HasMore)
					return
				}
				_, _ = m.List(context.Background())
			}
		})
	}
	last := settled(t, m, info.ID)
	close(stop)
	wg.Wait()

	if last.Status != StatusExited || last.ExitCode == nil || *last.ExitCode != 0 {
		t.Fatalf("status %s exit %v", last.Status, last.ExitCode)
	}
	file, err := os.ReadFile(info.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(file)) != last.TotalWritten || len(file) <= RingSize {
		t.Fatalf("log has %d bytes, totalWritten %d (need > %d)", len(file), last.TotalWritten, RingSize)
	}
	ringStart := int64(len(file) - RingSize)

	// Forward from 0.
	var got []byte
	cursor := int64(0)
	sawDisk, sawRing := false, false
	for {
		w, err := m.Output(context.Background(), info.ID, ptr(cursor), MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		if w.WindowFrom != cursor || w.HasEarlier != (cursor > 0) {
			t.Fatalf("window from %d (hasEarlier %t), asked %d", w.WindowFrom, w.HasEarlier, cursor)
		}
		if w.FromDisk != (cursor < ringStart) {
			t.Fatalf("cursor %d: fromDisk %t, ring starts at %d", cursor, w.FromDisk, ringStart)
		}
		sawDisk, sawRing = sawDisk || w.FromDisk, sawRing || !w.FromDisk
		got = append(got, w.Text...)
		cursor = w.Cursor
		if !w.HasMore {
			break
		}
	}
	if !bytes.Equal(got, file) || !sawDisk || !sawRing {
		t.Fatalf("forward pages: %d bytes (equal %t), disk %t ring %t", len(got), bytes.Equal(got, file), sawDisk, sawRing)
	}

	// Backward from the tail, using windowFrom as the next end.
	tail, err := m.Output(context.Background(), info.ID, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tail.Bytes != DefaultLimit || tail.Cursor != tail.TotalWritten || tail.HasMore || !tail.HasEarlier {
		t.Fatalf("tail window %+v", tail)
	}
	pages := [][]byte{[]byte(tail.Text)}
	end := tail.WindowFrom
	for end > 0 {
		from := max(0, end-MaxLimit)
		w, err := m.Output(context.Background(), info.ID, ptr(from), int(end-from))
		if err != nil {
			t.Fatal(err)
		}
		if w.Cursor != end || !w.HasMore {
			t.Fatalf("backward window [%d,%d): cursor %d hasMore %t", from, end, w.Cursor, w.HasMore)
		}
		pages = append(pages, []byte(w.Text))
		end = from
	}
	var back []byte
	for i := len(pages) - 1; i >= 0; i-- {
		back = append(back, pages[i]...)
	}
	if !bytes.Equal(back, file) {
		t.Fatalf("backward pages: %d bytes, file %d", len(back), len(file))
	}

	// Limits are clamped, never rejected.
	for _, c := range []struct{ limit, want int }{{1 << 30, MaxLimit}, {0, DefaultLimit}, {-5, DefaultLimit}, {100, 100}} {
		w, err := m.Output(context.Background(), info.ID, ptr(0), c.limit)
		if err != nil || w.Bytes != c.want {
			t.Errorf("limit %d: %d bytes, %v; want %d", c.limit, w.Bytes, err, c.want)
		}
	}
}

// A window that straddles the ring start is served whole from disk, and a
// multi-byte text pages back intact with every window on rune boundaries.
func TestSmallRingUTF8Paging(t *testing.T) {
	m := newManager(t)
	m.ringSize = 64
	info := start(t, m, `for i in $(seq 1 40); do printf 'héllo wörld €uro 𝄞 %d\n' "$i"; done`)
	last := settled(t, m, info.ID)
	file, err := os.ReadFile(info.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(file)) != last.TotalWritten {
		t.Fatalf("file %d, totalWritten %d", len(file), last.TotalWritten)
	}
	for limit := 4; limit <= 9; limit++ {
		var got []byte
		for cursor := int64(0); ; {
			w, err := m.Output(context.Background(), info.ID, ptr(cursor), limit)
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(w.Text) {
				t.Fatalf("limit %d cursor %d: window %q splits a rune", limit, cursor, w.Text)
			}
			if w.FromDisk != (cursor < last.TotalWritten-64) {
				t.Fatalf("limit %d cursor %d: fromDisk %t", limit, cursor, w.FromDisk)
			}
			got = append(got, w.Text...)
			cursor = w.Cursor
			if !w.HasMore {
				break
			}
		}
		if !bytes.Equal(got, file) {
			t.Fatalf("limit %d: pages differ from the log", limit)
		}
	}
}

// Polling a running command without a cursor follows its tail.
func TestTailWhileRunning(t *testing.T) {
	m := newManager(t)
	info := start(t, m, `i=0; while :; do i=$((i+1)); echo "line $i"; sleep 0.01; done`)
	var seen []int64
	eventually(t, "the tail to grow three times", func() bool {
		w, err := m.Output(context.Background(), info.ID, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status != StatusRunning || w.Cursor != w.TotalWritten || w.HasMore {
			t.Fatalf("running tail window %+v", w)
		}
		if w.TotalWritten > 0 && (len(seen) == 0 || w.TotalWritten > seen[len(seen)-1]) {
			if !strings.Contains(w.Text, "line ") {
				t.Fatalf("tail text %q", w.Text)
			}
			seen = append(seen, w.TotalWritten)
		}
		return len(seen) >= 3
	})
	// A cursor past what is written so far is refused, naming the range.
	w, _ := m.Output(context.Background(), info.ID, nil, 0)
	_, err := m.Output(context.Background(), info.ID, ptr(w.TotalWritten+1<<40), 0)
	wantCode(t, err, CodeInvalidArguments, "cursor")
	if !strings.Contains(err.Error(), "pass a cursor from 0 to") {
		t.Fatalf("error does not give the valid range: %v", err)
	}
	_, err = m.Output(context.Background(), info.ID, ptr(-1), 0)
	wantCode(t, err, CodeInvalidArguments, "cursor")
}

func TestWaitTimeoutThenCancel(t *testing.T) {
	m := newManager(t)
	info := start(t, m, "echo started; sleep 30")
	eventually(t, "the command printed", func() bool {
		w, err := m.Output(context.Background(), info.ID, nil, 0)
		return err == nil && w.Text == "started\n"
	})
	w, err := m.Wait(context.Background(), info.ID, 50*time.Millisecond, nil, 0)
	if err != nil || w.Status != StatusRunning || w.ExitCode != nil {
		t.Fatalf("wait on running task: %+v, %v", w, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, err = m.Wait(ctx, info.ID, time.Minute, nil, 0)
	if err != context.Canceled || w.Status != StatusRunning {
		t.Fatalf("wait with a done ctx: %+v, %v", w, err)
	}

	got, err := m.Cancel(context.Background(), info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusCancelled || got.Signal != "SIGTERM" || got.Ended == nil || got.ExitCode != nil {
		t.Fatalf("cancelled: %+v", got)
	}
	again, err := m.Cancel(context.Background(), info.ID)
	if err != nil || again.Status != StatusCancelled || !again.Ended.Equal(*got.Ended) {
		t.Fatalf("second cancel: %+v, %v", again, err)
	}
	w, err = m.Wait(context.Background(), info.ID, time.Minute, ptr(0), 0)
	if err != nil || w.Status != StatusCancelled || w.Text != "started\n" {
		t.Fatalf("wait after cancel: %+v, %v", w, err)
	}
}

// Cancel stops the whole group: a grandchild that ignores SIGTERM (inherited
// from bash's trap) is killed by the SIGKILL after the grace.
func TestCancelKillsProcessGroup(t *testing.T) {
	for _, c := range []struct {
		name, command, signal string
	}{
		{"term", `sleep 300 & echo $! > "$PIDFILE"; wait`, "SIGTERM"},
		{"kill after grace", `trap '' TERM; sleep 300 & echo $! > "$PIDFILE"; while :; do sleep 0.05; done`, "SIGKILL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newManager(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			info, err := m.Start(context.Background(), StartRequest{Command: c.command, Env: []string{"PIDFILE=" + pidFile}})
			if err != nil {
				t.Fatal(err)
			}
			pid := readPid(t, pidFile)
			if !alive(pid) {
				t.Fatalf("grandchild %d not running before cancel", pid)
			}
			got, err := m.Cancel(context.Background(), info.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != StatusCancelled || got.Signal != c.signal {
				t.Fatalf("cancel: status %s signal %q, want cancelled %s", got.Status, got.Signal, c.signal)
			}
			eventually(t, "the grandchild to be gone", func() bool { return !alive(pid) })
		})
	}
}

// A command that exits and leaves a background job behind ends as exited with
// its own code, and the job is reaped with the group (no orphans).
func TestExitReapsLeftoverGroup(t *testing.T) {
	m := newManager(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	info, err := m.Start(context.Background(), StartRequest{
		Command: `sleep 300 & echo $! > "$PIDFILE"; echo bye; exit 4`, Env: []string{"PIDFILE=" + pidFile}})
	if err != nil {
		t.Fatal(err)
	}
	w := settled(t, m, info.ID)
	if w.Status != StatusExited || w.ExitCode == nil || *w.ExitCode != 4 || w.Text != "bye\n" {
		t.Fatalf("window %+v", w)
	}
	pid := readPid(t, pidFile)
	eventually(t, "the leftover job to be gone", func() bool { return !alive(pid) })
	// Cancel on an ended task reports it as it is.
	got, err := m.Cancel(context.Background(), info.ID)
	if err != nil || got.Status != StatusExited || *got.ExitCode != 4 {
		t.Fatalf("cancel after exit: %+v, %v", got, err)
	}
}

func TestStartEnvironmentAndStreams(t *testing.T) {
	m := newManager(t, func(m *Manager) {
		m.runner = shell.Runner{BaseEnv: func() []string {
			return []string{"PATH=" + os.Getenv("PATH"), "ZUNO_SECRET=x", "zuno_lower=y", "KEEP=1"}
		}}
	})
	dir := t.TempDir()
	info, err := m.Start(context.Background(), StartRequest{
		Command: `echo "${ZUNO_SECRET:-unset} ${zuno_lower:-unset} $KEEP $EXTRA $(pwd)"; echo err >&2; cat; echo done`,
		Dir:     dir, Env: []string{"EXTRA=2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := settled(t, m, info.ID)
	realDir, _ := filepath.EvalSymlinks(dir)
	want := "unset unset 1 2 " + realDir + "\nerr\ndone\n" // stdin is /dev/null: cat returns at once
	if w.Text != want {
		t.Fatalf("output %q, want %q", w.Text, want)
	}
	if info.Dir != realDir || !strings.HasPrefix(info.ID, "bg_") || len(info.ID) != 15 {
		t.Fatalf("info %+v", info)
	}
}

func TestExitPolicy(t *testing.T) {
	m := newManager(t)
	for _, c := range []struct {
		policy shell.ExitPolicy
		want   int
	}{{"", 1}, {shell.PolicyPipefail, 1}, {shell.PolicyLast, 0}, {shell.PolicyAll, 1}} {
		info, err := m.Start(context.Background(), StartRequest{Command: "false | true", ExitPolicy: c.policy})
		if err != nil {
			t.Fatal(err)
		}
		if w := settled(t, m, info.ID); *w.ExitCode != c.want {
			t.Errorf("policy %q: exit %d, want %d", c.policy, *w.ExitCode, c.want)
		}
	}
	_, err := m.Start(context.Background(), StartRequest{Command: "true", ExitPolicy: "sometimes"})
	wantCode(t, err, CodeInvalidArguments, "exitPolicy")
}

func TestStartRefusals(t *testing.T) {
	m := newManager(t)
	ctx := context.Background()
	for _, c := range []struct {
		req   StartRequest
		field string
	}{
		{StartRequest{Command: "  "}, "command"},
		{StartRequest{Command: "echo \x00"}, "command"},
		{StartRequest{Command: "true", Env: []string{"NOEQUALS"}}, "env"},
		{StartRequest{Command: "true", Dir: filepath.Join(t.TempDir(), "missing")}, "dir"},
	} {
		_, err := m.Start(ctx, c.req)
		wantCode(t, err, CodeInvalidArguments, c.field)
	}
}

// The task outlives the context of the call that started it.
func TestStartIsNotBoundToContext(t *testing.T) {
	m := newManager(t)
	ctx, cancel := context.WithCancel(context.Background())
	info, err := m.Start(ctx, StartRequest{Command: "sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if w, _ := m.Wait(context.Background(), info.ID, 100*time.Millisecond, nil, 0); w.Status != StatusRunning {
		t.Fatalf("task ended with its starting context: %+v", w)
	}
	if _, err := m.Start(ctx, StartRequest{Command: "true"}); codeOf(err) != CodeUnavailable {
		t.Fatalf("start with a done ctx: %v", err)
	}
}

func TestListCloseAndUnknownTask(t *testing.T) {
	m := newManager(t)
	a := start(t, m, "echo a")
	b := start(t, m, "sleep 300")
	settled(t, m, a.ID)
	list := mustList(t, m)
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("list %+v", list)
	}
	if list[0].Status != StatusExited || list[0].TotalWritten != 2 || list[0].Command != "echo a" ||
		list[0].SessionID != "s1" || list[0].CallID != "c1" || list[1].Status != StatusRunning {
		t.Fatalf("list %+v", list)
	}

	_, err := m.Output(context.Background(), "bg_000000000000", nil, 0)
	wantCode(t, err, CodeNotFound, "taskID")
	if !strings.Contains(err.Error(), "action list") {
		t.Fatalf("not_found does not point at list: %v", err)
	}
	_, err = m.Wait(context.Background(), "", time.Second, nil, 0)
	wantCode(t, err, CodeInvalidArguments, "taskID")
	_, err = m.Cancel(context.Background(), "nope")
	wantCode(t, err, CodeNotFound, "taskID")

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	list = mustList(t, m)
	// Close sends SIGTERM to the task's group, whose leader (the guard) answers it by killing
	// what is left: on a loaded machine the command may be recorded as dying of either.
	if list[0].Status != StatusExited || list[1].Status != StatusKilled || list[1].Signal != "SIGTERM" && list[1].Signal != "SIGKILL" {
		t.Fatalf("after close: %+v", list)
	}
	if w, err := m.Output(context.Background(), b.ID, nil, 0); err != nil || w.Status != StatusKilled {
		t.Fatalf("read after close: %+v, %v", w, err)
	}
	_, err = m.Start(context.Background(), StartRequest{Command: "true"})
	wantCode(t, err, CodeUnavailable, "")
	if err := m.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
}
