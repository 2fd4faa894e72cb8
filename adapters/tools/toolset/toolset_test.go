package toolset

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/tools"
)

func TestNewRejectsBadConfig(t *testing.T) {
	root, art := t.TempDir(), t.TempDir()
	for name, cfg := range map[string]Config{
		"no root":           {ArtifactDir: art},
		"no artifact dir":   {Root: root},
		"missing root":      {Root: root + "/nope", ArtifactDir: art},
		"negative cap":      {Root: root, ArtifactDir: art, MaxBytes: -1},
		"timeout too long":  {Root: root, ArtifactDir: art, ShellTimeout: 11 * time.Minute},
		"negative timeout":  {Root: root, ArtifactDir: art, ShellTimeout: -time.Second},
		"negative max line": {Root: root, ArtifactDir: art, MaxLines: -5},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

func TestSurface(t *testing.T) {
	s, _ := newSet(t)
	var names []string
	for _, tl := range s.Tools() {
		d := tl.Declaration()
		names = append(names, d.Name)
		if d.Mixed() {
			t.Errorf("%s: declared mixed", d.Name)
		}
		spec := tl.Spec()
		if spec.Name != d.Name || len(spec.Description) < 80 {
			t.Errorf("%s: spec %q with a %d-byte description", d.Name, spec.Name, len(spec.Description))
		}
		var schema map[string]any
		if err := json.Unmarshal(spec.Schema, &schema); err != nil {
			t.Fatalf("%s: schema is not JSON: %v\n%s", d.Name, err, spec.Schema)
		}
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: schema %s", d.Name, spec.Schema)
		}
		readOnly := slices.Contains([]string{tools.NameRead, tools.NameGlob, tools.NameGrep}, d.Name)
		wantPolicy := tools.Policy{}
		if readOnly {
			wantPolicy = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
		}
		if d.Policy != wantPolicy {
			t.Errorf("%s: policy %+v, want %+v", d.Name, d.Policy, wantPolicy)
		}
		wantWrites := slices.Contains([]string{tools.NameWrite, tools.NameApplyPatch, tools.NameShell}, d.Name)
		if tl.WritesWorkspace() != wantWrites {
			t.Errorf("%s: WritesWorkspace %v", d.Name, tl.WritesWorkspace())
		}
		if parsed, err := tl.Validate(json.RawMessage(sampleArgs[d.Name].base)); err != nil || parsed.Action != "" || parsed.Args == nil {
			t.Errorf("%s: base sample: %+v %v", d.Name, parsed, err)
		}
	}
	want := []string{"read", "glob", "grep", "write", "apply_patch", "shell", "report_write"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	// The declarations register together (unique, valid policies).
	var decls []tools.Declaration
	for _, tl := range s.Tools() {
		decls = append(decls, tl.Declaration())
	}
	if _, err := tools.NewRegistry(decls...); err != nil {
		t.Fatal(err)
	}
	if s.Credentials() == nil || s.Credentials() != s.ws.Credentials {
		t.Error("Credentials is not the workspace's store")
	}
	// The configured caps reach the descriptions the model reads.
	s2, _ := newSet(t, func(c *Config) { c.MaxBytes, c.MaxLines = 1234, 56 })
	if d := toolNamed(t, s2, tools.NameShell).Spec().Description; !strings.Contains(d, "1234 bytes") || !strings.Contains(d, "56 lines") {
		t.Errorf("shell description does not state the caps: %s", d)
	}
}
