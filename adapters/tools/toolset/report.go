package toolset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"unicode"

	"github.com/zuno-run/zuno/adapters/tools/files"
	"github.com/zuno-run/zuno/adapters/tools/schema"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
)

// Report limits (report files of read-only tasks).
const (
	MaxReportBytes    = 1 << 20 // content
	MaxReportNameSize = 128     // name, in bytes
)

// ReportDir is where reports go, relative to the workspace root.
const ReportDir = ".zuno/reports"

type reportTool struct{ s *Set }

type reportArgs struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// The byte bounds are Rules (JSON Schema's maxLength counts characters); the descriptions
// state them.
var reportSchema = schema.MustCompile(tools.NameReportWrite, schema.Compact(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "plain file name such as audit.md, at most 128 bytes", "minLength": 1},
    "content": {"type": "string", "description": "UTF-8, at most 1 MiB", "minLength": 1}
  },
  "required": ["name", "content"],
  "additionalProperties": false
}`), schema.Rules{StrictText: true,
	Fields:  map[string]schema.Field{"name": {MaxBytes: MaxReportNameSize}, "content": {MaxBytes: MaxReportBytes}},
	Example: `{"name": "audit.md", "content": "# Audit\n..."}`})

func (t *reportTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameReportWrite, Policy: mutatingPolicy}
}

func (t *reportTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameReportWrite, Schema: reportSchema.Raw(), Description: "Publish a new report file (e.g. a " +
		"read-only investigation's findings) under .zuno/reports/ with a unique prefix; cite the path returned with its " +
		"size and SHA-256. Reports are never overwritten, are ignored by Git, and grant no other write access."}
}

func (t *reportTool) WritesWorkspace() bool { return false }

func (t *reportTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	a, err := parseReport(args)
	return tools.Parsed{Args: a}, err
}

func parseReport(args json.RawMessage) (reportArgs, error) {
	var a reportArgs
	if err := reportSchema.Decode(args, &a); err != nil {
		return a, err
	}
	if msg := reportNameProblem(a.Name); msg != "" {
		return a, domain.Invalid("name", fmt.Sprintf("name %q %s", a.Name, msg),
			`send a plain file name of letters, digits and punctuation such as "audit.md" or "findings-2024.txt"; the host chooses the directory`)
	}
	return a, nil
}

// windowsReserved are device names no file may take on Windows, with or without extension.
var windowsReserved = map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true}

// reportNameProblem says why name cannot be a report file name, or "". Names are checked
// for every supported platform at once, so a report published here can be checked out
// anywhere: no separators, no control or invisible format characters, none of the
// characters Windows forbids, no trailing dot or space, no reserved device name.
func reportNameProblem(name string) string {
	switch {
	case name == "." || name == "..":
		return "is a directory name"
	case strings.ContainsAny(name, `/\`):
		return "contains a path separator; it must be a file name only"
	case strings.ContainsAny(name, `<>:"|?*`):
		return `contains one of < > : " | ? *, which are not allowed in file names on every platform`
	case strings.TrimSpace(name) != name:
		return "starts or ends with white space"
	case strings.HasSuffix(name, "."):
		return "ends with a dot"
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || r == '\uFFFD' {
			return "contains a control, invisible or replacement character"
		}
	}
	stem, _, _ := strings.Cut(name, ".")
	if windowsReserved[strings.ToUpper(strings.TrimSpace(stem))] {
		return "is a reserved device name on Windows"
	}
	return ""
}

func (t *reportTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(reportArgs)
	if !ok {
		return notValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	if r, refused := t.s.readOnlyRefusal(tools.NameReportWrite); refused {
		return r
	}
	session := inv.SessionID
	if session == "" {
		session = t.s.cfg.SessionID
	}
	rel := path.Join(ReportDir, reportPrefix(session, inv.CallID)+"-"+a.Name)
	return t.s.publish(rel, []byte(a.Content))
}

// reportPrefix is 12 hex digits of SHA-256 over the session and call ids, NUL-separated so
// that no two (session, call) pairs share an input.
func reportPrefix(session, call string) string {
	sum := sha256.Sum256([]byte(session + "\x00" + call))
	return hex.EncodeToString(sum[:6])
}

type reportReceipt struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// reportFailure maps a CreateNew refusal: a link or a file among .zuno and .zuno/reports is
// unsafe_report_path (the user has to fix the directory); anything else failed.
func reportFailure(rel string, err error, after string) tools.Result {
	var fe *files.Error
	if errors.As(err, &fe) && (fe.Kind == files.SymlinkRefused || errors.Is(err, syscall.ENOTDIR)) {
		return reportError(CodeUnsafeReportPath, "%v, so reports cannot be published safely. %s "+
			"Ask the user to make %s a plain directory.", err, after, ReportDir)
	}
	return reportError(CodeFailed, "cannot create %s: %v. %s", rel, err, after)
}

func reportError(code Code, format string, args ...any) tools.Result {
	return tools.Result{Outcome: tools.OutcomeError, ErrorCode: string(code), Output: "report_write: " + fmt.Sprintf(format, args...)}
}

// publish creates the report at rel (under ReportDir) through the workspace's handles
// (files.Workspace.CreateNew): the directories are created if missing and must otherwise be
// real directories, since a symbolic link among them could point the report anywhere, and
// the file is created with O_EXCL through its parent's handle, so an existing file is never
// replaced and a directory swapped for a link after the check cannot redirect it.
func (s *Set) publish(rel string, content []byte) tools.Result {
	// Reports stay out of Git: the directory ignores everything in it, itself included.
	// An existing .gitignore is left alone.
	ignore := path.Join(ReportDir, ".gitignore")
	if err := s.ws.CreateNew(ignore, []byte("*\n")); err != nil && !errors.Is(err, fs.ErrExist) {
		return reportFailure(ignore, err, "The report was not written.")
	}
	err := s.ws.CreateNew(rel, content)
	var u *files.UncertainError
	switch {
	case errors.Is(err, fs.ErrExist):
		return reportError(CodeReportExists, "%s already exists (this call already published a report with this name); "+
			"reports are never overwritten. Nothing was written; use another name.", rel)
	case errors.As(err, &u):
		return tools.Result{Outcome: tools.OutcomeUncertain, ErrorCode: string(CodeUncertain),
			Output:   fmt.Sprintf("report_write: writing %s failed (%v). Inspect %s before publishing again.", rel, u.Err, rel),
			Metadata: tools.Metadata{WrittenPaths: []string{rel}}}
	case err != nil:
		return reportFailure(rel, err, "Nothing was written.")
	}
	sum := sha256.Sum256(content)
	receipt := reportReceipt{Path: rel, Bytes: len(content), SHA256: hex.EncodeToString(sum[:])}
	return completed(fmt.Sprintf("Report published at %s (%d bytes, sha256 %s). It is ignored by Git and will not be overwritten; cite this path.",
		rel, receipt.Bytes, receipt.SHA256), tools.Metadata{
		WrittenPaths: []string{rel},
		Details:      details(map[string]any{"reportArtifact": receipt}),
	})
}
