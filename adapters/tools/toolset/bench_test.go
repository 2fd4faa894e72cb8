package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/tools"
)

// BenchmarkGrepTool runs the grep tool, as the turn driver calls it (validate, execute,
// render, cap check), over $(go env GOROOT)/src; BenchmarkPlainRG is the baseline: `rg -n
// 'err != nil' .` as a person would type it, its output read and discarded.
// BenchmarkGrepToolVsRG runs both interleaved and reports their ratio.
const benchPattern = "err != nil"

func goSrc(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("SKIP: rg is not installed")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("SKIP: go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("SKIP: no Go source tree at %s", src)
	}
	return src
}

func BenchmarkGrepTool(b *testing.B) {
	src := goSrc(b)
	grep := benchGrepTool(b, src)
	args := json.RawMessage(`{"pattern":"` + benchPattern + `"}`)
	for i := 0; b.Loop(); i++ {
		runGrepTool(b, grep, args, i)
	}
}

func BenchmarkPlainRG(b *testing.B) {
	src := goSrc(b)
	for b.Loop() {
		runPlainRG(b, src)
	}
}

// BenchmarkGrepToolVsRG alternates the two in one loop, so a disk or CPU that changes speed
// during the run affects both alike, and reports the ratio of their medians.
func BenchmarkGrepToolVsRG(b *testing.B) {
	src := goSrc(b)
	grep := benchGrepTool(b, src)
	args := json.RawMessage(`{"pattern":"` + benchPattern + `"}`)
	var tool, rg []time.Duration
	for i := 0; b.Loop(); i++ {
		timed := func(into *[]time.Duration, f func()) {
			t := time.Now()
			f()
			*into = append(*into, time.Since(t))
		}
		first, second := func() { timed(&tool, func() { runGrepTool(b, grep, args, i) }) }, func() { timed(&rg, func() { runPlainRG(b, src) }) }
		if i%2 == 1 {
			first, second = second, first
		}
		first()
		second()
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	t, r := med(tool), med(rg)
	b.ReportMetric(t, "tool-ms")
	b.ReportMetric(r, "rg-ms")
	b.ReportMetric(t/r, "ratio")
}

func benchGrepTool(b *testing.B, src string) Tool {
	set, err := New(Config{Root: src, ArtifactDir: b.TempDir(), SessionID: "ses_bench"})
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range set.Tools() {
		if t.Declaration().Name == tools.NameGrep {
			return t
		}
	}
	b.Fatal("no grep tool")
	return nil
}

// runGrepTool calls the tool as the turn driver does: validate, then execute.
func runGrepTool(b *testing.B, grep Tool, args json.RawMessage, i int) {
	parsed, err := grep.Validate(args)
	if err != nil {
		b.Fatal(err)
	}
	res := grep.Execute(context.Background(), tools.Invocation{SessionID: "ses_bench", CallID: fmt.Sprintf("c%d", i), Parsed: parsed})
	if res.Outcome != tools.OutcomeCompleted {
		b.Fatalf("grep: %s %s", res.ErrorCode, res.Output)
	}
}

func runPlainRG(b *testing.B, src string) {
	cmd := exec.Command("rg", "-n", benchPattern, ".")
	cmd.Dir = src
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
}
