package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
)

// requireBwrap returns the system launcher's status, or skips (visibly, with the reason)
// when bubblewrap or user namespaces are missing. Under CI=true a missing or too old
// bubblewrap fails: CI installs it (.ci/run). Any other failure fails everywhere.
func requireBwrap(t *testing.T) adsandbox.Status {
	t.Helper()
	st := adsandbox.Probe{}.Check(context.Background())
	if st.Ready {
		return st
	}
	switch st.Reason.Code {
	case sandbox.ReasonNoTrustedLauncher, sandbox.ReasonLauncherMissingCapability:
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but the system bubblewrap is unusable: %s", st.Reason.Text)
		}
		t.Skipf("SKIP: no usable system bubblewrap: %s", st.Reason.Text)
	case sandbox.ReasonNamespacePolicy:
		t.Skipf("SKIP: user namespaces are not available here: %s", st.Reason.Text)
	}
	t.Fatalf("the system bubblewrap probe failed: %+v", st)
	return st
}

func mergeGlobal(t *testing.T, js string) sandbox.Config {
	t.Helper()
	var layers []settings.Raw
	if js != "" {
		layers = []settings.Raw{{Layer: settings.Global, Source: "test", JSON: json.RawMessage(js)}}
	}
	cfg, err := sandbox.Merge(layers)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// confined assembles a session over ws with the system bubblewrap.
func confined(t *testing.T, ws, js string, readOnly bool) adsandbox.Session {
	t.Helper()
	requireBwrap(t)
	sess, err := adsandbox.Assemble(context.Background(), mergeGlobal(t, js),
		adsandbox.Request{Workspace: ws, ReadOnlyAgent: readOnly, Platform: "linux"}, adsandbox.Probe{})
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	if sess.Resolution.ResolutionKind != sandbox.KindConfined {
		t.Fatalf("not confined: %+v", sess.Resolution)
	}
	return sess
}

// runIn runs command under the session's launcher with the shell runner.
func runIn(t *testing.T, sess adsandbox.Session, ws, command string, env ...string) shell.Result {
	t.Helper()
	r := &shell.Runner{Root: ws, Launcher: sess.Launcher}
	if env != nil {
		r.BaseEnv = func() []string { return env }
	}
	res, err := r.Run(context.Background(), shell.Request{Command: command, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res
}

// hostDir is a directory outside the workspace and outside /tmp (which is the sandbox's own
// tmpfs), so a write that got through would be visible on the host.
func hostDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "zuno-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// fakeLauncher writes an executable bwrap script into a root-owned 0755 directory.
func fakeLauncher(t *testing.T, script string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "bwrap")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// processesWithArgs lists host pids whose command line contains marker as one argument.
func processesWithArgs(marker string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == marker {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func assertNoneLeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesWithArgs(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes with %q still running after the kill: %v", marker, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
