package sandbox_test

import (
	"context"
	"os/exec"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/domain/sandbox"
)

// BenchmarkSandboxCost measures what the sandbox adds, against running the same command
// directly in the same run: assembling a session's sandbox (the probe of the system
// bubblewrap, then the resolution; once per turn), and running `bash -c true` confined (once
// per shell call).
func BenchmarkSandboxCost(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bubblewrap is not installed")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	ctx := context.Background()
	dir := b.TempDir()
	b.Run("baseline-bash", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("assemble", func(b *testing.B) {
		for b.Loop() {
			if _, err := adsandbox.Assemble(ctx, sandbox.Config{}, adsandbox.Request{Workspace: dir}, adsandbox.Probe{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	sess, err := adsandbox.Assemble(ctx, sandbox.Config{}, adsandbox.Request{Workspace: dir}, adsandbox.Probe{})
	if err != nil {
		b.Skip("the sandbox cannot be assembled here: ", err)
	}
	argv, err := sess.Launcher.Wrap([]string{bash, "-c", "true"}, dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("confined-bash", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
