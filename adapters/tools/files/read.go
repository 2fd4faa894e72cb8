package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/zuno-run/zuno/domain/patch"
)

const (
	// MaxReadBytes bounds one read window, the same fixed bound as a bg window (output is read
	// back in windows; see "Output caps and artifacts" in docs/tools.md): a larger request is
	// clamped, not refused.
	MaxReadBytes = 51200
	// DefaultReadLines is the window a read without limit gets (tool_output.max_lines).
	DefaultReadLines = 2000
)

// ReadRequest is the read tool's arguments.
type ReadRequest struct {
	Path string
	// Offset is the 1-based first line of the window (0 means 1).
	Offset int
	// Limit is the number of lines (0 means DefaultReadLines).
	Limit int
	// ExternalRoot is the directory an external_directory grant admitted for this call
	// (tools.Invocation.ExternalRoot); "" when none, and then a path outside the workspace is
	// refused (external_directory_required).
	ExternalRoot string
}

// Entry is one directory entry.
type Entry struct {
	Name string
	Dir  bool
}

// ReadResult is what read returns. For a file: the window's exact text and the credential
// for the whole file; for a directory: its entries.
type ReadResult struct {
	// Path is the root-relative path after following a final symbolic link (absolute, with
	// forward slashes, for a file outside the workspace).
	Path string
	Dir  bool
	// Content is lines StartLine..EndLine of the file, exactly as stored (BOM and line
	// endings included).
	Content string
	// StartLine and EndLine are 1-based and inclusive; EndLine < StartLine for an empty window.
	StartLine, EndLine int
	TotalLines         int
	// HasMore: the file goes on after EndLine; NextOffset is where the next window starts.
	HasMore    bool
	NextOffset int
	// Truncated: a single line was longer than MaxReadBytes and was cut.
	Truncated bool
	// Size is the file's size in bytes.
	Size       int
	Credential patch.ReadCredential
	Entries    []Entry
	// Editor: the window and the credential were made from the editor's text
	// (Workspace.Editor), not the disk's bytes.
	Editor bool
}

// Read reads a file window or lists a directory. Reading a file, even part of it, issues a
// read credential for its full current bytes. The file is opened through its directory's
// handle without following a link (a final link was followed once already, by place).
func (w *Workspace) Read(ctx context.Context, req ReadRequest) (ReadResult, error) {
	if err := ctxErr(ctx); err != nil {
		return ReadResult{}, err
	}
	if req.Offset < 0 {
		return ReadResult{}, invalid("offset", "offset %d is negative; lines are numbered from 1", req.Offset)
	}
	if req.Limit < 0 {
		return ReadResult{}, invalid("limit", "limit %d is negative", req.Limit)
	}
	pl, err := w.place(req.Path, req.ExternalRoot)
	if err != nil {
		return ReadResult{}, err
	}
	if err := w.guard(req.Path, pl, false); err != nil {
		return ReadResult{}, err
	}
	f, err := w.openForRead(req.Path, pl)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ReadResult{}, cannotRead(req.Path, err)
	}
	if fi.IsDir() {
		return list(pl.key, f)
	}
	if !fi.Mode().IsRegular() {
		return ReadResult{}, invalid("path", "path %q is not a regular file or a directory", req.Path)
	}
	if w.Editor.Reads() {
		return w.readFromEditor(ctx, req, pl, f)
	}
	// One pass through a fixed buffer: the credential's digest covers the full bytes, and
	// only the window is kept (issue 14, "Bounded memory").
	win := newWindower(req.Offset, req.Limit)
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(h, win), onlyReader{f}, make([]byte, 64<<10)); err != nil {
		return ReadResult{}, cannotRead(req.Path, err)
	}
	var digest patch.Digest
	h.Sum(digest[:0])
	res := win.result()
	res.Path = pl.key
	res.Size = int(win.size)
	res.Credential = w.Credentials.IssueDigest(pl.key, digest)
	return res, nil
}

// onlyReader hides the file's WriterTo, so the copy goes through the fixed buffer it is given.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// openForRead opens what pl names (a file or a directory) through handles.
func (w *Workspace) openForRead(shown string, pl place) (*os.File, error) {
	base, err := w.openBase(pl)
	if err != nil {
		return nil, err
	}
	defer base.close()
	segs, name := parentAndName(pl.rel)
	if name == "" {
		// A new open of the base, not a dup: a dup would share the held handle's offset.
		fd, err := openDirAt(base.fd, ".")
		if err != nil {
			return nil, cannotRead(shown, err)
		}
		return os.NewFile(uintptr(fd), base.path), nil
	}
	d, missing, err := w.descend(base, segs, false)
	if err != nil {
		return nil, w.pathError(shown, err)
	}
	defer d.close()
	if len(missing) > 0 {
		return nil, notFound(shown, pl)
	}
	f, err := openFileAt(d, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, notFound(shown, pl)
	case errors.Is(err, unix.ELOOP):
		return nil, &Error{Kind: SymlinkRefused, Field: "path", Err: err, Message: fmt.Sprintf(
			"path %q leads to %s, which is a symbolic link itself; a link is followed only once. Use the path it finally points to", shown, pl.key)}
	case err != nil:
		return nil, cannotRead(shown, err)
	}
	return f, nil
}

func notFound(shown string, pl place) error {
	msg := "path " + quote(shown) + " does not exist; glob lists the files"
	if pl.link {
		msg = "path " + quote(shown) + " is a symbolic link to " + pl.key + ", which does not exist"
	}
	return &Error{Kind: NotFound, Field: "path", Message: msg, Err: fs.ErrNotExist}
}

func cannotRead(shown string, err error) error {
	return &Error{Kind: InvalidArguments, Field: "path", Message: "path " + quote(shown) + " cannot be read: " + err.Error(), Err: err}
}

func list(key string, f *os.File) (ReadResult, error) {
	des, err := f.ReadDir(-1)
	if err != nil {
		return ReadResult{}, &Error{Kind: InvalidArguments, Field: "path", Message: "directory " + quote(key) + " cannot be listed: " + err.Error(), Err: err}
	}
	res := ReadResult{Path: key, Dir: true}
	for _, d := range des {
		res.Entries = append(res.Entries, Entry{Name: d.Name(), Dir: d.IsDir()})
	}
	sort.Slice(res.Entries, func(i, j int) bool { return res.Entries[i].Name < res.Entries[j].Name })
	return res, nil
}

// windower cuts lines offset..offset+limit-1, within MaxReadBytes, out of a file streamed
// through it, so a window of a file of any size costs one window of memory (issue 14,
// "Bounded memory"). Lines are counted as a terminal shows them: a trailing fragment without
// a newline is a line.
type windower struct {
	offset, limit int
	line          int // the 1-based line the next byte belongs to

	buf     []byte // the window so far: whole lines, then part of the current one
	kept    int    // bytes of buf that are whole lines of the window
	endLine int
	cut     bool // the window's first line was longer than MaxReadBytes and was cut
	done    bool // the window is complete; later bytes are only counted

	size     int64
	newlines int
	last     byte
}

func newWindower(offset, limit int) *windower {
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultReadLines
	}
	return &windower{offset: offset, limit: limit, line: 1, endLine: offset - 1}
}

func (w *windower) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	w.size += int64(n)
	w.last = p[n-1]
	if w.done {
		w.newlines += bytes.Count(p, []byte{'\n'})
		return n, nil
	}
	for len(p) > 0 {
		seg, whole := p, false
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			seg, whole = p[:i+1], true
		}
		if !w.done && w.line >= w.offset {
			w.take(seg, whole)
		}
		if whole {
			w.line++
			w.newlines++
		}
		p = p[len(seg):]
	}
	return n, nil
}

// take adds seg, part of line w.line (its end when whole), to the window.
func (w *windower) take(seg []byte, whole bool) {
	if w.line >= w.offset+w.limit {
		w.done = true
		return
	}
	if len(w.buf)+len(seg) > MaxReadBytes {
		if w.line == w.offset {
			// One line larger than the window: cut it rather than return nothing.
			w.buf = append(w.buf, seg[:MaxReadBytes-len(w.buf)]...)
			w.kept, w.endLine, w.cut = len(w.buf), w.line, true
		}
		w.done = true
		return
	}
	w.buf = append(w.buf, seg...)
	if whole {
		w.kept, w.endLine = len(w.buf), w.line
	}
}

// result is the window once the whole file went through.
func (w *windower) result() ReadResult {
	total := w.newlines
	if w.size > 0 && w.last != '\n' {
		total++
		if !w.done && w.line >= w.offset && w.line < w.offset+w.limit {
			w.kept, w.endLine = len(w.buf), w.line // the fragment fitted whole
		}
	}
	res := ReadResult{StartLine: w.offset, EndLine: w.endLine, TotalLines: total, Truncated: w.cut,
		Content: string(w.buf[:w.kept])}
	if res.EndLine < total {
		res.HasMore = true
		res.NextOffset = res.EndLine + 1
	}
	return res
}

func quote(s string) string { return strconv.Quote(s) }

// OpenIn opens p (a file or a directory) for reading, for a call whose external_directory
// grant admitted externalRoot ("" for none), as Read reaches it: beneath the held root inside
// the workspace, beneath the granted directory outside it, no link followed on the way, and a
// protected path the agent may not read refused. key names what was opened: root-relative
// inside the workspace, absolute outside it. glob and grep search from it (package search).
func (w *Workspace) OpenIn(p, externalRoot string) (f *os.File, key string, err error) {
	pl, err := w.place(p, externalRoot)
	if err != nil {
		return nil, "", err
	}
	if err := w.guard(p, pl, false); err != nil {
		return nil, "", err
	}
	f, err = w.openForRead(p, pl)
	return f, pl.key, err
}
