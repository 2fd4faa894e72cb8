package files

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strconv"

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
}

// Entry is one directory entry.
type Entry struct {
	Name string
	Dir  bool
}

// ReadResult is what read returns. For a file: the window's exact text and the credential
// for the whole file; for a directory: its entries.
type ReadResult struct {
	// Path is the root-relative path after resolving symbolic links.
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
}

// Read reads a file window or lists a directory. Reading a file, even part of it, issues a
// read credential for its full current bytes.
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
	t, err := w.resolve(req.Path)
	if err != nil {
		return ReadResult{}, err
	}
	fi, err := os.Stat(t.real)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ReadResult{}, &Error{Kind: NotFound, Field: "path", Message: "path " + quote(req.Path) + " does not exist; glob lists the files", Err: err}
		}
		return ReadResult{}, &Error{Kind: InvalidArguments, Field: "path", Message: "path " + quote(req.Path) + " cannot be read: " + err.Error(), Err: err}
	}
	if fi.IsDir() {
		return w.list(t)
	}
	if !fi.Mode().IsRegular() {
		return ReadResult{}, invalid("path", "path %q is not a regular file or a directory", req.Path)
	}
	content, err := os.ReadFile(t.real)
	if err != nil {
		return ReadResult{}, &Error{Kind: InvalidArguments, Field: "path", Message: "path " + quote(req.Path) + " cannot be read: " + err.Error(), Err: err}
	}
	res := window(content, req.Offset, req.Limit)
	res.Path = t.rel
	res.Size = len(content)
	res.Credential = w.Credentials.Issue(t.rel, content)
	return res, nil
}

func (w *Workspace) list(t target) (ReadResult, error) {
	des, err := os.ReadDir(t.real)
	if err != nil {
		return ReadResult{}, &Error{Kind: InvalidArguments, Field: "path", Message: "directory " + quote(t.rel) + " cannot be listed: " + err.Error(), Err: err}
	}
	res := ReadResult{Path: t.rel, Dir: true}
	for _, d := range des {
		res.Entries = append(res.Entries, Entry{Name: d.Name(), Dir: d.IsDir()})
	}
	sort.Slice(res.Entries, func(i, j int) bool { return res.Entries[i].Name < res.Entries[j].Name })
	return res, nil
}

// window cuts lines offset..offset+limit-1 out of content, within MaxReadBytes.
func window(content []byte, offset, limit int) ReadResult {
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultReadLines
	}
	// Line start offsets.
	var starts []int
	for i := 0; i < len(content); {
		starts = append(starts, i)
		j := i
		for j < len(content) && content[j] != '\n' {
			j++
		}
		i = j + 1
	}
	total := len(starts)
	res := ReadResult{StartLine: offset, EndLine: offset - 1, TotalLines: total}
	if offset > total {
		return res
	}
	from := starts[offset-1]
	end := from
	line := offset
	for ; line <= total && line < offset+limit; line++ {
		next := len(content)
		if line < total {
			next = starts[line]
		}
		if next-from > MaxReadBytes {
			if line == offset {
				// One line larger than the window: cut it rather than return nothing.
				end = from + MaxReadBytes
				res.Truncated = true
				line++
			}
			break
		}
		end = next
	}
	res.Content = string(content[from:end])
	res.EndLine = line - 1
	if res.EndLine < total {
		res.HasMore = true
		res.NextOffset = res.EndLine + 1
	}
	return res
}

func quote(s string) string { return strconv.Quote(s) }
