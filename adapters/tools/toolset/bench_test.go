package toolset

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// BenchmarkGrepTool runs the grep tool, as the turn driver calls it (validate, execute,
// render, cap check), over $(go env GOROOT)/src; BenchmarkPlainRG is the baseline in the same
// run: `rg -n 'err != nil' .` as a person would type it, its output read and discarded.
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
	set, err := New(Config{Root: src, ArtifactDir: b.TempDir(), SessionID: "ses_bench"})
	if err != nil {
		b.Fatal(err)
	}
	var grep Tool
	for _, t := range set.Tools() {
		if t.Declaration().Name == NameGrep {
			grep = t
		}
	}
	args := json.RawMessage(`{"pattern":"` + benchPattern + `"}`)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		action, err := grep.Validate(args)
		if err != nil {
			b.Fatal(err)
		}
		res := grep.Execute(ctx, tools.Invocation{SessionID: "ses_bench", CallID: "c" + string(rune('a'+i%26)), Action: action, Arguments: args})
		if res.Outcome != tools.OutcomeCompleted {
			b.Fatalf("grep: %s %s", res.ErrorCode, res.Output)
		}
	}
}

func BenchmarkPlainRG(b *testing.B) {
	src := goSrc(b)
	for b.Loop() {
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
}
