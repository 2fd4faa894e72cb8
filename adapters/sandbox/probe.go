// Package sandbox is the Linux sandbox backend: it finds and verifies the system bubblewrap
// (a trusted launcher, version 0.8.0 or newer, able to create the namespaces the sandbox
// needs), builds the bwrap argv that confines one shell command as a resolution asks, and
// assembles a session's launcher from the pure resolver's answer (domain/sandbox). See
// docs/sandbox.md.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// SystemLaunchers are where the system bubblewrap is looked for, in PATH order. PATH itself
// is not consulted: whatever comes first in a user's PATH could impersonate the launcher.
var SystemLaunchers = []string{"/usr/local/bin/bwrap", "/usr/bin/bwrap", "/bin/bwrap"}

// MinVersion is the oldest bubblewrap with --disable-userns and --assert-userns-disabled.
var MinVersion = [3]int{0, 8, 0}

// probeTimeout bounds each probe command; a launcher that hangs is a helper error.
const probeTimeout = 10 * time.Second

// Probe finds and verifies the launcher. The zero value probes the system launchers.
type Probe struct {
	// Launcher, when set, is the only candidate (for diagnostics and tests); it is held to
	// the same trust rules as a system one.
	Launcher string
}

// Status is the probe's answer: zuno debug sandbox prints it as the `ready` check.
type Status struct {
	Ready    bool           `json:"ready"`
	Launcher string         `json:"launcher,omitempty"`
	Version  string         `json:"version,omitempty"`
	Reason   sandbox.Reason `json:"reason"`
}

// Availability is the typed answer the resolver reads.
func (s Status) Availability() sandbox.Availability {
	return sandbox.Availability{Ready: s.Ready, Reason: s.Reason}
}

// Check verifies the requested OS confinement: a trusted launcher of a recent enough version
// that can create the sandbox's namespaces.
func (p Probe) Check(ctx context.Context) Status {
	candidates := SystemLaunchers
	if p.Launcher != "" {
		candidates = []string{p.Launcher}
	}
	path := ""
	for _, c := range candidates {
		if _, err := os.Lstat(c); err == nil {
			path = c
			break
		}
	}
	if path == "" {
		return Status{Reason: sandbox.Reason{Code: sandbox.ReasonNoTrustedLauncher,
			Text: "no trusted system bubblewrap executable was found (looked at " + strings.Join(candidates, ", ") + ")"}}
	}
	st := Status{Launcher: path}
	if err := Trusted(path); err != nil {
		st.Reason = sandbox.Reason{Code: sandbox.ReasonUntrustedLauncher,
			Text: fmt.Sprintf("the bubblewrap at %s is present but not trusted: %v; make it and every directory above it root-owned and not writable by group or others", path, err)}
		return st
	}
	version, reason := launcherVersion(ctx, path)
	st.Version = version
	if reason != nil {
		st.Reason = *reason
		return st
	}
	if reason := capabilityProbe(ctx, path); reason != nil {
		st.Reason = *reason
		return st
	}
	st.Ready = true
	st.Reason = sandbox.Reason{Code: sandbox.ReasonConfinedReady, Text: fmt.Sprintf("bubblewrap %s at %s can confine commands", version, path)}
	return st
}

// Trusted says whether path may be run as the sandbox launcher: after resolving symbolic
// links it is a regular executable file owned by root and not writable by group or others,
// and every directory above it (and above the path as given) is owned by root and is either
// not writable by group or others or sticky (so no other user can replace root's entries).
func Trusted(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s is not an absolute path", path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable regular file", real)
	}
	if err := rootOwned(real, fi, false); err != nil {
		return err
	}
	for _, p := range []string{filepath.Dir(path), filepath.Dir(real)} {
		for dir := p; ; dir = filepath.Dir(dir) {
			di, err := os.Stat(dir)
			if err != nil {
				return err
			}
			if err := rootOwned(dir, di, true); err != nil {
				return err
			}
			if dir == "/" {
				break
			}
		}
	}
	return nil
}

func rootOwned(path string, fi os.FileInfo, stickyOK bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: owner unknown", path)
	}
	if st.Uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not root", path, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 && !(stickyOK && fi.Mode()&os.ModeSticky != 0) {
		return fmt.Errorf("%s is writable by group or others (mode %v)", path, fi.Mode())
	}
	return nil
}

var versionRE = regexp.MustCompile(`^bubblewrap (\d+)\.(\d+)(?:\.(\d+))?`)

// ParseVersion reads `bwrap --version` output ("bubblewrap 0.8.0").
func ParseVersion(out string) ([3]int, bool) {
	m := versionRE.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := 0; i < 3; i++ {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.Atoi(m[i+1])
		if err != nil || n > 1<<20 {
			return [3]int{}, false
		}
		v[i] = n
	}
	return v, true
}

func atLeast(v, min [3]int) bool {
	for i := range v {
		if v[i] != min[i] {
			return v[i] > min[i]
		}
	}
	return true
}

func launcherVersion(ctx context.Context, path string) (string, *sandbox.Reason) {
	out, err := runProbe(ctx, path, "--version")
	if err != nil {
		return "", &sandbox.Reason{Code: sandbox.ReasonHelper, Text: fmt.Sprintf("%s --version failed: %v: %s", path, err, firstLine(out))}
	}
	v, ok := ParseVersion(out)
	if !ok {
		return "", &sandbox.Reason{Code: sandbox.ReasonHelper, Text: fmt.Sprintf("%s --version printed %q, not a bubblewrap version", path, firstLine(out))}
	}
	version := fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
	if !atLeast(v, MinVersion) {
		return version, &sandbox.Reason{Code: sandbox.ReasonLauncherMissingCapability, Text: fmt.Sprintf(
			"the system bubblewrap at %s is %s, which lacks --disable-userns and --assert-userns-disabled (0.8.0 or newer is required)", path, version)}
	}
	return version, nil
}

// capabilityProbe runs `true` under the same namespace options every command gets, so a
// kernel or container that refuses them is found before the shell is assembled.
func capabilityProbe(ctx context.Context, path string) *sandbox.Reason {
	args := append(namespaceArgs(true), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true")
	out, err := runProbe(ctx, path, args...)
	if err == nil {
		return nil
	}
	r := ClassifyFailure(out)
	r.Text = fmt.Sprintf("the bubblewrap capability probe failed (%s): %s", err, r.Text)
	return &r
}

// ClassifyFailure maps bwrap's error output to a typed reason. Namespace refusals by the
// kernel or a container policy, and options this bwrap does not know, are eligible for the
// fallback; anything else (seccomp, a helper failure) is not.
func ClassifyFailure(stderr string) sandbox.Reason {
	line := firstLine(stderr)
	lower := strings.ToLower(stderr)
	switch {
	case strings.Contains(lower, "no permissions to create new namespace"),
		strings.Contains(lower, "creating new namespace failed"),
		strings.Contains(lower, "setting up uid map"),
		strings.Contains(lower, "user namespaces are not enabled"),
		strings.Contains(lower, "operation not permitted"):
		return sandbox.Reason{Code: sandbox.ReasonNamespacePolicy, Text: line +
			" (the kernel or the container refuses the namespaces the sandbox needs; a newer bubblewrap does not help)"}
	case strings.Contains(lower, "unknown option"), strings.Contains(lower, "unrecognized option"), strings.Contains(lower, "requires --unshare-user"):
		return sandbox.Reason{Code: sandbox.ReasonLauncherMissingCapability, Text: line}
	case strings.Contains(lower, "seccomp"):
		return sandbox.Reason{Code: sandbox.ReasonSeccomp, Text: line}
	}
	if line == "" {
		line = "no error output"
	}
	return sandbox.Reason{Code: sandbox.ReasonHelper, Text: line}
}

func runProbe(ctx context.Context, path string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", probeTimeout)
	}
	return out.String(), err
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
