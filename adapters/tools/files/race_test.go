package files

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

// TestSymlinkSwapRace: while a goroutine swaps the workspace directory sub for a symbolic link
// to an outside directory and back in a tight loop, 1,000 reads and 1,000 writes go through the
// Workspace. A call either reaches the real sub or fails: no read returns the outside bytes, no
// write lands outside, and no temporary file is left anywhere. (Resolving by name, this leaked
// 31 of 1,200 reads and 29 of 1,200 writes.)
func TestSymlinkSwapRace(t *testing.T) {
	bothWalks(t, func(t *testing.T) {
		w, root := newWS(t)
		outside := t.TempDir()
		put(t, root, "sub/f.txt", "inside\n")
		put(t, outside, "f.txt", "OUTSIDE\n")
		// sub and .swap (a link to outside) trade places atomically (renameat2 RENAME_EXCHANGE),
		// so sub is always there: the directory or the link.
		sub, swap := filepath.Join(root, "sub"), filepath.Join(root, ".swap")
		if err := os.Symlink(outside, swap); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var swaps atomic.Int64
		done := make(chan struct{})
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

		// At least n calls, and on until the race was exercised (the swapper and the calls
		// share the cores: on a loaded machine 1,000 calls may meet few swaps), within a bound.
		const n = 1000
		var leakedReads, okReads, okWrites, refused atomic.Int64
		exercised := func() bool { return swaps.Load() >= 100 && okReads.Load() > 0 && okWrites.Load() > 0 }
		deadline := time.Now().Add(20 * time.Second)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < n || (!exercised() && time.Now().Before(deadline)); i += 4 {
					r, err := w.Read(context.Background(), ReadRequest{Path: "sub/f.txt"})
					switch {
					case err != nil:
						refused.Add(1)
					case r.Content == "OUTSIDE\n":
						leakedReads.Add(1)
					case r.Content == "inside\n":
						okReads.Add(1)
					default:
						t.Errorf("read returned %q", r.Content)
					}
					_, err = w.Write(context.Background(), fmt.Sprintf("sub/w%d.txt", i), []byte("w\n"))
					if err == nil {
						okWrites.Add(1)
					} else {
						refused.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		<-done

		entries, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		var landedOutside []string
		for _, e := range entries {
			if e.Name() != "f.txt" {
				landedOutside = append(landedOutside, e.Name())
			}
		}
		if get(t, outside, "f.txt") != "OUTSIDE\n" {
			t.Error("the outside file was changed")
		}
		if leakedReads.Load() != 0 || len(landedOutside) != 0 {
			t.Errorf("%d reads returned outside content; %d entries appeared outside: %v", leakedReads.Load(), len(landedOutside), landedOutside)
		}
		// Every write reported done is inside the root, in the real directory (named sub or
		// .swap now).
		inside := 0
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "w") {
				inside++
			}
			return nil
		})
		if int64(inside) != okWrites.Load() {
			t.Errorf("%d writes reported done, %d files inside", okWrites.Load(), inside)
		}
		assertNoTemp(t, root)
		assertNoTemp(t, outside)
		t.Logf("%d swaps; reads: %d inside, %d leaked; writes: %d inside, %d outside; %d calls refused",
			swaps.Load(), okReads.Load(), leakedReads.Load(), okWrites.Load(), len(landedOutside), refused.Load())
		if swaps.Load() < 100 || okReads.Load() == 0 || okWrites.Load() == 0 {
			t.Errorf("the race was not exercised: %d swaps, %d reads and %d writes reached the directory", swaps.Load(), okReads.Load(), okWrites.Load())
		}
	})
}
