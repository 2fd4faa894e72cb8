package tools

import "context"

// Editor is the file system of the editor that drives the session (the ACP client's
// fs/read_text_file and fs/write_text_file, docs/acp.md "The editor's file system"). A face
// that has one hands it to the turn (app.RunTurn.Editor); the file tools then read and write
// the files they already resolved and checked through it, so the model sees what the user
// sees (an unsaved buffer included). It is a byte source and sink only: the permission gate,
// the path checks (no link on the way, protected paths, the workspace or a grant's
// directory) and the output caps stay Zuno's and run before it is called.
//
// A nil function is a capability the editor does not offer: that side stays on the disk.
type Editor struct {
	// ReadText returns the text of the file at path (absolute, as the session's workspace
	// spells it).
	ReadText func(ctx context.Context, path string) (string, error)
	// WriteText replaces the file at path with content (valid UTF-8: ACP carries text).
	WriteText func(ctx context.Context, path, content string) error
}

// Reads reports whether reads go through the editor.
func (e *Editor) Reads() bool { return e != nil && e.ReadText != nil }

// Writes reports whether writes go through the editor.
func (e *Editor) Writes() bool { return e != nil && e.WriteText != nil }

// ViaEditor is the value of a file tool's details "via" when the content came from, or went
// to, the editor (docs/acp.md): an auditor reading the log knows the bytes were the editor's
// buffer, not necessarily the disk's.
const ViaEditor = "editor"

// Codes of an editor that did not serve a request. A failed read is an error with nothing
// read; a failed write is uncertain (the editor may have written), with the code in its
// message.
const (
	// CodeEditorFailed: the editor answered the request with an error, an answer that is not
	// the protocol's, or the connection to it ended; nothing was taken from it.
	CodeEditorFailed = "editor_failed"
	// CodeEditorTimeout: the editor did not answer within the face's limit; the request was
	// withdrawn.
	CodeEditorTimeout = "editor_timeout"
)
