package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/domain/sandbox"
)

const version08 = "if [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\n"

// TestFallbackOnlyForEligibleErrors drives Assemble with fake launchers: the typed reason
// each one produces, and whether trusted run-unconfined falls back for it.
func TestFallbackOnlyForEligibleErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		launcher func(t *testing.T) string
		reason   sandbox.ReasonCode
		fallback bool
	}{
		{"no launcher at all: eligible", func(t *testing.T) string { return filepath.Join(t.TempDir(), "bwrap") },
			sandbox.ReasonNoTrustedLauncher, true},
		{"user namespaces refused by the kernel or container: eligible", func(t *testing.T) string {
			return fakeLauncher(t, version08+"echo 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2; exit 1\n")
		}, sandbox.ReasonNamespacePolicy, true},
		{"bubblewrap 0.6.1 (Ubuntu 22.04): missing capability, eligible", func(t *testing.T) string {
			return fakeLauncher(t, "echo 'bubblewrap 0.6.1'; exit 0\n")
		}, sandbox.ReasonLauncherMissingCapability, true},
		{"an option the launcher does not know: missing capability, eligible", func(t *testing.T) string {
			return fakeLauncher(t, version08+"echo 'bwrap: Unknown option --assert-userns-disabled' >&2; exit 1\n")
		}, sandbox.ReasonLauncherMissingCapability, true},
		{"present but world-writable: untrusted, never falls back", func(t *testing.T) string {
			p := fakeLauncher(t, version08+"exit 0\n")
			os.Chmod(p, 0o777)
			return p
		}, sandbox.ReasonUntrustedLauncher, false},
		{"present in a group-writable directory: untrusted, never falls back", func(t *testing.T) string {
			p := fakeLauncher(t, version08+"exit 0\n")
			os.Chmod(filepath.Dir(p), 0o775)
			return p
		}, sandbox.ReasonUntrustedLauncher, false},
		{"present but owned by another user: untrusted, never falls back", func(t *testing.T) string {
			p := fakeLauncher(t, version08+"exit 0\n")
			if err := os.Chown(p, 1000, 1000); err != nil {
				t.Skipf("SKIP: cannot chown (not root): %v", err)
			}
			return p
		}, sandbox.ReasonUntrustedLauncher, false},
		{"a seccomp failure: never falls back", func(t *testing.T) string {
			return fakeLauncher(t, version08+"echo 'bwrap: prctl(PR_SET_SECCOMP): Invalid argument' >&2; exit 1\n")
		}, sandbox.ReasonSeccomp, false},
		{"any other helper failure: never falls back", func(t *testing.T) string {
			return fakeLauncher(t, version08+"echo 'bwrap: Can't mount proc on /newroot/proc: Device or resource busy' >&2; exit 1\n")
		}, sandbox.ReasonHelper, false},
		{"a version it cannot read: helper error, never falls back", func(t *testing.T) string {
			return fakeLauncher(t, "echo 'not bwrap'; exit 0\n")
		}, sandbox.ReasonHelper, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := adsandbox.Probe{Launcher: tc.launcher(t)}
			st := probe.Check(context.Background())
			if st.Ready || st.Reason.Code != tc.reason {
				t.Fatalf("status %+v, want reason %s", st, tc.reason)
			}
			ws := t.TempDir()
			sess, err := adsandbox.Assemble(context.Background(), mergeGlobal(t, `{"onUnavailable": "run-unconfined"}`),
				adsandbox.Request{Workspace: ws, Platform: "linux"}, probe)
			if tc.fallback {
				if err != nil || sess.Resolution.ResolutionKind != sandbox.KindFallback || sess.Resolution.Warning == "" {
					t.Fatalf("want the fallback: %+v, %v", sess.Resolution, err)
				}
				if _, native := sess.Launcher.(adsandbox.Native); !native {
					t.Fatalf("fallback launcher %T", sess.Launcher)
				}
			} else {
				var r *sandbox.Refusal
				if !errors.As(err, &r) || r.Reason.Code != tc.reason || sess.Launcher != nil {
					t.Fatalf("want a refusal for %s: %+v, %v", tc.reason, sess, err)
				}
			}
			// A read-only agent never falls back, whatever the reason.
			_, err = adsandbox.Assemble(context.Background(), mergeGlobal(t, `{"onUnavailable": "run-unconfined"}`),
				adsandbox.Request{Workspace: ws, Platform: "linux", ReadOnlyAgent: true}, probe)
			var r *sandbox.Refusal
			if !errors.As(err, &r) || !strings.Contains(err.Error(), "Read-only requests never fall back") {
				t.Fatalf("read-only: %v", err)
			}
			// onUnavailable deny (the default) stops assembly for every reason.
			if _, err := adsandbox.Assemble(context.Background(), mergeGlobal(t, ""), adsandbox.Request{Workspace: ws, Platform: "linux"}, probe); !errors.As(err, &r) {
				t.Fatalf("default deny: %v", err)
			}
		})
	}
}

func TestTrusted(t *testing.T) {
	good := fakeLauncher(t, "exit 0\n")
	link := filepath.Join(t.TempDir(), "bwrap-link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	noExec := fakeLauncher(t, "exit 0\n")
	os.Chmod(noExec, 0o644)
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{good, true},
		{link, true},
		{"bwrap", false},
		{"usr/bin/bwrap", false},
		{noExec, false},
		{filepath.Dir(good), false},
	} {
		if err := adsandbox.Trusted(tc.path); (err == nil) != tc.ok {
			t.Errorf("Trusted(%s) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
	if _, err := os.Stat("/usr/bin/bwrap"); err == nil {
		if err := adsandbox.Trusted("/usr/bin/bwrap"); err != nil {
			t.Errorf("the system bwrap is not trusted: %v", err)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [3]int
		ok   bool
	}{
		{"bubblewrap 0.8.0\n", [3]int{0, 8, 0}, true},
		{"bubblewrap 0.11.0", [3]int{0, 11, 0}, true},
		{"bubblewrap 1.0", [3]int{1, 0, 0}, true},
		{"bubblewrap 0.6.1", [3]int{0, 6, 1}, true},
		{"bwrap 0.8.0", [3]int{}, false},
		{"", [3]int{}, false},
		{"bubblewrap 99999999999999999999.0.0", [3]int{}, false},
	} {
		got, ok := adsandbox.ParseVersion(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseVersion(%q) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzClassifyAndParse(f *testing.F) {
	for _, s := range []string{"bubblewrap 0.8.0", "bwrap: No permissions to create new namespace", "bwrap: Unknown option --x", "seccomp", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := adsandbox.ClassifyFailure(s)
		if r.Code == "" || r.Text == "" || r.Code.FallbackEligible() && r.Code != sandbox.ReasonNamespacePolicy && r.Code != sandbox.ReasonLauncherMissingCapability {
			t.Fatalf("ClassifyFailure(%q) = %+v", s, r)
		}
		if v, ok := adsandbox.ParseVersion(s); ok && (v[0] < 0 || v[1] < 0 || v[2] < 0) {
			t.Fatalf("ParseVersion(%q) = %v", s, v)
		}
	})
}
