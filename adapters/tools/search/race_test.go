//go:build linux

package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// raceCall is one glob or grep call of the swap race, named for the log.
type raceCall struct {
	name string
	run  func(s *Searcher) (Result, error)
}

// raceCalls are the spellings the swap race tries: the swapped directory as the path (the
// directory rg is started in), the root (rg walks into the swapped directory itself), and a
// file beneath the swapped directory.
var raceCalls = []raceCall{
	{"grep root", func(s *Searcher) (Result, error) {
		return s.Grep(context.Background(), GrepRequest{Pattern: "needle", Limit: 1000})
	}},
	{"glob sub", func(s *Searcher) (Result, error) {
		return s.Glob(context.Background(), GlobRequest{Pattern: "*", Path: "sub", Limit: 1000})
	}},
	{"grep sub", func(s *Searcher) (Result, error) {
		return s.Grep(context.Background(), GrepRequest{Pattern: "needle", Path: "sub", Context: 1, Limit: 1000})
	}},
	{"glob root", func(s *Searcher) (Result, error) {
		return s.Glob(context.Background(), GlobRequest{Pattern: "*", Limit: 1000})
	}},
	{"grep sub/f.txt", func(s *Searcher) (Result, error) {
		return s.Grep(context.Background(), GrepRequest{Pattern: "needle", Path: "sub/f.txt"})
	}},
	{"glob sub/deep", func(s *Searcher) (Result, error) {
		return s.Glob(context.Background(), GlobRequest{Pattern: "*.txt", Path: "sub/deep", Limit: 1000})
	}},
}

// outsideMarks are the bytes only the outside directory holds: its file content and the names
// that exist only there.
var outsideMarks = []string{"OUTSIDE", "SECRET", "secret-name", "only-outside"}

// TestSymlinkSwapRace (docs/tools.md, "Path authority" for glob and grep): while a goroutine
// swaps the workspace directory sub for a symbolic link to an outside directory and back in a
// tight loop, at least 1,000 glob and grep calls (half each) search the root, sub, a directory
// and a file below sub. No call returns an outside name or outside content: each either
// searches the real directory, or is refused, or leaves out what it cannot show to lie beneath
// the root. The outside directory has files of the same names as the inside one (other
// content) and files of its own, so both a leaked line and a leaked name would show. (Resolving
// the path by name and starting rg on the string, 44 of 600 calls leaked.)
func TestSymlinkSwapRace(t *testing.T) {
	needRG(t)
	root, outside := t.TempDir(), t.TempDir()
	for rel, content := range map[string]string{
		"sub/f.txt": "inside needle\nafter\n", "sub/deep/g.txt": "inside needle\n", "top.txt": "inside needle\n",
	} {
		writeFile(t, root, rel, content)
	}
	for rel, content := range map[string]string{
		"f.txt": "OUTSIDE needle\nSECRET after\n", "deep/g.txt": "OUTSIDE needle\n", "secret-name.txt": "SECRET needle\n",
		"deep/only-outside.txt": "SECRET needle\n", "only-outside/x.txt": "SECRET needle\n",
	} {
		writeFile(t, outside, rel, content)
	}
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	// sub and .swap (a link to outside) trade places atomically (renameat2 RENAME_EXCHANGE),
	// so sub is always there: the directory or the link.
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

	// At least n calls, and on until every spelling met the swap and reached the real
	// directory (on a loaded machine the swapper may get little time), within a bound.
	const n = 1000
	var calls, leaked, refused, dropped atomic.Int64
	inside, leakedBy := make([]atomic.Int64, len(raceCalls)), make([]atomic.Int64, len(raceCalls))
	exercised := func() bool {
		if swaps.Load() < 100 {
			return false
		}
		for i := range inside {
			if inside[i].Load() == 0 {
				return false
			}
		}
		return true
	}
	var mu sync.Mutex
	var leaks []string
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n || (!exercised() && time.Now().Before(deadline)); i += 4 {
				c := raceCalls[i%len(raceCalls)]
				r, err := c.run(s)
				calls.Add(1)
				if err != nil {
					refused.Add(1)
					continue
				}
				dropped.Add(int64(r.Outside))
				if mark := leakIn(r); mark != "" {
					leaked.Add(1)
					leakedBy[i%len(raceCalls)].Add(1)
					mu.Lock()
					if len(leaks) < 5 {
						leaks = append(leaks, fmt.Sprintf("%s returned %q:\n%s", c.name, mark, r.Output))
					}
					mu.Unlock()
					continue
				}
				if strings.Contains(r.Output, "inside") || strings.Contains(r.Output, "f.txt") || strings.Contains(r.Output, "g.txt") {
					inside[i%len(raceCalls)].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-done

	var per []string
	for i, c := range raceCalls {
		per = append(per, fmt.Sprintf("%s %d (%d leaked)", c.name, inside[i].Load(), leakedBy[i].Load()))
	}
	t.Logf("%d swaps; %d calls: %d leaked, %d refused, %d results left out as not beneath the root; answered from inside: %s",
		swaps.Load(), calls.Load(), leaked.Load(), refused.Load(), dropped.Load(), strings.Join(per, ", "))
	if leaked.Load() != 0 {
		t.Errorf("%d of %d calls returned outside names or content; first ones:\n%s", leaked.Load(), calls.Load(), strings.Join(leaks, "\n"))
	}
	if calls.Load() < n || !exercised() {
		t.Errorf("the race was not exercised: %d calls, %d swaps, answered from inside: %s", calls.Load(), swaps.Load(), strings.Join(per, ", "))
	}
}

// leakIn returns the first outside mark in a result's output, paths or lines.
func leakIn(r Result) string {
	texts := append([]string{r.Output}, r.Paths...)
	for _, m := range r.Matches {
		texts = append(texts, m.Path, m.Text)
	}
	for _, s := range texts {
		for _, mark := range outsideMarks {
			if strings.Contains(s, mark) {
				return mark
			}
		}
	}
	return ""
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
