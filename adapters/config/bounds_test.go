package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// The project layer may lower a tool_output limit and never raise it above what the global
// file says, or the default where it says nothing (docs/config.md, "Bounds").
func TestProjectMayOnlyLowerToolOutput(t *testing.T) {
	for _, tc := range []struct {
		name, global, project string
		refusedKey            string
	}{
		{"lower than the default", `{}`, `{"tool_output": {"max_bytes": 1000, "max_lines": 10, "max_artifact_bytes": 4096, "max_session_artifact_bytes": 8192}}`, ""},
		{"equal to the default", `{}`, `{"tool_output": {"max_bytes": 51200}}`, ""},
		{"one byte over the default", `{}`, `{"tool_output": {"max_bytes": 51201}}`, "tool_output.max_bytes"},
		{"under what the global file raised", `{"tool_output": {"max_bytes": 500000}}`, `{"tool_output": {"max_bytes": 400000}}`, ""},
		{"over what the global file lowered", `{"tool_output": {"max_lines": 100}}`, `{"tool_output": {"max_lines": 2000}}`, "tool_output.max_lines"},
		{"the global file's value over the ceiling counts as the ceiling", `{"tool_output": {"max_bytes": 9000000000}}`, `{"tool_output": {"max_bytes": 2000000}}`, "tool_output.max_bytes"},
		{"the global file over the ceiling, the project at it", `{"tool_output": {"max_bytes": 9000000000}}`, `{"tool_output": {"max_bytes": 1048576}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.write(filepath.Join(w.global, "zuno.json"), tc.global)
			w.write(filepath.Join(w.repo, "zuno.json"), tc.project)
			_, err := w.load(w.options())
			if tc.refusedKey == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e := codeOf(t, err)
			if e.Code() != CodeUntrusted || e.Key != tc.refusedKey || !strings.Contains(err.Error(), "may only lower") {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// A trusted layer after the project layer (--config) may raise what the project lowered.
func TestTrustedLayerAboveProjectMayRaise(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.repo, "zuno.json"), `{"tool_output": {"max_bytes": 100}}`)
	explicit := w.write(filepath.Join(w.global, "explicit.json"), `{"tool_output": {"max_bytes": 700000}}`)
	o := w.options()
	o.Explicit, o.ExplicitFrom = explicit, "--config"
	if _, err := w.load(o); err != nil {
		t.Fatal(err)
	}
}
