package acp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unconfined is the global configuration of the editor tests: the trusted native backend, so
// the session's commands run unconfined and the editor's file system is used (docs/acp.md,
// "Only where no confined command can move a name").
const unconfined = `{"sandbox": {"backend": "native"}}`

// TestEditorNotUsedUnderTheSandbox: under bubblewrap, where the session's commands may write
// the workspace, a command could swap a checked directory for a link while the editor opens
// the name on the host; so a client that offers its file system is never asked, and the file
// tools read and write the disk by handle, recording no editor route.
func TestEditorNotUsedUnderTheSandbox(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bwrap is needed under CI (apt-get install bubblewrap)")
		}
		t.Skip("bwrap is not installed: the confined case cannot run here")
	}
	w := newWorld(t, editorScript, "", map[string]string{"a.txt": "on disk\n", ".git/hooks/pre-commit": "#!/bin/sh\n"})
	p := w.acp()
	initializeWith(p, editorCaps)
	sid := newSession(p, 2, w.dir)
	aPath := filepath.Join(w.dir, "a.txt")
	c := &fsClient{p: p, buffers: map[string]string{aPath: "unsaved in the editor\n"}}
	resp := c.prompt(3, sid, "edit a.txt")
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v\n%s", resp, p.stderr)
	}
	for _, r := range c.requests {
		if strings.HasPrefix(r, "fs/") || strings.HasPrefix(r, "terminal/") {
			t.Errorf("the client was asked %s under the sandbox", r)
		}
	}
	calls := settledCalls(t, w, sid)
	if out, _ := calls["c_read"]["output"].(string); !strings.Contains(out, "on disk") || strings.Contains(out, "unsaved") {
		t.Errorf("the read showed:\n%s", out)
	}
	if got, _ := os.ReadFile(aPath); string(got) != "written\n" {
		t.Errorf("the disk has %q: the write should have gone to the disk", got)
	}
	for _, id := range []string{"c_read", "c_write", "c_reread"} {
		if via, ok := details(calls[id])["via"]; ok {
			t.Errorf("%s records the route %v", id, via)
		}
	}
	if c.buffers[aPath] != "unsaved in the editor\n" {
		t.Errorf("the editor's buffer was changed: %q", c.buffers[aPath])
	}
}
