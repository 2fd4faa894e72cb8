package guard

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The guard parses numbers without strconv (it must initialise early): its own parser and
// printer agree with strconv on every row.
func TestNumbers(t *testing.T) {
	for _, s := range []string{"0", "7", "42", "123456789"} {
		n, ok := atoi(s)
		if want, _ := strconv.Atoi(s); !ok || n != want {
			t.Errorf("atoi(%q) = %d, %v", s, n, ok)
		}
	}
	for _, bad := range []string{"", "-1", "1x", "1234567890", " 1"} {
		if _, ok := atoi(bad); ok {
			t.Errorf("atoi(%q) accepted", bad)
		}
	}
	for _, n := range []int64{0, 1, -1, 9, 10, 1700000000123456789, -9223372036854775807} {
		if itoa(n) != strconv.FormatInt(n, 10) {
			t.Errorf("itoa(%d) = %q", n, itoa(n))
		}
	}
}

func TestProcStatOfSelf(t *testing.T) {
	ppid, pgrp, ok := ProcStat(os.Getpid())
	if !ok || ppid != os.Getppid() || pgrp != syscall.Getpgrp() {
		t.Fatalf("ProcStat(self) = %d %d %v", ppid, pgrp, ok)
	}
}

func TestStartFailureCodes(t *testing.T) {
	for err, want := range map[error]int{syscall.ENOENT: ExitNotFound, syscall.EACCES: ExitCannotExecute,
		syscall.ENOEXEC: ExitCannotExecute, syscall.ELOOP: ExitFailed, syscall.E2BIG: ExitFailed} {
		if got := startFailureCode(err); got != want {
			t.Errorf("%v: %d, want %d", err, got, want)
		}
	}
	if _, code := lookPath("definitely-not-a-program-zuno"); code != ExitNotFound {
		t.Errorf("lookPath of a missing program: %d", code)
	}
	if p, code := lookPath("sh"); code != 0 || p == "" {
		t.Errorf("lookPath(sh) = %q %d", p, code)
	}
}

// Both ways of finding descendants agree on a real tree: a child with a grandchild.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var got []int
	for deadline := time.Now().Add(5 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got = descendants(os.Getpid())
	}
	scanned := scanDescendants(os.Getpid())
	slices.Sort(got)
	slices.Sort(scanned)
	if len(got) != 2 || !slices.Contains(got, cmd.Process.Pid) || !slices.Equal(got, scanned) {
		t.Fatalf("descendants %v, scan %v (child %d)", got, scanned, cmd.Process.Pid)
	}
}

// A status reporter is recognised only as StatusName executed through a descriptor: a user
// typing the name as an argument, or as argv[0], starts no reporter.
func TestIsStatusReporter(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"/proc/self/fd/4", StatusName, "5", "--", "bash"}, true},
		{[]string{"/usr/bin/zuno", StatusName, "5", "--", "bash"}, false},
		{[]string{StatusName, "5", "--", "bash"}, false},
		{[]string{"/proc/self/fd/", StatusName}, false},
		{[]string{"/proc/self/fd/4"}, false},
		{[]string{"/proc/self/fd/4", Name}, false},
	} {
		if got := isStatusReporter(tc.args); got != tc.want {
			t.Errorf("%q: %v", tc.args, got)
		}
	}
}

// The reporter's and the guard's line of a wait status, and the status mirrored.
func TestWaitLine(t *testing.T) {
	killed := syscall.WaitStatus(int(syscall.SIGKILL))
	exited := syscall.WaitStatus(137 << 8)
	if line, st := waitLine(killed, 5); line != "signal 9 5" || st != 137 {
		t.Errorf("SIGKILL: %q, %d", line, st)
	}
	if line, st := waitLine(exited, 5); line != "exit 137 5" || st != 137 {
		t.Errorf("exit 137: %q, %d", line, st)
	}
}
