package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
)

// Review attack: a confined command that starts a daemon of its own session and then kills
// what it sees as its parent and the pid namespace's first process (kill -9 $PPID, kill -9 1),
// as an unconfined one can kill its guard (docs/shell-execution.md, "The guard dies"). The
// guard is not visible in the namespace, and nothing of the command outlives the call.
func TestConfinedCommandCannotShedItsGuard(t *testing.T) {
	ws := t.TempDir()
	sess := confined(t, ws, "", false)
	m := marker()
	r := &shell.Runner{Root: ws, Launcher: sess.Launcher, KillGrace: 200 * time.Millisecond}
	cmd := fmt.Sprintf("setsid sleep %s & (sleep %s &); sleep 0.1; kill -9 $PPID; kill -9 1; sleep %s", m, m, m)
	res, err := r.Run(context.Background(), shell.Request{Command: cmd, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Authoritative && res.ExitCode == 0 {
		t.Fatalf("%+v", res)
	}
	assertNoneLeft(t, m)
}
