//go:build linux

package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zuno-run/zuno/domain/tools"
)

// TestSearchToolsSwapRace is issue 25's search race through the tools as the turn driver
// runs them (Validate, the gate's Subjects, Execute): a goroutine swaps the workspace
// directory sub for a symbolic link to an outside directory holding secrets, in a tight loop,
// while at least 1,000 glob and grep calls (half each) search the root, sub and a file in
// sub. No call's output names an outside file or shows an outside line.
func TestSearchToolsSwapRace(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("SKIP: ripgrep (rg) is not installed")
	}
	s, root := newSet(t)
	outside := t.TempDir()
	put(t, root, "sub/f.txt", "inside needle\n")
	put(t, root, "sub/deep/g.txt", "inside needle\n")
	put(t, outside, "f.txt", "OUTSIDE needle\n")
	put(t, outside, "deep/g.txt", "OUTSIDE needle\n")
	put(t, outside, "secret-name.txt", "SECRET needle\n")
	sub, swap := filepath.Join(root, "sub"), filepath.Join(root, ".swap")
	if err := os.Symlink(outside, swap); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	var swaps atomic.Int64
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			swaps.Add(1)
			runtime.Gosched()
		}
	}()

	calls := []struct{ tool, args string }{
		{tools.NameGrep, `{"pattern":"needle","limit":1000}`},
		{tools.NameGlob, `{"pattern":"*","path":"sub","limit":1000}`},
		{tools.NameGrep, `{"pattern":"needle","path":"sub"}`},
		{tools.NameGlob, `{"pattern":"*","limit":1000}`},
		{tools.NameGrep, `{"pattern":"needle","path":"sub/f.txt"}`},
		{tools.NameGlob, `{"pattern":"*.txt","path":"sub/deep"}`},
	}
	const n = 1000
	var total, leaked, blocked, failed, answered, leftOut atomic.Int64
	exercised := func() bool { return swaps.Load() >= 100 && answered.Load() >= int64(len(calls)) }
	var mu sync.Mutex
	var leaks []string
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n || (!exercised() && time.Now().Before(deadline)); i += 4 {
				c := calls[i%len(calls)]
				total.Add(1)
				tl := toolNamed(t, s, c.tool)
				parsed, err := tl.Validate(json.RawMessage(c.args))
				if err != nil {
					t.Errorf("%s %s: %v", c.tool, c.args, err)
					return
				}
				// The gate names the call's path first; a refusal there blocks the call.
				if _, err := tl.(tools.Subjecter).Subjects(parsed); err != nil {
					blocked.Add(1)
					continue
				}
				r := tl.Execute(context.Background(), tools.Invocation{SessionID: testSession, CallID: fmt.Sprintf("race-%d-%d", g, i), Parsed: parsed})
				if strings.Contains(r.Output, "OUTSIDE") || strings.Contains(r.Output, "SECRET") || strings.Contains(r.Output, "secret-name") {
					leaked.Add(1)
					mu.Lock()
					if len(leaks) < 3 {
						leaks = append(leaks, c.tool+" "+c.args+":\n"+r.Output)
					}
					mu.Unlock()
					continue
				}
				// A result left out by the check is counted in the details as well as said.
				if r.Outcome == tools.OutcomeCompleted && strings.Contains(r.Output, "left out because, checked again") {
					leftOut.Add(1)
					if n, _ := facts(t, r)["outside"].(float64); n < 1 {
						t.Errorf("%s %s: output says files were left out, details %s", c.tool, c.args, r.Metadata.Details)
					}
				}
				switch {
				case r.Outcome != tools.OutcomeCompleted:
					failed.Add(1)
				case strings.Contains(r.Output, "inside needle") || strings.Contains(r.Output, ".txt"):
					answered.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-done
	t.Logf("%d swaps; %d calls: %d leaked, %d blocked at the gate, %d refused by the tool, %d answered from inside, %d with results left out by the check",
		swaps.Load(), total.Load(), leaked.Load(), blocked.Load(), failed.Load(), answered.Load(), leftOut.Load())
	if leaked.Load() != 0 {
		t.Errorf("%d calls showed outside names or content:\n%s", leaked.Load(), strings.Join(leaks, "\n"))
	}
	if total.Load() < n || !exercised() {
		t.Errorf("the race was not exercised: %d calls, %d swaps, %d answered", total.Load(), swaps.Load(), answered.Load())
	}
}
