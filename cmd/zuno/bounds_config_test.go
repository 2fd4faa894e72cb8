package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/bounds"
)

// A trusted layer asking for limits past their ceilings gets the ceilings, said in a note;
// what is in effect is what a turn records and the tools are opened with (docs/config.md,
// "Bounds").
func TestToolOutputClampedToCeilings(t *testing.T) {
	global, _ := projectWorld(t, `{"tool_output": {"max_lines": 10}}`)
	lift := `{"tool_output": {"max_bytes": 2000000000, "max_lines": 1000000000, "max_artifact_bytes": 1000000000000, "max_session_artifact_bytes": 1000000000000}}`
	if err := os.WriteFile(filepath.Join(global, "zuno.json"), []byte(lift), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	got := c.settings().Bounds
	if got.MaxBytes != int(bounds.ToolOutputBytes.Ceiling) || got.MaxLines != 10 ||
		got.MaxArtifactBytes != bounds.ArtifactBytes.Ceiling || got.MaxSessionArtifactBytes != bounds.SessionBytes.Ceiling {
		t.Fatalf("in effect %+v", got)
	}
	if !slices.ContainsFunc(c.Notes, func(n string) bool {
		return strings.Contains(n, "tool_output.max_bytes is 2000000000 bytes, above its ceiling")
	}) {
		t.Fatalf("no note of the clamp: %q", c.Notes)
	}
}

// Unset, the defaults are in effect.
func TestToolOutputDefaultsInEffect(t *testing.T) {
	projectWorld(t, `{}`)
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if b := c.settings().Bounds; b.MaxBytes != 51200 || b.MaxLines != 2000 || b.MaxArtifactBytes != 1<<30 || b.MaxSessionArtifactBytes != 4<<30 {
		t.Fatalf("in effect %+v", b)
	}
}
