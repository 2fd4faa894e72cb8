package shell

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Review attack: the session guard says "pid P" only once a command has run 5 ms
// (guard.announceAfter), so Zuno cannot signal it before. An interrupt or a timeout that
// comes in those first milliseconds must still stop the command and everything it started:
// here a command that ignores TERM and starts a setsid daemon and a double-forked one, each
// of which would write a file 300 ms later.
func TestStopInTheFirstMillisecondsKillsEverything(t *testing.T) {
	const cmd = `trap '' TERM; setsid sh -c 'sleep 0.3; touch late1' & (sh -c 'sleep 0.3; touch late2' &); ` +
		`sh -c 'sleep 0.3; touch late3' & exec sleep 30`
	for _, d := range []time.Duration{0, 100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond,
		2 * time.Millisecond, 4 * time.Millisecond, 6 * time.Millisecond} {
		for _, how := range []string{"interrupt", "timeout"} {
			t.Run(how+"/"+d.String(), func(t *testing.T) {
				dir := t.TempDir()
				r := &Runner{KillGrace: 100 * time.Millisecond}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req := Request{Dir: dir, Command: cmd}
				if how == "interrupt" {
					time.AfterFunc(d, cancel)
				} else {
					req.Timeout = d + time.Nanosecond
				}
				res, err := r.Run(ctx, req)
				var e *Error
				if errors.As(err, &e) && errors.Is(err, context.Canceled) {
					return // cancelled before the start: nothing ran
				}
				if err != nil {
					t.Fatal(err)
				}
				if !res.Cancelled && !res.TimedOut {
					t.Fatalf("neither cancelled nor timed out: %+v", res)
				}
				if res.Authoritative {
					t.Fatalf("a stopped command reads authoritative: %+v", res)
				}
				time.Sleep(600 * time.Millisecond)
				for _, f := range []string{"late1", "late2", "late3"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
						t.Errorf("%s written after the command was stopped", f)
					}
				}
			})
		}
	}
}

// Review attack: a command kills its own guard (it runs as the same user: kill -9 $PPID)
// after starting a daemon of its own session. The command dies with its guard
// (the parent-death signal), but the daemon is not the guard's child, has no parent-death
// signal and left the group that Zuno stops: nothing stops it. The double-forked one, still in
// the group, is stopped. Under bubblewrap the pid namespace ends both (--unshare-pid).
func TestCommandKillsItsGuardAfterADaemon(t *testing.T) {
	bothGuards(t, testCommandKillsItsGuardAfterADaemon)
}

func testCommandKillsItsGuardAfterADaemon(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{KillGrace: 200 * time.Millisecond}
	res := run(t, r, Request{Dir: dir, Command: `setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & ` +
		`(sh -c 'echo $$ > double.pid; exec sleep 30' &); ` +
		`while [ ! -s esc.pid ] || [ ! -s double.pid ]; do sleep 0.01; done; kill -9 $PPID; sleep 30`})
	if res.Authoritative {
		t.Fatalf("a command whose guard was killed reads authoritative: %+v", res)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "double.pid")))
	assertGone(t, readPID(t, filepath.Join(dir, "esc.pid")))
}
