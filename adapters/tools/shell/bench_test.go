package shell

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkGuardedRun measures one guarded `true` against the baseline of running bash
// directly in the same run: the guard's cost is the ratio. guarded runs it under the
// dedicated zuno-guard (TestMain installs it beside the test binary), guarded-self under
// this binary re-executed, the fallback (the file beside is moved away for the case).
func BenchmarkGuardedRun(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	b.Run("baseline-bash", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	guarded := func(b *testing.B) {
		r := &Runner{}
		for b.Loop() {
			if _, err := r.Run(context.Background(), Request{Command: "true"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("guarded", guarded)
	b.Run("guarded-self", func(b *testing.B) {
		aside := guardBeside() + ".aside"
		if err := os.Rename(guardBeside(), aside); err != nil {
			b.Fatal(err)
		}
		defer os.Rename(aside, guardBeside())
		guarded(b)
	})
}
