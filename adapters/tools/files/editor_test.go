package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
)

// recordingEditor is an editor as a client is to the tools (the real one, an ACP client over
// JSON-RPC, is faces/acp's TestEditorFileSystem): it keeps unsaved buffers by absolute path,
// opens any other file from the disk by name as an editor does, and records every request.
type recordingEditor struct {
	mu      sync.Mutex
	buffers map[string]string
	asked   []string // "read PATH" / "write PATH"
	// onRead and onWrite, when set, run inside the request (a client that errs, or a race).
	onRead  func(path string) (string, error)
	onWrite func(path, content string) error
	// toDisk: a write is saved to the disk too (an editor that saves), not only buffered.
	toDisk bool
}

func (e *recordingEditor) port() *tools.Editor {
	return &tools.Editor{
		ReadText: func(_ context.Context, p string) (string, error) {
			e.mu.Lock()
			e.asked = append(e.asked, "read "+p)
			text, ok := e.buffers[p]
			hook := e.onRead
			e.mu.Unlock()
			if hook != nil {
				return hook(p)
			}
			if ok {
				return text, nil
			}
			b, err := os.ReadFile(p)
			return string(b), err
		},
		WriteText: func(_ context.Context, p, content string) error {
			e.mu.Lock()
			e.asked = append(e.asked, "write "+p)
			hook := e.onWrite
			e.buffers[p] = content
			e.mu.Unlock()
			if hook != nil {
				return hook(p, content)
			}
			if e.toDisk {
				return os.WriteFile(p, []byte(content), 0o644)
			}
			return nil
		},
	}
}

func (e *recordingEditor) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.asked...)
}

// TestEditorAttacks is docs/acp.md's table of attacks on the editor's file system, at the
// workspace: each path that the disk route refuses is refused the same way with an editor,
// and the editor never hears of it; what it does hear of is the checked file's name.
func TestEditorAttacks(t *testing.T) {
	bothWalks(t, func(t *testing.T) {
		w, root, outside := attackFixture(t)
		parent := filepath.Dir(root)
		alias := filepath.Join(parent, "alias")
		put(t, root, ".git/hooks/pre-commit", "#!/bin/sh\n")
		put(t, root, ".zuno/agents/a.md", "a\n")
		put(t, root, "zdata/zuno.db", "db\n")
		w.Protected = sandbox.Protections(sandbox.Config{}, sandbox.Locations{DataDir: filepath.Join(root, "zdata")})
		ed := &recordingEditor{buffers: map[string]string{}}
		w.Editor = ed.port()
		ctx := context.Background()

		refused := []struct {
			name, path  string
			read, write Code // "" where that side is not refused (not this table's row)
		}{
			{"'..' escape", "../outside/secret.txt", ExternalDirectoryRequired, ExternalDirectoryRequired},
			{"deep '..' escape", "dir/../../outside/secret.txt", ExternalDirectoryRequired, ExternalDirectoryRequired},
			{"absolute outside", filepath.Join(outside, "secret.txt"), ExternalDirectoryRequired, ExternalDirectoryRequired},
			{"final link to outside", "out-link", ExternalDirectoryRequired, ExternalDirectoryRequired},
			{"final relative link escaping", "dotdot-link", ExternalDirectoryRequired, ExternalDirectoryRequired},
			{"link to a link", "chain", SymlinkRefused, "not_a_file"},
			{"intermediate link inside", "dir-link/f.txt", SymlinkRefused, SymlinkRefused},
			{"intermediate link outside", "out-dir-link/secret.txt", SymlinkRefused, SymlinkRefused},
			{"intermediate '..' link", "dir/root-link/real.txt", SymlinkRefused, SymlinkRefused},
			{"NUL byte", "real.txt\x00x", InvalidArguments, InvalidArguments},
			{".git/hooks", ".git/hooks/pre-commit", "", Code(sandbox.CodeProtectedPath)},
			{".zuno", ".zuno/agents/a.md", "", Code(sandbox.CodeProtectedPath)},
			{"the data dir", "zdata/zuno.db", Code(sandbox.CodeProtectedPath), Code(sandbox.CodeProtectedPath)},
		}
		for _, r := range refused {
			t.Run(r.name, func(t *testing.T) {
				if r.read != "" {
					_, err := w.Read(ctx, ReadRequest{Path: r.path})
					wantCoded(t, err, r.read)
				}
				_, err := w.Write(ctx, r.path, []byte("x\n"))
				wantCoded(t, err, r.write)
				if !strings.ContainsRune(r.path, 0) && !filepath.IsAbs(r.path) && !strings.HasPrefix(r.path, "..") {
					_, err = w.ApplyPatch(ctx, "*** Begin Patch\n*** Add File: "+r.path+"\n+x\n*** End Patch")
					if err == nil {
						t.Errorf("apply_patch adding %s was not refused", r.path)
					}
				}
				if got := ed.requests(); len(got) > 0 {
					t.Errorf("the editor heard of a refused path: %v", got)
				}
			})
		}

		t.Run("a FIFO and a directory are the disk's", func(t *testing.T) {
			if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := w.Read(ctx, ReadRequest{Path: "fifo"})
			wantCoded(t, err, InvalidArguments)
			res, err := w.Read(ctx, ReadRequest{Path: "dir"})
			if err != nil || !res.Dir || res.Editor {
				t.Fatalf("listing: %+v, %v", res, err)
			}
			if got := ed.requests(); len(got) > 0 {
				t.Errorf("the editor was asked: %v", got)
			}
		})
		t.Run("a read sees the buffer, named as the session spells the root", func(t *testing.T) {
			ed.buffers[filepath.Join(alias, "real.txt")] = "unsaved\n"
			res, err := w.Read(ctx, ReadRequest{Path: "in-link"})
			if err != nil || res.Content != "unsaved\n" || !res.Editor || res.Path != "real.txt" {
				t.Fatalf("read = %+v, %v; want the buffer of real.txt", res, err)
			}
			if got := ed.requests(); len(got) != 1 || got[0] != "read "+filepath.Join(alias, "real.txt") {
				t.Errorf("requests %v: want one read of the link's target", got)
			}
		})
		t.Run("a write goes to the editor and not to the disk", func(t *testing.T) {
			ed.asked = nil
			res, err := w.Write(ctx, "real.txt", []byte("new\n"))
			if err != nil || !res.Editor {
				t.Fatalf("write: %+v, %v", res, err)
			}
			if got := get(t, root, "real.txt"); got != "real\n" {
				t.Errorf("the disk has %q: Zuno wrote it behind the editor", got)
			}
			if ed.buffers[filepath.Join(alias, "real.txt")] != "new\n" {
				t.Errorf("the editor's buffer: %q", ed.buffers[filepath.Join(alias, "real.txt")])
			}
			// The credential is the editor's text: a write after it needs no new read.
			if _, err := w.Write(ctx, "real.txt", []byte("newer\n")); err != nil {
				t.Errorf("second write: %v", err)
			}
		})
		t.Run("apply_patch patches the buffer", func(t *testing.T) {
			if _, err := w.ApplyPatch(ctx, "*** Begin Patch\n*** Update File: real.txt\n@@\n-newer\n+patched\n*** End Patch"); err != nil {
				t.Fatalf("apply_patch: %v", err)
			}
			if ed.buffers[filepath.Join(alias, "real.txt")] != "patched\n" {
				t.Errorf("buffer: %q", ed.buffers[filepath.Join(alias, "real.txt")])
			}
		})
		t.Run("a granted outside file is named by its target", func(t *testing.T) {
			ed.asked = nil
			res, err := w.Read(ctx, ReadRequest{Path: "out-link", ExternalRoot: outside})
			if err != nil || res.Content != "secret\n" {
				t.Fatalf("read: %+v, %v", res, err)
			}
			if got := ed.requests(); len(got) != 1 || got[0] != "read "+filepath.Join(outside, "secret.txt") {
				t.Errorf("requests %v", got)
			}
		})
		t.Run("content the editor cannot carry is refused before it is asked", func(t *testing.T) {
			ed.asked = nil
			_, err := w.Write(ctx, "fresh.bin", []byte{0xff, 0xfe})
			wantCode(t, err, EditorNotText)
			if got := ed.requests(); len(got) != 0 {
				t.Errorf("requests %v", got)
			}
		})
	})
}

// TestEditorMisbehaves: a client that errs, answers huge text, or lets the path move while
// it answers; the tools never fall back to the disk behind it.
func TestEditorMisbehaves(t *testing.T) {
	ctx := context.Background()
	refusal := domain.NewError(tools.CodeEditorFailed, "the editor refused", "")
	t.Run("a read error is the error, not the disk", func(t *testing.T) {
		w, root := newWS(t)
		put(t, root, "a.txt", "disk\n")
		ed := &recordingEditor{buffers: map[string]string{}, onRead: func(string) (string, error) { return "", refusal }}
		w.Editor = ed.port()
		res, err := w.Read(ctx, ReadRequest{Path: "a.txt"})
		if domain.CodeOf(err) != tools.CodeEditorFailed || res.Content != "" {
			t.Fatalf("read = %+v, %v; want editor_failed and nothing", res, err)
		}
		if w.Credentials.Held("a.txt") != nil {
			t.Error("a failed read issued a credential")
		}
	})
	t.Run("a write error is uncertain", func(t *testing.T) {
		w, root := newWS(t)
		put(t, root, "a.txt", "disk\n")
		ed := &recordingEditor{buffers: map[string]string{}, onWrite: func(string, string) error { return refusal }}
		w.Editor = ed.port()
		if _, err := w.Read(ctx, ReadRequest{Path: "a.txt"}); err != nil {
			t.Fatal(err)
		}
		_, err := w.Write(ctx, "a.txt", []byte("new\n"))
		var u *UncertainError
		if !errors.As(err, &u) || domain.CodeOf(u.Err) != tools.CodeEditorFailed {
			t.Fatalf("write = %v; want uncertain, the editor's failure inside", err)
		}
		if get(t, root, "a.txt") != "disk\n" {
			t.Error("Zuno wrote the disk after the editor failed")
		}
	})
	t.Run("huge text is read in one window", func(t *testing.T) {
		w, root := newWS(t)
		put(t, root, "big.txt", "small\n")
		huge := strings.Repeat(strings.Repeat("x", 99)+"\n", 40000) // 4 MB
		ed := &recordingEditor{buffers: map[string]string{filepath.Join(root, "big.txt"): huge}}
		w.Editor = ed.port()
		res, err := w.Read(ctx, ReadRequest{Path: "big.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Content) > MaxReadBytes || res.Size != len(huge) || res.TotalLines != 40000 || !res.HasMore {
			t.Errorf("window of %d bytes, size %d, %d lines, hasMore %v", len(res.Content), res.Size, res.TotalLines, res.HasMore)
		}
	})
	t.Run("a directory swapped for a link while the editor reads", func(t *testing.T) {
		w, root := newWS(t)
		outside := t.TempDir()
		put(t, root, "d/f.txt", "inside\n")
		put(t, outside, "f.txt", "SECRET\n")
		ed := &recordingEditor{buffers: map[string]string{}}
		ed.onRead = func(p string) (string, error) {
			swap(t, filepath.Join(root, "d"), outside)
			b, err := os.ReadFile(p) // the editor opens by name: it follows the new link
			return string(b), err
		}
		w.Editor = ed.port()
		res, err := w.Read(ctx, ReadRequest{Path: "d/f.txt"})
		wantCode(t, err, EditorPathMoved)
		if strings.Contains(res.Content, "SECRET") {
			t.Error("the outside file's text was returned")
		}
	})
	t.Run("a directory swapped for a link while the editor writes", func(t *testing.T) {
		w, root := newWS(t)
		outside := t.TempDir()
		put(t, root, "d/f.txt", "inside\n")
		put(t, outside, "f.txt", "other\n")
		ed := &recordingEditor{buffers: map[string]string{}}
		w.Editor = ed.port()
		if _, err := w.Read(ctx, ReadRequest{Path: "d/f.txt"}); err != nil {
			t.Fatal(err)
		}
		ed.onWrite = func(p, content string) error {
			swap(t, filepath.Join(root, "d"), outside)
			return os.WriteFile(p, []byte(content), 0o644)
		}
		_, err := w.Write(ctx, "d/f.txt", []byte("new\n"))
		var u *UncertainError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), string(EditorPathMoved)) {
			t.Fatalf("write = %v; want uncertain, editor_path_moved", err)
		}
	})
}

// swap replaces the directory d by a link to target, keeping d's old content aside.
func swap(t *testing.T, d, target string) {
	t.Helper()
	if err := os.Rename(d, d+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, d); err != nil {
		t.Fatal(err)
	}
}

// wantCoded checks the stable code of any of the package's errors (files, patch, domain).
func wantCoded(t *testing.T, err error, code Code) {
	t.Helper()
	var c interface{ Code() string }
	if !errors.As(err, &c) || c.Code() != string(code) {
		t.Fatalf("want %s, got %T: %v", code, err, err)
	}
}

// FuzzEditorText: whatever text the editor answers, and whatever window is asked, the read
// through the editor is the read of the same bytes from the disk (the same window, line
// counts, cut and credential digest): the editor changes where the bytes come from, never
// the bounds they are held to.
func FuzzEditorText(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\r\nb", "\uFEFFx\ny\n", strings.Repeat("long", 20000), strings.Repeat("l\n", 3000)} {
		f.Add(s, 0, 0)
		f.Add(s, 2, 1)
	}
	f.Fuzz(func(t *testing.T, text string, offset, limit int) {
		if offset < 0 || limit < 0 || offset > 1<<20 || limit > 1<<20 {
			return
		}
		w, root := newWS(t)
		put(t, root, "disk.txt", text)
		put(t, root, "buf.txt", "something else\n")
		ed := &recordingEditor{buffers: map[string]string{filepath.Join(root, "buf.txt"): text}}
		disk, err := w.Read(context.Background(), ReadRequest{Path: "disk.txt", Offset: offset, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		w.Editor = ed.port()
		got, err := w.Read(context.Background(), ReadRequest{Path: "buf.txt", Offset: offset, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Content) > MaxReadBytes || !got.Editor {
			t.Fatalf("window of %d bytes, editor %v", len(got.Content), got.Editor)
		}
		got.Path, got.Editor, got.Credential.Generation = disk.Path, false, disk.Credential.Generation
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", disk) {
			t.Fatalf("through the editor %+v\nfrom the disk %+v", got, disk)
		}
	})
}
