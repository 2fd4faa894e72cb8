package toolset

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/verification"
)

// How a run is settled, one row per sentence of seeds 000 "取消一条正在运行的命令" and
// "guard 保留的退出码" (docs/shell-execution.md): the outcome, the error code, the first line.
func TestShellSettlement(t *testing.T) {
	s, _ := newSet(t)
	code := func(n int) shell.Result { return shell.Result{HasExitCode: true, ExitCode: n, Authoritative: true} }
	with := func(r shell.Result, f func(*shell.Result)) shell.Result { f(&r); return r }
	for _, tc := range []struct {
		name    string
		res     shell.Result
		outcome tools.Outcome
		code    string
		first   string
	}{
		{"ran and failed: completed", code(3), tools.OutcomeCompleted, "", "Exit code 3."},
		{"own exit 125 keeps its status", code(125), tools.OutcomeCompleted, "", "Exit code 125."},
		{"own exit 127 keeps its status", code(127), tools.OutcomeCompleted, "", "Exit code 127."},
		{"cancelled after the command exited: its verdict stands, marked cancelled",
			with(code(3), func(r *shell.Result) { r.Cancelled, r.ExitedBeforeCancel = true, true }),
			tools.OutcomeCompleted, "", "Exit code 3. (The call was cancelled after the command had already exited: its own status stands.)"},
		{"cancelled while running: unknown, first line says so",
			shell.Result{Cancelled: true, Killed: true, Signal: "SIGTERM"},
			tools.OutcomeUncertain, "interrupted", "Cancelled: the outcome is unknown."},
		{"cancelled while running with a recorded code: the number proves nothing",
			shell.Result{Cancelled: true, Killed: true, HasExitCode: true, ExitCode: 143},
			tools.OutcomeUncertain, "interrupted", "Cancelled: the outcome is unknown."},
		{"cancelled, exited, but capture failed: unsettled, no verdict",
			with(code(0), func(r *shell.Result) {
				r.Cancelled, r.ExitedBeforeCancel, r.Unsettled, r.Authoritative = true, true, true, false
			}),
			tools.OutcomeUncertain, "interrupted", "Cancelled: the outcome is unknown."},
		{"guard 125 under a cancellation: never a verdict",
			shell.Result{Cancelled: true, HasExitCode: true, ExitCode: 125, GuardFailed: true, GuardDiagnostic: "could not wait"},
			tools.OutcomeUncertain, "guard_failed", "Outcome unknown: Zuno's process guard failed"},
		{"guard 125: uncertain, never replayed",
			shell.Result{HasExitCode: true, ExitCode: 125, GuardFailed: true, GuardDiagnostic: "could not wait"},
			tools.OutcomeUncertain, "guard_failed", "Outcome unknown: Zuno's process guard failed"},
		{"127 from the guard: never started",
			shell.Result{HasExitCode: true, ExitCode: 127, NeverStarted: true, GuardDiagnostic: "could not start bwrap"},
			tools.OutcomeCompleted, "", "Exit code 127 from Zuno's process guard: the program never started"},
		{"hard limit kill: uncertain, never a verdict",
			shell.Result{TimedOut: true, Killed: true, Signal: "SIGKILL"},
			tools.OutcomeUncertain, "timed_out", "Timed out after 1s"},
		{"timed out after the command exited: its verdict stands",
			with(code(0), func(r *shell.Result) { r.TimedOut, r.ExitedBeforeCancel = true, true }),
			tools.OutcomeCompleted, "", "Exit code 0."},
		{"killed by a signal it did not get from Zuno",
			shell.Result{Signal: "SIGKILL"}, tools.OutcomeCompleted, "", "Killed by signal SIGKILL: no exit code, and no verdict on the work."},
	} {
		rc := s.receipt(tools.Invocation{CallID: "settle"}, shellArgs{Command: "true"}, tc.res, false)
		r := s.shellResult("settle", time.Second, tc.res, rc)
		if r.Outcome != tc.outcome || r.ErrorCode != tc.code || !strings.HasPrefix(r.Output, tc.first) {
			t.Errorf("%s: %s/%q\n%s", tc.name, r.Outcome, r.ErrorCode, r.Output)
		}
		// An ending Zuno cannot settle is never a verdict on the receipt either.
		if r.Outcome == tools.OutcomeUncertain && rc.Verdict != string(verification.Unknown) {
			t.Errorf("%s: uncertain, but the receipt's verdict is %s", tc.name, rc.Verdict)
		}
		// The guard's 126/127: the program never started, recorded without authority.
		if tc.res.NeverStarted && (rc.Verdict != string(verification.NotStarted) || rc.Authority != "none") {
			t.Errorf("%s: never started, but the receipt says %s, %s", tc.name, rc.Verdict, rc.Authority)
		}
		if !strings.HasSuffix(r.Output, "(no output)") {
			t.Errorf("%s: an empty capture is not shown as (no output):\n%s", tc.name, r.Output)
		}
	}
}

// A chatty command cancelled mid-run: every byte it wrote is kept and goes through the
// normal caps (withheld to an artifact, the read-back notice after the cancellation line).
func TestShellCancelledChattyOutputComplete(t *testing.T) {
	s, root := newSet(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(root, "printed")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r := callCtx(ctx, t, s, tools.NameShell, "chatty", `{"command":"seq 1 100000; touch printed; sleep 30"}`)
	want(t, r, tools.OutcomeUncertain, "interrupted")
	var expected bytes.Buffer
	for i := 1; i <= 100000; i++ {
		expected.WriteString(strconv.Itoa(i) + "\n")
	}
	w := r.Metadata.WithheldOutput
	if w == nil {
		t.Fatalf("not withheld:\n%s", r.Output)
	}
	stored, err := os.ReadFile(w.Path)
	if err != nil || !bytes.Equal(stored, expected.Bytes()) {
		t.Fatalf("the cancelled command's output is not complete (%v, %d of %d bytes)", err, len(stored), expected.Len())
	}
	lines := strings.SplitN(r.Output, "\n", 2)
	if !strings.HasPrefix(lines[0], "Cancelled: the outcome is unknown.") || !strings.Contains(lines[1], `"action": "artifact"`) {
		t.Fatalf("the cancellation line must come first, then the read-back notice:\n%s", r.Output)
	}
}

// Guard failure through the whole tool: a launcher whose program the guard cannot even look
// at (a symbolic-link loop) gives 125 from the guard, an uncertain outcome and the guard's line.
func TestShellGuardFailureIsUncertain(t *testing.T) {
	loop := filepath.Join(t.TempDir(), "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	s, root := newSet(t)
	s.shell.Launcher = prefixLauncher{loop}
	r := call(t, s, tools.NameShell, `{"command":"touch ran"}`)
	want(t, r, tools.OutcomeUncertain, "guard_failed")
	if f := facts(t, r); f["guardFailed"] != true || f["authoritative"] != false || f["exitCode"] != 125.0 ||
		!strings.Contains(r.Output, "zuno-shell-guard: ") {
		t.Fatalf("%v\n%s", f, r.Output)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the command ran")
	}
}

type prefixLauncher struct{ program string }

func (l prefixLauncher) Wrap(argv []string, _ string) ([]string, error) {
	return append([]string{l.program}, argv...), nil
}

// A command's own reserved code is its verdict, not the guard's: the old shell called
// `echo my verdict; exit 127` "not found" (issue 9).
func TestShellOwnReservedCodes(t *testing.T) {
	s, _ := newSet(t)
	for _, code := range []int{125, 126, 127} {
		r := call(t, s, tools.NameShell, args("command", "echo my verdict; exit "+strconv.Itoa(code)))
		want(t, r, tools.OutcomeCompleted, "")
		f := facts(t, r)
		receiptLine := "[verification " + r.Metadata.Verification + "] failed, authoritative"
		if r.Output != "Exit code "+strconv.Itoa(code)+".\n"+receiptLine+"\nmy verdict\n" || f["authoritative"] != true || f["guardFailed"] != nil || f["neverStarted"] != nil {
			t.Errorf("exit %d: %v\n%s", code, f, r.Output)
		}
	}
}
