package search

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// The benchmarks search $(go env GOROOT)/src. BenchmarkRawRG is the baseline: plain rg with
// exactly the arguments Grep (or Glob) passes, its output read and thrown away.

const benchPattern = "err != nil"

func benchRoot(b *testing.B) string {
	b.Helper()
	needRG(b)
	root := ""
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(out))
	}
	if root == "" {
		root = runtime.GOROOT()
	}
	src := filepath.Join(root, "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("SKIP: no Go source tree at %s", src)
	}
	return src
}

func BenchmarkGrep(b *testing.B) {
	s, err := New(benchRoot(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var r Result
	for b.Loop() {
		if r, err = s.Grep(ctx, GrepRequest{Pattern: benchPattern}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Found), "matches")
}

func BenchmarkRawRG(b *testing.B) {
	rawRG(b, append(grepArgs(GrepRequest{Pattern: benchPattern}), "--", "."))
}

func BenchmarkGlob(b *testing.B) {
	s, err := New(benchRoot(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var r Result
	for b.Loop() {
		if r, err = s.Glob(ctx, GlobRequest{Pattern: "*.go"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Found), "files")
}

func BenchmarkRawRGFiles(b *testing.B) {
	rawRG(b, append(globArgs("*.go"), "--", "."))
}

// BenchmarkVsRawRG alternates a call and the plain rg run it makes in one loop, so that both
// see the same machine load, and reports the ratio of their medians: the figure to hold
// under 1.15. "err != nil" is a common pattern (~24k matches, 6 MB of rg JSON); "func" is a
// heavy one (~135k matches, 39 MB).
func BenchmarkVsRawRG(b *testing.B) {
	for _, pattern := range []string{benchPattern, "func"} {
		b.Run("grep "+pattern, func(b *testing.B) {
			paired(b, append(grepArgs(GrepRequest{Pattern: pattern}), "--", "."), func(s *Searcher) error {
				_, err := s.Grep(context.Background(), GrepRequest{Pattern: pattern})
				return err
			})
		})
	}
	b.Run("glob *.go", func(b *testing.B) {
		paired(b, append(globArgs("*.go"), "--", "."), func(s *Searcher) error {
			_, err := s.Glob(context.Background(), GlobRequest{Pattern: "*.go"})
			return err
		})
	})
}

func paired(b *testing.B, args []string, call func(*Searcher) error) {
	src := benchRoot(b)
	s, err := New(src)
	if err != nil {
		b.Fatal(err)
	}
	var ours, raw []time.Duration
	i := 0
	for b.Loop() {
		viaSearch := func() {
			t := time.Now()
			if err := call(s); err != nil {
				b.Fatal(err)
			}
			ours = append(ours, time.Since(t))
		}
		plain := func() {
			t := time.Now()
			runRG(b, src, args)
			raw = append(raw, time.Since(t))
		}
		if i%2 == 0 {
			viaSearch()
			plain()
		} else {
			plain()
			viaSearch()
		}
		i++
	}
	mo, mr := median(ours), median(raw)
	b.ReportMetric(float64(mo.Microseconds())/1000, "search-ms")
	b.ReportMetric(float64(mr.Microseconds())/1000, "rawrg-ms")
	b.ReportMetric(float64(mo)/float64(mr), "ratio")
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func rawRG(b *testing.B, args []string) {
	src := benchRoot(b)
	for b.Loop() {
		runRG(b, src, args)
	}
}

func runRG(b *testing.B, dir string, args []string) {
	cmd := exec.Command("rg", args...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, out); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
}
