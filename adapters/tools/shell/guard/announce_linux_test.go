package guard

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// The "pid P" line (docs/shell-execution.md, "The session guard"): a command that ends
// within announceAfter gets it in the same write as its report; a longer one gets it while
// it still runs, and its report afterwards. (A short command on a busy machine may take
// longer than announceAfter: it is tried a few times, and must come together once.)
func TestSessionGuardAnnouncement(t *testing.T) {
	s := startSession(t)
	short := 0
	for _, tc := range []struct {
		name   string
		script string
		long   bool
	}{
		{"ends at once", "exit 4", false},
		{"ends at once", "exit 4", false},
		{"ends at once", "exit 4", false},
		{"ends at once", "exit 4", false},
		{"ends at once", "exit 4", false},
		{"runs longer", "sleep 0.3; exit 4", true},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		s.send("/", []string{"sh", "-c", tc.script}, []string{"PATH=" + os.Getenv("PATH")}, w)
		w.Close()
		first := s.line()
		pid, err := strconv.Atoi(strings.TrimPrefix(first, ReplyPID+" "))
		if !strings.HasPrefix(first, ReplyPID+" ") || err != nil {
			t.Fatalf("%s: first reply %q", tc.name, first)
		}
		// The report came in the same write exactly when the command had ended.
		together := s.lines.Buffered() > 0
		if tc.long && together {
			t.Errorf("%s: reported together with its start", tc.name)
		}
		if !tc.long && together {
			short++
		}
		if tc.long && !alive(pid) {
			t.Errorf("%s: announced only after it ended", tc.name)
		}
		if report := s.line(); !strings.HasPrefix(report, "exit 4 ") {
			t.Errorf("%s: report %q", tc.name, report)
		}
		r.Close()
	}
	if short == 0 {
		t.Error("no short command was reported with its start")
	}
}
