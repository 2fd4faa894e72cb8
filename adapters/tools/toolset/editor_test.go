package toolset

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
)

// bufferEditor keeps every write in a buffer (an editor that has not saved) and records the
// requests; the real client is faces/acp's TestEditorFileSystem.
type bufferEditor struct {
	mu      sync.Mutex
	buffers map[string]string
	asked   []string
	fail    error
}

func (e *bufferEditor) port() *tools.Editor {
	return &tools.Editor{
		ReadText: func(_ context.Context, p string) (string, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.asked = append(e.asked, "read "+p)
			return e.buffers[p], e.fail
		},
		WriteText: func(_ context.Context, p, content string) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.asked = append(e.asked, "write "+p)
			if e.fail == nil {
				e.buffers[p] = content
			}
			return e.fail
		},
	}
}

// TestEditorRouteRecorded: the results of read, write and apply_patch say when the bytes were
// the editor's (details "via": "editor"), the model is told, and the user's read-only mode
// refuses a write before the editor hears of it.
func TestEditorRouteRecorded(t *testing.T) {
	ed := &bufferEditor{buffers: map[string]string{}}
	s, root := newSet(t, func(c *Config) { c.Editor = ed.port() })
	put(t, root, "a.txt", "disk\n")
	ed.buffers[filepath.Join(root, "a.txt")] = "buffer\n"

	r := call(t, s, tools.NameRead, args("path", "a.txt"))
	want(t, r, tools.OutcomeCompleted, "")
	if !strings.Contains(r.Output, "buffer") || strings.Contains(r.Output, "\tdisk") || !strings.Contains(r.Output, "the editor's text") {
		t.Errorf("read output:\n%s", r.Output)
	}
	if facts(t, r)["via"] != tools.ViaEditor {
		t.Errorf("read details %s: no via editor", r.Metadata.Details)
	}
	r = call(t, s, tools.NameWrite, args("path", "a.txt", "content", "new\n"))
	want(t, r, tools.OutcomeCompleted, "")
	if facts(t, r)["via"] != tools.ViaEditor || get(t, root, "a.txt") != "disk\n" {
		t.Errorf("write: details %s, disk %q", r.Metadata.Details, get(t, root, "a.txt"))
	}
	r = call(t, s, tools.NameApplyPatch, args("patch", patchText("*** Update File: a.txt\n@@\n-new\n+patched\n")))
	want(t, r, tools.OutcomeCompleted, "")
	if facts(t, r)["via"] != tools.ViaEditor || ed.buffers[filepath.Join(root, "a.txt")] != "patched\n" {
		t.Errorf("apply_patch: details %s, buffer %q", r.Metadata.Details, ed.buffers[filepath.Join(root, "a.txt")])
	}

	// Without an editor nothing says "via".
	plain, proot := newSet(t)
	put(t, proot, "a.txt", "disk\n")
	if _, ok := facts(t, call(t, plain, tools.NameRead, args("path", "a.txt")))["via"]; ok {
		t.Error("a disk read claims a route")
	}

	t.Run("an editor's refusal is the call's error", func(t *testing.T) {
		ed.fail = domain.NewError(tools.CodeEditorTimeout, "the editor did not answer", "")
		defer func() { ed.fail = nil }()
		want(t, call(t, s, tools.NameRead, args("path", "a.txt")), tools.OutcomeError, tools.CodeEditorTimeout)
		want(t, call(t, s, tools.NameWrite, args("path", "new.txt", "content", "x")), tools.OutcomeUncertain, "uncertain")
	})
	t.Run("read-only mode", func(t *testing.T) {
		ro := &bufferEditor{buffers: map[string]string{}}
		s, _ := newSet(t, func(c *Config) { c.Editor, c.ReadOnly = ro.port(), true })
		want(t, call(t, s, tools.NameWrite, args("path", "b.txt", "content", "x")), tools.OutcomeError, sandbox.CodeReadOnlyMode)
		want(t, call(t, s, tools.NameApplyPatch, args("patch", patchText("*** Add File: b.txt\n+x\n"))), tools.OutcomeError, sandbox.CodeReadOnlyMode)
		if len(ro.asked) != 0 {
			t.Errorf("the editor heard of a refused write: %v", ro.asked)
		}
	})
	t.Run("a replay's surface never calls the editor", func(t *testing.T) {
		gone := &bufferEditor{buffers: map[string]string{}}
		s, err := New(Config{Root: filepath.Join(t.TempDir(), "gone"), ArtifactDir: t.TempDir(), Editor: gone.port(), Gone: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		call(t, s, tools.NameRead, args("path", "a.txt"))
		if len(gone.asked) != 0 {
			t.Errorf("a detached surface asked the editor: %v", gone.asked)
		}
	})
}
