package toolset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
)

// recordingLauncher wraps with a prefix that only echoes the argv it would run.
type recordingLauncher struct {
	mu   sync.Mutex
	seen [][]string
}

func (l *recordingLauncher) Wrap(argv []string, dir string) ([]string, error) {
	l.mu.Lock()
	l.seen = append(l.seen, append([]string(nil), argv...))
	l.mu.Unlock()
	return append([]string{"/usr/bin/env", "WRAPPED_IN=" + dir}, argv...), nil
}

func TestShellRunsThroughTheSessionLauncher(t *testing.T) {
	l := &recordingLauncher{}
	res := sandbox.Resolution{RequestedMode: "workspace-write", ResolutionKind: sandbox.KindConfined}
	s, root := newSet(t, func(c *Config) { c.Sandbox = &ShellSandbox{Resolution: res, Launcher: l} })
	r := call(t, s, tools.NameShell, args("command", "echo $WRAPPED_IN"))
	if r.Outcome != tools.OutcomeCompleted || !strings.Contains(r.Output, filepath.Base(root)) || len(l.seen) != 1 {
		t.Fatalf("%+v seen=%v", r, l.seen)
	}
	sb, ok := toolNamed(t, s, tools.NameShell).(Sandboxed)
	if !ok || sb.Sandbox().ResolutionKind != sandbox.KindConfined {
		t.Fatalf("shell tool does not report its resolution")
	}
	if s.ShellRefusal() != nil {
		t.Fatal("refusal without one")
	}
}

type failingLauncher struct{}

func (failingLauncher) Wrap([]string, string) ([]string, error) {
	return nil, errors.New("bwrap vanished")
}

func TestShellLauncherFailureRunsNothing(t *testing.T) {
	s, root := newSet(t, func(c *Config) { c.Sandbox = &ShellSandbox{Launcher: failingLauncher{}} })
	r := call(t, s, tools.NameShell, args("command", "touch ran"))
	if r.Outcome != tools.OutcomeError || r.ErrorCode != "sandbox_failed" {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Fatal("the command ran without its sandbox")
	}
}

func TestRefusedShellIsNotOffered(t *testing.T) {
	refusal := &sandbox.Refusal{Reason: sandbox.Reason{Code: sandbox.ReasonNoTrustedLauncher, Text: "no trusted system bubblewrap executable was found"},
		RequestedMode: "workspace-write", Platform: "linux"}
	s, _ := newSet(t, func(c *Config) { c.Sandbox = &ShellSandbox{Refused: refusal} })
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Declaration().Name)
		if tl.Declaration().Name == tools.NameShell {
			t.Fatal("shell offered although the sandbox refused it")
		}
	}
	if len(names) != 6 || !errors.Is(s.ShellRefusal(), refusal) {
		t.Fatalf("tools %v, refusal %v", names, s.ShellRefusal())
	}
}

// TestShellToolConfinedByBubblewrap is the whole path with the real system bubblewrap.
func TestShellToolConfinedByBubblewrap(t *testing.T) {
	if st := (adsandbox.Probe{}).Check(context.Background()); !st.Ready {
		if os.Getenv("CI") == "true" && st.Reason.Code == sandbox.ReasonNoTrustedLauncher {
			t.Fatalf("CI=true but no bubblewrap: %s", st.Reason.Text)
		}
		t.Skipf("SKIP: no usable system bubblewrap: %s", st.Reason.Text)
	}
	outside, err := os.MkdirTemp("/var/tmp", "zuno-toolset-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	root := t.TempDir()
	cfg, _ := sandbox.Merge(nil)
	sess, err := adsandbox.Assemble(context.Background(), cfg, adsandbox.Request{Workspace: root, Platform: "linux"}, adsandbox.Probe{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Root: root, ArtifactDir: filepath.Join(t.TempDir(), "a"), SessionID: testSession,
		Sandbox: &ShellSandbox{Resolution: sess.Resolution, Launcher: sess.Launcher}})
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, s, tools.NameShell, args("command", "echo in > inside; echo out > "+outside+"/x"))
	if !strings.Contains(r.Output, "Read-only file system") || !strings.HasPrefix(r.Output, "Exit code 1") {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(filepath.Join(root, "inside")); err != nil {
		t.Fatal("workspace write failed")
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("write outside the workspace got through")
	}
}
