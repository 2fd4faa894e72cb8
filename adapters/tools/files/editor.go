package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/zuno-run/zuno/domain/patch"
)

// The editor's file system (Workspace.Editor; docs/acp.md, "The editor's file system"). The
// editor is a byte source and sink, nothing more: every path is placed, walked by handle and
// checked against the protected paths exactly as for the disk before the editor hears of it,
// and a read's window and credential are made from its text as from the file's bytes. The
// editor reads and writes by name, so after it answers, the name it was given must still reach
// the file Zuno checked (sameFileAfter): a directory swapped for a link in between is caught
// there instead of being trusted.

// EditorPathMoved: the path sent to the editor no longer reached the file Zuno had checked
// when the editor answered (a directory or the file swapped for a link in between). A read
// shows nothing of the editor's answer; a write is uncertain.
const EditorPathMoved Code = "editor_path_moved"

// EditorNotText: the content to write is not valid UTF-8, which the editor's text protocol
// cannot carry unchanged (JSON would replace the bytes); nothing was written.
const EditorNotText Code = "editor_not_text"

// EditorDiskDiffers: the editor reads but does not write (a client without
// fs/write_text_file), so a change goes to the disk; the editor's text, which the model read,
// differs from the disk's bytes the change would replace (an unsaved buffer, or the file
// changed on the disk since). Nothing was written.
const EditorDiskDiffers Code = "editor_disk_differs"

// EditorHardLink: the file to change has more than one hard link. The disk's route writes a
// new file and renames it over the name, which leaves the other names' bytes alone; an
// editor saves in place, through the inode, so every other name (a protected git hook, a
// package store outside the workspace) would change with it. Nothing was written.
const EditorHardLink Code = "editor_hard_link"

// editorPath is the absolute name the editor is given for pl: under the workspace root as
// the session spells it (the editor's buffers are named so), or the target outside it.
func (w *Workspace) editorPath(pl place) string {
	if pl.external != "" {
		return filepath.FromSlash(pl.key)
	}
	return filepath.Join(w.Root, filepath.FromSlash(pl.rel))
}

// readFromEditor is Read's file window made from the editor's text of the regular file f,
// which the walk opened by handle.
func (w *Workspace) readFromEditor(ctx context.Context, req ReadRequest, pl place, f *os.File) (ReadResult, error) {
	abs := w.editorPath(pl)
	text, err := w.Editor.ReadText(ctx, abs)
	if err != nil {
		return ReadResult{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return ReadResult{}, cannotRead(req.Path, err)
	}
	if err := sameFileAfter(req.Path, abs, fi); err != nil {
		return ReadResult{}, err
	}
	content := []byte(text)
	win := newWindower(req.Offset, req.Limit)
	win.Write(content)
	res := win.result()
	res.Path = pl.key
	res.Size = int(win.size)
	res.Credential = w.Credentials.IssueDigest(pl.key, patch.DigestOf(content))
	res.Editor = true
	return res, nil
}

// sameFileAfter checks that abs, resolved by name as the editor resolves it, reaches checked.
func sameFileAfter(shown, abs string, checked os.FileInfo) error {
	now, err := os.Stat(abs)
	if err == nil && os.SameFile(now, checked) {
		return nil
	}
	return &Error{Kind: EditorPathMoved, Field: "path", Err: err, Message: fmt.Sprintf(
		"path %q changed while the editor answered: %s no longer reaches the file that was checked; nothing the editor returned is shown. Read it again", shown, abs)}
}

// editorState replaces a file's content in st with the editor's text, for write and
// apply_patch to check credentials against and to patch what the model read: a file read
// from the editor is the editor's buffer.
func (w *Workspace) editorState(ctx context.Context, h *held, st patch.FileState) (patch.FileState, error) {
	if st.Kind != patch.File || !w.Editor.Reads() {
		return st, nil
	}
	s, ok, err := lstatAt(h.d, h.name)
	if err != nil || !ok || !isRegular(s) {
		return st, &Error{Kind: EditorPathMoved, Field: "path", Err: err, Message: fmt.Sprintf(
			"path %q changed before the editor was asked; read it again", h.pl.key)}
	}
	abs := w.editorPath(h.pl)
	text, err := w.Editor.ReadText(ctx, abs)
	if err != nil {
		return st, err
	}
	if err := sameInodeAfter(h.pl.key, abs, s); err != nil {
		return st, err
	}
	if !w.Editor.Writes() && text != string(st.Content) {
		// The change will be written to the disk, so the bytes it replaces are the disk's;
		// the model read the editor's, and these differ: the disk route's rule (replace only
		// what was read) would be lost.
		return st, &Error{Kind: EditorDiskDiffers, Field: "path", Message: fmt.Sprintf(
			"the editor's text of %s differs from the file on the disk, and the editor takes no writes, so the change would go to the disk and replace bytes that were not read; nothing was written. "+
				"Save or revert %[1]s in the editor, then read it again", h.pl.key)}
	}
	st.Content = []byte(text)
	return st, nil
}

// sameInodeAfter is sameFileAfter for a file stated through its parent's handle.
func sameInodeAfter(shown, abs string, checked unix.Stat_t) error {
	var now unix.Stat_t
	err := unix.Stat(abs, &now)
	if err == nil && now.Dev == checked.Dev && now.Ino == checked.Ino {
		return nil
	}
	return &Error{Kind: EditorPathMoved, Field: "path", Err: err, Message: fmt.Sprintf(
		"path %q changed while the editor answered: %s no longer reaches the file that was checked. Read it again", shown, abs)}
}

// checkEditorText refuses, before anything is written, content the editor cannot be given
// unchanged.
func (w *Workspace) checkEditorText(key string, content []byte) error {
	if !w.Editor.Writes() || utf8.Valid(content) {
		return nil
	}
	return &Error{Kind: EditorNotText, Field: "content", Message: fmt.Sprintf(
		"the new content of %s is not valid UTF-8, and the editor takes text only; nothing was written. Keep the file's bytes valid UTF-8, or change it with shell", key)}
}

// checkEditorLinks refuses, before anything is written, to have the editor replace a file
// that has other hard links: the editor writes through the inode, so the other names would
// change too, and the protected paths are checked by name (a link to .git/hooks/pre-commit
// is not under .git/hooks).
func (w *Workspace) checkEditorLinks(h *held) error {
	if !w.Editor.Writes() || h.blocked >= 0 || len(h.missing) > 0 {
		return nil
	}
	s, ok, err := lstatAt(h.d, h.name)
	if err != nil || !ok || !isRegular(s) || s.Nlink <= 1 {
		return nil
	}
	return &Error{Kind: EditorHardLink, Field: "path", Message: fmt.Sprintf(
		"%s has %d hard links, and the editor saves in place, so every other name of the file would change too; nothing was written. "+
			"Give it a name of its own first (shell: cp %[1]s %[1]s.new && mv %[1]s.new %[1]s), then write it", h.pl.key, s.Nlink)}
}

// writeThroughEditor has the editor write content to name in d (the held parent, its missing
// directories already made by handle), then checks that the name it was given reaches that
// directory's entry: the file it wrote, or (an editor that keeps the text in an unsaved
// buffer) nothing on either side.
func (w *Workspace) writeThroughEditor(ctx context.Context, h *held, d dir, content []byte) error {
	abs := w.editorPath(h.pl)
	if err := w.Editor.WriteText(ctx, abs, string(content)); err != nil {
		return err
	}
	s, ok, err := lstatAt(d, h.name)
	if err != nil {
		return err
	}
	var now unix.Stat_t
	serr := unix.Stat(abs, &now)
	switch {
	case !ok && errors.Is(serr, unix.ENOENT):
		return nil
	case ok && isRegular(s) && serr == nil && now.Dev == s.Dev && now.Ino == s.Ino:
		return nil
	}
	return &Error{Kind: EditorPathMoved, Field: "path", Err: serr, Message: fmt.Sprintf(
		"%s, as the editor resolves it, no longer reaches %s in the directory that was checked: the editor may have written elsewhere%s",
		abs, h.pl.key, leadsNow(abs))}
}

// leadsNow says where abs resolves now, when links send it elsewhere: the editor wrote by
// name, so that is where its text may have landed, and whoever reads the error must look
// there (Zuno cannot undo a write it did not make).
func leadsNow(abs string) string {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil || real == abs {
		return ""
	}
	return " (the name now leads to " + real + ")"
}
