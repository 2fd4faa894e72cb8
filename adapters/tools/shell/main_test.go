package shell

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

// TestMain installs the dedicated guard beside this test binary, as `make build` and
// `go install` install zuno-guard beside zuno: every test of this package then runs its
// commands under the program production runs (guard.Program). The fallback, this binary
// re-executed, is what every other package's tests run (no zuno-guard beside them) and what
// BenchmarkGuardedRun's self case measures.
func TestMain(m *testing.M) {
	if err := installGuard(); err != nil {
		fmt.Fprintln(os.Stderr, "installing zuno-guard beside the test binary:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// guardBeside is where TestMain installs the dedicated guard.
func guardBeside() string {
	self, _ := os.Executable()
	return filepath.Join(filepath.Dir(self), guard.ProgramName)
}

func installGuard() error {
	gobin, err := exec.LookPath("go")
	if err != nil { // go test ran with a go that is not on PATH: its GOROOT's
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(gobin, "build", "-o", guardBeside(), "github.com/zuno-run/zuno/cmd/zuno-guard").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// The commands of this package run under the dedicated guard: the command's parent is
// zuno-guard, not this binary.
func TestCommandsRunUnderTheDedicatedGuard(t *testing.T) {
	if got := guard.Program(); got != guardBeside() {
		t.Fatalf("guard program %q, want the one beside the binary %q", got, guardBeside())
	}
	res := run(t, nil, Request{Command: `readlink /proc/$PPID/exe`})
	if res.ExitCode != 0 || filepath.Base(strings.TrimSpace(string(res.Output))) != guard.ProgramName {
		t.Fatalf("the command's parent is %q (exit %d)", res.Output, res.ExitCode)
	}
}
