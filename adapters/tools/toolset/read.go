package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/adapters/tools/files"
	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain/tools"
)

type readTool struct{ s *Set }

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// maxInt32 bounds line offsets and limits so that offset+limit cannot overflow anywhere.
const maxInt32 = math.MaxInt32

var readSchema = schema.MustCompile(tools.NameRead, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "relative to the workspace root", "minLength": 1},
    "offset": {"type": "integer", "description": "1-based line; default 1", "minimum": 1, "maximum": %[1]d},
    "limit": {"type": "integer", "description": "lines; default %[2]d", "minimum": 1, "maximum": %[1]d}
  },
  "required": ["path"],
  "additionalProperties": false
}`, maxInt32, files.DefaultReadLines)), schema.Rules{StrictText: true,
	Example: `{"path": "src/main.go", "offset": 1, "limit": 200}`})

func (t *readTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameRead, Policy: readOnlyPolicy}
}

func (t *readTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameRead, Schema: readSchema.Raw(), Description: fmt.Sprintf(
		"Read a file window with line numbers (at most %d lines and %d bytes; when the file goes on, the answer "+
			"gives the next offset), or list a directory. write and apply_patch change only files read (even in part) in "+
			"this session and unchanged since. Line numbers and the tab after them are not part of the file.",
		files.DefaultReadLines, files.MaxReadBytes)}
}

func (t *readTool) WritesWorkspace() bool { return false }

func (t *readTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a readArgs
	err := readSchema.Decode(args, &a)
	return tools.Parsed{Args: a}, err
}

func (t *readTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(readArgs)
	if !ok {
		return notValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	res, err := t.s.ws.Read(ctx, files.ReadRequest{Path: a.Path, Offset: a.Offset, Limit: a.Limit, ExternalRoot: inv.ExternalRoot})
	if err != nil {
		return failure(tools.NameRead, err, false)
	}
	if res.Dir {
		return t.s.listing(inv.CallID, res)
	}
	// A file window is not measured against tool_output.max_bytes/max_lines: it is already
	// bounded by the fixed window (files.MaxReadBytes, as a bg read-back window is), and
	// read is how the model pages through a file, so withholding it would leave no way in.
	return completed(renderWindow(res), tools.Metadata{Details: details(readFacts{
		Path: res.Path, StartLine: res.StartLine, EndLine: res.EndLine, TotalLines: res.TotalLines,
		HasMore: res.HasMore, NextOffset: res.NextOffset, Truncated: res.Truncated, Size: res.Size,
		Credential: credentialFacts{Digest: res.Credential.Digest.String(), Generation: res.Credential.Generation},
		Via:        via(res.Editor),
	})})
}

// Authorize says what a read, write or apply_patch path reaches, for the permission gate to
// ask about before the call runs: a final symbolic link is followed here, once, and a target
// outside the workspace names the external_directory resource ("dir/*") to ask for. A call
// the gate admits under such a grant carries the directory in Invocation.ExternalRoot.
func (s *Set) Authorize(path string) (files.Authority, error) { return s.ws.Authorize(path) }

type readFacts struct {
	Path       string          `json:"path"`
	StartLine  int             `json:"startLine"`
	EndLine    int             `json:"endLine"`
	TotalLines int             `json:"totalLines"`
	HasMore    bool            `json:"hasMore"`
	NextOffset int             `json:"nextOffset,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`
	Size       int             `json:"size"`
	Credential credentialFacts `json:"credential"`
	// Via is "editor" when the window is the editor's text (docs/acp.md), else absent.
	Via string `json:"via,omitempty"`
}

// via is the details' "via": "editor" when the bytes came from or went to the editor.
func via(editor bool) string {
	if editor {
		return tools.ViaEditor
	}
	return ""
}

type credentialFacts struct {
	Digest     string `json:"digest"`
	Generation uint64 `json:"generation"`
}

// renderWindow shows a file window as numbered logical lines, the way apply_patch matches
// them: a BOM and CR line endings are not shown on the lines but stated once in the header,
// so the model neither types them into a patch nor thinks they are missing (apply_patch
// keeps both).
func renderWindow(r files.ReadResult) string {
	var b strings.Builder
	content := r.Content
	bom := r.StartLine == 1 && strings.HasPrefix(content, "\uFEFF")
	content = strings.TrimPrefix(content, "\uFEFF")
	valid := utf8.ValidString(content)
	if !valid {
		content = strings.ToValidUTF8(content, "\uFFFD")
	}
	lines := strings.SplitAfter(content, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	crlf := false
	for _, l := range lines {
		if strings.HasSuffix(l, "\r\n") {
			crlf = true
			break
		}
	}

	switch {
	case r.TotalLines == 0:
		fmt.Fprintf(&b, "%s: empty file (0 bytes)\n", r.Path)
		return b.String()
	case r.EndLine < r.StartLine:
		fmt.Fprintf(&b, "%s: no lines from %d; the file has %d lines (%d bytes). Read with an offset from 1 to %d.\n",
			r.Path, r.StartLine, r.TotalLines, r.Size, r.TotalLines)
		return b.String()
	}
	fmt.Fprintf(&b, "%s: lines %d-%d of %d (%d bytes)", r.Path, r.StartLine, r.EndLine, r.TotalLines, r.Size)
	var notes []string
	if bom {
		notes = append(notes, "starts with a UTF-8 BOM, not shown")
	}
	if crlf {
		notes = append(notes, "CRLF line endings, not shown")
	}
	if !valid {
		notes = append(notes, "not valid UTF-8: invalid bytes shown as U+FFFD")
	}
	if r.Editor {
		notes = append(notes, "the editor's text, which may differ from the disk")
	}
	if len(notes) > 0 {
		b.WriteString("; " + strings.Join(notes, "; "))
	}
	b.WriteString("\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\r")
		fmt.Fprintf(&b, "%6d\t%s\n", r.StartLine+i, l)
	}
	switch {
	case r.Truncated:
		fmt.Fprintf(&b, "(line %d is longer than one window of %d bytes and was cut; use shell (e.g. cut or head -c) to see all of it. ",
			r.EndLine, files.MaxReadBytes)
		if r.HasMore {
			fmt.Fprintf(&b, "More lines follow: read with offset %d.)\n", r.NextOffset)
		} else {
			b.WriteString("It is the last line.)\n")
		}
	case r.HasMore:
		fmt.Fprintf(&b, "(%d more lines: read with offset %d to continue.)\n", r.TotalLines-r.EndLine, r.NextOffset)
	default:
		if !strings.HasSuffix(r.Content, "\n") {
			b.WriteString("(end of file, no newline at the end)\n")
		} else {
			b.WriteString("(end of file)\n")
		}
	}
	return b.String()
}

// listing renders a directory. Unlike a file window it has no paging, so a huge directory
// is withheld to an artifact like any other output over the caps.
func (s *Set) listing(callID string, r files.ReadResult) tools.Result {
	var b strings.Builder
	shown := r.Path
	if shown == "." {
		shown = "the workspace root"
	}
	fmt.Fprintf(&b, "%s: directory with %d entries\n", shown, len(r.Entries))
	for _, e := range r.Entries {
		name := e.Name
		if e.Dir {
			name += "/"
		}
		b.WriteString(name)
		b.WriteByte('\n')
	}
	facts := map[string]any{"path": r.Path, "dir": true, "entries": len(r.Entries)}
	out := b.String()
	if w := s.art.over([]byte(out)); w != nil {
		h, err := s.art.withhold(callID, tools.NameRead, []byte(out), w, "Or list a narrower directory, or use glob with a pattern.")
		if err != nil {
			return artifactFailure(tools.NameRead, err)
		}
		h.meta.Details = details(facts)
		return completed(h.notice, h.meta)
	}
	return completed(out, tools.Metadata{Details: details(facts)})
}

// artifactFailure answers a read-only call whose oversized output could not be stored:
// showing it would break the caps and cutting it would lose it, so the call fails; it
// changed nothing and may be repeated.
func artifactFailure(tool string, err error) tools.Result {
	return tools.Result{Outcome: tools.OutcomeError, ErrorCode: string(CodeArtifactFailed),
		Output: tool + ": the output is over the tool_output caps and could not be stored for read-back (" + err.Error() + "). Nothing was changed; narrow the request."}
}
