package toolset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"

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

var reportParams = params{
	example: `{"name": "audit.md", "content": "# Audit\n..."}`,
	list: []param{
		{name: "name", kind: kString, required: true, maxBytes: MaxReportNameSize,
			desc: "plain file name such as audit.md (no directories), at most 128 bytes"},
		{name: "content", kind: kString, required: true, maxBytes: MaxReportBytes,
			desc: "the complete report text, UTF-8, at most 1 MiB"},
	},
}

func (t *reportTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameReportWrite, Policy: mutatingPolicy}
}

func (t *reportTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameReportWrite, Schema: reportParams.schema(), Description: "Publish a report file, e.g. the findings " +
		"of a read-only investigation. You choose only the file name; the host stores it under .zuno/reports/ with a prefix " +
		"unique to this call and returns the exact path, size and SHA-256. Every call creates a new file: reports are never " +
		"overwritten, are ignored by Git, and do not grant any other write access. Cite the returned path."}
}

func (t *reportTool) WritesWorkspace() bool { return false }

func (t *reportTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	a, err := parseReport(args)
	return tools.Parsed{Args: a}, err
}

func parseReport(args json.RawMessage) (reportArgs, error) {
	var a reportArgs
	if err := reportParams.decode(args, &a); err != nil {
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

func reportError(code Code, format string, args ...any) tools.Result {
	return tools.Result{Outcome: tools.OutcomeError, ErrorCode: string(code), Output: "report_write: " + fmt.Sprintf(format, args...)}
}

// publish creates the report at rel (under ReportDir) with O_EXCL, so an existing file is
// never replaced. The directories are created here if missing and must otherwise be real
// directories: a symbolic link among them could point the report anywhere. The file is
// opened through an os.Root, which also keeps a directory swapped for a link after the
// check from leading outside the workspace.
func (s *Set) publish(rel string, content []byte) tools.Result {
	root, err := os.OpenRoot(s.realRoot)
	if err != nil {
		return reportError(CodeFailed, "the workspace root cannot be opened: %v. Nothing was written.", err)
	}
	defer root.Close()
	for _, dir := range []string{".zuno", ReportDir} {
		err := root.Mkdir(filepath.FromSlash(dir), 0o755)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return reportError(CodeFailed, "cannot create %s: %v. Nothing was written.", dir, err)
		}
		fi, err := root.Lstat(filepath.FromSlash(dir))
		if err != nil {
			return reportError(CodeFailed, "cannot inspect %s: %v. Nothing was written.", dir, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			what := "a symbolic link"
			if fi.Mode()&fs.ModeSymlink == 0 {
				what = "not a directory"
			}
			return reportError(CodeUnsafeReportPath, "%s is %s, so reports cannot be published safely. Nothing was written; "+
				"ask the user to make %s a plain directory.", dir, what, dir)
		}
	}
	// Reports stay out of Git: the directory ignores everything in it, itself included.
	// An existing .gitignore is left alone.
	if f, err := root.OpenFile(filepath.FromSlash(path.Join(ReportDir, ".gitignore")), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		_, werr := f.Write([]byte("*\n"))
		if cerr := f.Close(); werr == nil && cerr != nil {
			werr = cerr
		}
		if werr != nil {
			return reportError(CodeFailed, "cannot write %s/.gitignore: %v. The report was not written.", ReportDir, werr)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return reportError(CodeFailed, "cannot create %s/.gitignore: %v. The report was not written.", ReportDir, err)
	}

	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return reportError(CodeReportExists, "%s already exists (this call already published a report with this name); "+
			"reports are never overwritten. Nothing was written; use another name.", rel)
	}
	if err != nil {
		return reportError(CodeFailed, "cannot create %s: %v. Nothing was written.", rel, err)
	}
	_, werr := f.Write(content)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		// The file is ours (O_EXCL): removing it restores the state before the call.
		if rerr := root.Remove(filepath.FromSlash(rel)); rerr != nil {
			return tools.Result{Outcome: tools.OutcomeUncertain, ErrorCode: string(CodeUncertain),
				Output: fmt.Sprintf("report_write: writing %s failed (%v) and the partial file could not be removed (%v). "+
					"Inspect %s before publishing again.", rel, werr, rerr, rel),
				Metadata: tools.Metadata{WrittenPaths: []string{rel}}}
		}
		return reportError(CodeFailed, "writing %s failed: %v. Nothing was left behind.", rel, werr)
	}
	sum := sha256.Sum256(content)
	receipt := reportReceipt{Path: rel, Bytes: len(content), SHA256: hex.EncodeToString(sum[:])}
	return completed(fmt.Sprintf("Report published at %s (%d bytes, sha256 %s). It is ignored by Git and will not be overwritten; cite this path.",
		rel, receipt.Bytes, receipt.SHA256), tools.Metadata{
		WrittenPaths: []string{rel},
		Details:      details(map[string]any{"reportArtifact": receipt}),
	})
}
