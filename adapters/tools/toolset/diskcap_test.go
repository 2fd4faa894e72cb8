package toolset

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// An endless command is stopped at the per-call disk cap: the typed refusal says what was
// kept, where, and its digest, and the artifact holds exactly those bytes (issue 30: `yes`
// for 20 s once left a 7.26 GB artifact).
func TestShellStoppedAtTheArtifactCap(t *testing.T) {
	const keep = 2 << 20
	s, _ := newSet(t, func(c *Config) { c.MaxArtifactBytes = keep })
	r := callID(t, s, tools.NameShell, "yes", args("command", "yes"))
	want(t, r, tools.OutcomeUncertain, string(CodeArtifactCapReached))
	if len(r.Metadata.OutputPaths) != 1 {
		t.Fatalf("no artifact: %s", r.Output)
	}
	data, err := os.ReadFile(r.Metadata.OutputPaths[0])
	if err != nil || len(data) != keep {
		t.Fatalf("artifact holds %d bytes (%v), want %d", len(data), err, keep)
	}
	sum := sha256.Sum256(data)
	for _, part := range []string{"tool_output.max_artifact_bytes (" + strconv.Itoa(keep) + " bytes)", "first " + strconv.Itoa(keep) + " bytes",
		hex.EncodeToString(sum[:]), r.Metadata.OutputPaths[0]} {
		if !strings.Contains(r.Output, part) {
			t.Errorf("refusal lacks %q:\n%s", part, r.Output)
		}
	}
}

// The session's cap counts what its artifact directory and background logs already hold: a
// command gets what is left, and none is run once nothing is.
func TestShellUnderTheSessionCap(t *testing.T) {
	logs := t.TempDir()
	if err := os.WriteFile(filepath.Join(logs, "bg_1.log"), make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := newSet(t, func(c *Config) {
		c.MaxSessionArtifactBytes, c.UsageDirs = 4<<20, []string{logs}
	})
	r := callID(t, s, tools.NameShell, "first", args("command", "yes"))
	want(t, r, tools.OutcomeUncertain, string(CodeArtifactCapReached))
	if !strings.Contains(r.Output, "tool_output.max_session_artifact_bytes (1048576 bytes)") {
		t.Fatalf("refusal names another cap:\n%s", r.Output)
	}
	r = callID(t, s, tools.NameShell, "second", args("command", "echo hi > ran"))
	want(t, r, tools.OutcomeError, string(CodeSessionArtifactCap))
	if _, err := os.Stat(filepath.Join(s.root, "ran")); err == nil {
		t.Fatal("the command ran past the session's cap")
	}
}
