package shell

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkGuardedRun measures one guarded `true` against the baseline of running bash
// directly in the same run: the guard's cost is the ratio.
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
	b.Run("guarded", func(b *testing.B) {
		r := &Runner{}
		for b.Loop() {
			if _, err := r.Run(context.Background(), Request{Command: "true"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
