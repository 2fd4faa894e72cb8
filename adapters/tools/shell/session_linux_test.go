package shell

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// Attacks on the session guard (docs/shell-execution.md, "The session guard"), each a test:
//
//	two commands at once share a guard, so one's cleanup kills the other's daemon   → one command per guard at a time
//	a command leaves a process the next command's guard would count as its own      → guard protocol test (package guard)
//	the guard is killed mid-command                                                 → the command dies, no verdict, the next call gets a new guard
//	the command forges a report on the guard's socket (/proc/$PPID/fd/3, fd 3)      → not reachable
//	the command inherits the guard's socket or another descriptor                   → none but its own
//	the guard's own environment (or Zuno's) reaches the command                     → the guard's is empty; the request's, deduplicated, is the command's
//	the program is looked up in the guard's PATH instead of the command's           → the request's PATH
//	the runtime is SIGKILLed mid-command                                            → TestRuntimeKilledLeavesNoOrphan (both guards)

func parentArgv(t *testing.T, r *Runner) (pid int, argv string) {
	t.Helper()
	res := run(t, r, Request{Command: `echo $PPID; tr '\0' ' ' < /proc/$PPID/cmdline`})
	first, rest, _ := strings.Cut(string(res.Output), "\n")
	pid, err := strconv.Atoi(first)
	if err != nil {
		t.Fatalf("output %q", res.Output)
	}
	return pid, strings.TrimSpace(rest)
}

// Commands in turn reuse one session guard; commands at once each get their own.
func TestSessionGuardServesCommandsInTurn(t *testing.T) {
	first, argv := parentArgv(t, nil)
	if argv != guard.SessionName {
		t.Fatalf("the command's parent runs %q, want the session guard", argv)
	}
	if again, _ := parentArgv(t, nil); again != first {
		t.Fatalf("the second command ran under guard %d, the first under %d", again, first)
	}
	const n = 6
	parents := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := (&Runner{}).Run(context.Background(), Request{Command: "sleep 0.3; echo $PPID; exit " + strconv.Itoa(i)})
			if err != nil || res.ExitCode != i || !res.Authoritative {
				t.Errorf("command %d: %+v %v", i, res, err)
			}
			parents[i] = string(res.Output)
		})
	}
	wg.Wait()
	slices.Sort(parents)
	if len(slices.Compact(parents)) != n {
		t.Fatalf("commands that ran at once shared a guard: %q", parents)
	}
}

// A command's end stops its own escapees only: another command running at the same time
// keeps its daemon until it ends itself.
func TestSessionGuardStopsOnlyItsCommandsEscapees(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{KillGrace: 100 * time.Millisecond}
	daemon := func(name string) string {
		return `setsid sh -c 'echo $$ > ` + name + `.pid; exec sleep 30' & while [ ! -s ` + name + `.pid ]; do sleep 0.01; done; `
	}
	aDone := make(chan Result)
	go func() {
		res, _ := r.Run(context.Background(), Request{Command: daemon("a") + `while [ ! -e b.done ]; do sleep 0.01; done; echo a`, Dir: dir})
		aDone <- res
	}()
	a := readPID(t, filepath.Join(dir, "a.pid"))
	res := run(t, r, Request{Command: daemon("b") + `echo b`, Dir: dir})
	assertGone(t, readPID(t, filepath.Join(dir, "b.pid")))
	if string(res.Output) != "b\n" || !processAlive(a) {
		t.Fatalf("b: %q; a's daemon alive: %v", res.Output, processAlive(a))
	}
	if err := os.WriteFile(filepath.Join(dir, "b.done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := <-aDone; string(res.Output) != "a\n" || !res.Authoritative {
		t.Fatalf("a: %+v %q", res, res.Output)
	}
	assertGone(t, a)
}

// A session guard killed mid-command takes the command with it (its parent-death signal):
// no verdict, and the next command gets a new guard.
func TestSessionGuardKilledMidCommand(t *testing.T) {
	dir := t.TempDir()
	go func() {
		_ = syscall.Kill(readPID(t, filepath.Join(dir, "guard.pid")), syscall.SIGKILL)
	}()
	res := run(t, nil, Request{Command: `echo $$ > cmd.pid; echo $PPID > guard.pid; sleep 30; touch late`, Dir: dir})
	if res.HasExitCode || res.Signal != "SIGKILL" || res.Authoritative {
		t.Fatalf("got %+v", res)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "cmd.pid")))
	killed := readPID(t, filepath.Join(dir, "guard.pid"))
	if next, argv := parentArgv(t, nil); next == killed || argv != guard.SessionName {
		t.Fatalf("next command under %d %q; the killed guard was %d", next, argv, killed)
	}
}

// The verdict travels on the guard's socket, which the command neither inherits nor can open.
func TestSessionGuardReportCannotBeForged(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		code int
	}{
		{`echo 'exit 0 1' > /proc/$PPID/fd/3; exit 7`, 7},
		{`echo 'exit 0 1' >&3; exit 7`, 7},
		{`echo 'guard 125 forged' > /proc/$PPID/fd/3; exit 125`, 125},
		{`for f in /proc/$$/fd/*; do readlink $f; done | grep -q socket && exit 9; exit 0`, 0},
	} {
		res := run(t, nil, Request{Command: tc.cmd})
		if !res.HasExitCode || res.ExitCode != tc.code || !res.Authoritative || res.GuardFailed {
			t.Errorf("%q: %+v %q", tc.cmd, res, res.Output)
		}
	}
}

// The command's environment is the request's, deduplicated (the last value of a name wins,
// as os/exec gives the per-command guard); the guard's own is empty; the program is found in
// the command's PATH.
func TestSessionGuardEnvironment(t *testing.T) {
	bin := t.TempDir()
	prog := filepath.Join(bin, "zuno-test-prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Launcher: argvLauncher{"zuno-test-prog"}}
	res := run(t, r, Request{Command: `env | grep -c '^PATH='; echo "$PATH"; wc -c < /proc/$PPID/environ`,
		Env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}})
	want := "1\n" + bin + ":" + os.Getenv("PATH") + "\n"
	if !res.Authoritative || !strings.HasPrefix(string(res.Output), want) {
		t.Fatalf("%+v %q, want %q", res, res.Output, want)
	}
	// The guard is the launcher's parent here: its environment is empty.
	if env := strings.TrimPrefix(string(res.Output), want); strings.TrimSpace(env) != "0" {
		t.Fatalf("the guard's environment has %s bytes", env)
	}
}

// A command with no directory runs in Zuno's current one, as under the per-command guard.
func TestSessionGuardDirectory(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if res := run(t, nil, Request{Command: "pwd -P"}); string(res.Output) != dir+"\n" {
		t.Fatalf("pwd %q, want %q", res.Output, dir)
	}
}

// A command that stops its guard (SIGSTOP) cannot hold the call: it settles with no verdict,
// under either guard — the per-command guard by the timeout's kill of the group it is in,
// the session guard as soon as Zuno sees it stopped (even before it said the command
// started) — nothing of the command is left, and the next command runs.
func TestStoppedGuardStillSettles(t *testing.T) { bothGuards(t, testStoppedGuardStillSettles) }

func testStoppedGuardStillSettles(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{KillGrace: 100 * time.Millisecond}
	res := run(t, r, Request{Command: `setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & ` +
		`while [ ! -s esc.pid ]; do sleep 0.01; done; kill -STOP $PPID; sleep 30`,
		Dir: dir, Timeout: 2 * time.Second})
	if res.Authoritative || res.HasExitCode || res.Signal != "SIGKILL" {
		t.Fatalf("got %+v", res)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "esc.pid")))
	if res := run(t, r, Request{Command: "exit 4"}); res.ExitCode != 4 || !res.Authoritative {
		t.Fatalf("the next command: %+v", res)
	}
}

// With Zuno's own directory gone, a command with no directory cannot be told where to run: it
// runs under a per-command guard, which inherits the directory, as before.
func TestSessionGuardFallsBackWithoutAWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	res := run(t, nil, Request{Command: `tr '\0' ' ' < /proc/$PPID/cmdline`})
	// (bash says first that it cannot name its directory.)
	if !res.Authoritative || !strings.Contains(string(res.Output), "\n"+GuardName+" 0 -- ") {
		t.Fatalf("%+v %q", res, res.Output)
	}
}

// A request larger than the socket's buffer (an environment of 800 KiB: eight values of 100
// KiB, under the kernel's bound on one string) still reaches the guard whole: the part the
// first message could not carry follows it.
func TestSessionGuardLargeRequest(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	var env []string
	for i := range 8 {
		env = append(env, "ZBIG"+strconv.Itoa(i)+"="+big)
	}
	res := run(t, nil, Request{Command: `printf %s "$ZBIG0$ZBIG7" | wc -c`, Env: env})
	if !res.Authoritative || strings.TrimSpace(string(res.Output)) != strconv.Itoa(2*len(big)) {
		t.Fatalf("%+v %q", res, res.Output)
	}
	if _, argv := parentArgv(t, nil); argv != guard.SessionName {
		t.Fatalf("the next command's parent runs %q", argv)
	}
}

// A process that leaves the command's group after the guard's sweep at the report — here on
// the runtime's own TERM to the group, which it traps to start a setsid daemon — is killed
// when the call settles, not left below the idle guard until a next command comes.
func TestSessionGuardLateEscapeeKilledAtSettle(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{KillGrace: 300 * time.Millisecond}
	res := run(t, r, Request{Dir: dir, Command: `(trap 'setsid sh -c "echo \$\$ > late.pid; exec sleep 30" & wait' TERM; ` +
		`touch armed; while :; do sleep 0.02; done) & while [ ! -e armed ]; do sleep 0.01; done; exit 0`})
	if !res.Authoritative || res.ExitCode != 0 {
		t.Fatalf("%+v %q", res, res.Output)
	}
	late := readPID(t, filepath.Join(dir, "late.pid"))
	assertGone(t, late)
}
