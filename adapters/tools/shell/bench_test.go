package shell

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkGuardedRun measures one `true` through the runner under the session guard and
// under the per-command guard (this test binary re-executed: the fallback) against the
// baseline of running bash directly, in the same run (docs/shell-execution.md, "Cost").
// interleaved runs the baseline and the session guard in turn, one command each, so that
// the machine's changing load moves both alike; its ratio is the guard's cost.
func BenchmarkGuardedRun(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	direct := func(b *testing.B) {
		if err := exec.Command(bash, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	r := &Runner{}
	guarded := func(b *testing.B) {
		if res, err := r.Run(context.Background(), Request{Command: "true"}); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
	b.Run("baseline-bash", func(b *testing.B) {
		for b.Loop() {
			direct(b)
		}
	})
	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			guarded(b)
		}
	})
	b.Run("per-command", func(b *testing.B) {
		setPerCommand(true)
		defer setPerCommand(false)
		for b.Loop() {
			guarded(b)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var bashTime, sessionTime time.Duration
		for b.Loop() {
			t0 := time.Now()
			direct(b)
			t1 := time.Now()
			guarded(b)
			bashTime += t1.Sub(t0)
			sessionTime += time.Since(t1)
		}
		b.ReportMetric(float64(bashTime.Nanoseconds())/float64(b.N), "bash-ns/op")
		b.ReportMetric(float64(sessionTime.Nanoseconds())/float64(b.N), "session-ns/op")
		b.ReportMetric(float64(sessionTime)/float64(bashTime), "session/bash")
	})
}
