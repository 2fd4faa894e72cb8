package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zuno-run/zuno/events"
)

// A tool result's preview in `zuno run`'s text output (issue 12 item 5): what a person reading
// the run needs to judge a call without opening the event log. It is read only from the
// recorded events (the settled Output and Metadata, docs/tools.md; a patch's text from the
// model's recorded call), so a preview never shows something the log does not hold.
const (
	previewMaxLines = 8   // per call, so one noisy command cannot flood the run
	previewHead     = 3   // first lines of a long output
	previewTail     = 3   // last lines of a long output
	previewMaxWidth = 120 // runes per line before it is cut
	previewIndent   = "    "
	previewCut      = " …[cut]"
)

// toolPreview is the preview lines of one settled call; patch is the apply_patch envelope the
// model sent ("" when unknown).
func toolPreview(e events.ToolSettled, patch string) []string {
	if e.Outcome != "completed" {
		return headTail(e.Output, previewMaxLines)
	}
	switch e.Tool {
	case "shell":
		return shellPreview(e)
	case "apply_patch":
		if patch != "" {
			return patchPreview(patch)
		}
	case "read":
		return readPreview(e.Metadata)
	case "write":
		return writePreview(e.Metadata)
	}
	return headTail(e.Output, previewMaxLines)
}

// withheldNotice names output withheld to an artifact (its size and path) instead of a
// preview; it is never cut, since the path is what the reader needs to open it.
func withheldNotice(e events.ToolSettled) (string, bool) {
	w := e.Metadata.WithheldOutput
	if w == nil || e.Tool != "shell" || e.Outcome != "completed" {
		return "", false
	}
	return fmt.Sprintf("output withheld: %d lines, %d bytes, saved at %s", w.Lines, w.Bytes, w.Path), true
}

// shellPreview is the command's output without the "Exit code N." line the call's line
// already shows, and without its verification receipt's line when the receipt is
// authoritative (nothing to warn about; zuno debug receipt shows it). A derived receipt's line
// stays: it says why the status is not evidence. Output withheld to an artifact is not
// previewed: withheldNotice names it, uncut.
func shellPreview(e events.ToolSettled) []string {
	out := e.Output
	if first, rest, ok := strings.Cut(out, "\n"); ok && strings.HasPrefix(first, "Exit code ") {
		out = rest
	}
	var lines []string
	if id := e.Metadata.Verification; id != "" {
		if first, rest, ok := strings.Cut(out, "\n"); ok && strings.HasPrefix(first, "[verification "+id+"]") {
			out = rest
			if !strings.HasSuffix(first, ", authoritative") {
				lines = append(lines, first)
			}
		}
	}
	if e.Metadata.WithheldOutput != nil {
		return lines
	}
	return append(lines, headTail(out, previewMaxLines)...)
}

func readPreview(md events.ToolMetadata) []string {
	var d struct {
		Path       string `json:"path"`
		StartLine  int    `json:"startLine"`
		EndLine    int    `json:"endLine"`
		TotalLines int    `json:"totalLines"`
		Size       int64  `json:"size"`
	}
	if json.Unmarshal(md.Details, &d) != nil || d.Path == "" {
		return nil
	}
	return []string{fmt.Sprintf("%s · lines %d-%d of %d · %d bytes", d.Path, d.StartLine, d.EndLine, d.TotalLines, d.Size)}
}

func writePreview(md events.ToolMetadata) []string {
	var d struct {
		Path    string `json:"path"`
		Bytes   int64  `json:"bytes"`
		Created bool   `json:"created"`
	}
	if json.Unmarshal(md.Details, &d) != nil || d.Path == "" {
		return nil
	}
	verb := "overwritten"
	if d.Created {
		verb = "created"
	}
	return []string{fmt.Sprintf("%s · %d bytes · %s", d.Path, d.Bytes, verb)}
}

// patchFile is one file of an apply_patch envelope, counted for a diffstat.
type patchFile struct {
	op, path    string
	added, gone int
}

// patchPreview is a diffstat of the envelope and as much of its first hunk as fits. The
// envelope is parsed by its markers only (docs/tools.md): cmd/zuno does not import domain/.
func patchPreview(patch string) []string {
	var files []*patchFile
	var hunk []string
	inFirstHunk, hunkDone := false, false
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "*** Add File: "), strings.HasPrefix(l, "*** Update File: "), strings.HasPrefix(l, "*** Delete File: "):
			op, path, _ := strings.Cut(strings.TrimPrefix(l, "*** "), ": ")
			files = append(files, &patchFile{op: strings.ToLower(strings.TrimSuffix(op, " File")), path: path})
			hunkDone = hunkDone || inFirstHunk
			inFirstHunk = false
		case strings.HasPrefix(l, "*** Move to: ") && len(files) > 0:
			files[len(files)-1].path += " → " + strings.TrimPrefix(l, "*** Move to: ")
		case strings.HasPrefix(l, "*** "):
			hunkDone = hunkDone || inFirstHunk
			inFirstHunk = false
		case len(files) == 0:
		case strings.HasPrefix(l, "@@"):
			hunkDone = hunkDone || inFirstHunk
			inFirstHunk = !hunkDone
			if inFirstHunk {
				hunk = append(hunk, l)
			}
		default:
			f := files[len(files)-1]
			if strings.HasPrefix(l, "+") {
				f.added++
			} else if strings.HasPrefix(l, "-") {
				f.gone++
			}
			if !hunkDone && (inFirstHunk || f.op == "add") {
				inFirstHunk = true
				hunk = append(hunk, l)
			}
		}
	}
	return fitPatch(files, hunk)
}

// fitPatch keeps the diffstat whole up to three files and fills the rest with the hunk.
func fitPatch(files []*patchFile, hunk []string) []string {
	var out []string
	for i, f := range files {
		if i == 3 {
			out = append(out, fmt.Sprintf("… and %d more files", len(files)-3))
			break
		}
		out = append(out, fmt.Sprintf("%s %s +%d -%d", f.op, f.path, f.added, f.gone))
	}
	room := previewMaxLines - len(out)
	if len(hunk) > room {
		hunk = append(hunk[:room-1:room-1], fmt.Sprintf("… (%d more lines of the hunk)", len(hunk)-room+1))
	}
	return append(out, hunk...)
}

// headTail is at most max lines of text: all of it, or its first and last lines around a
// count of what was left out.
func headTail(text string, max int) []string {
	text = strings.TrimRight(text, "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) <= max {
		return lines
	}
	out := append([]string{}, lines[:previewHead]...)
	out = append(out, fmt.Sprintf("… (%d more lines)", len(lines)-previewHead-previewTail))
	return append(out, lines[len(lines)-previewTail:]...)
}

// previewLine makes one line safe to print: control and other unprintable characters are
// shown escaped (a command's output must not move the cursor or recolour the terminal),
// tabs become spaces, and a long line is cut with a marker.
func previewLine(s string) string { return printable(s, previewMaxWidth) }

// printable is s with unprintable characters escaped and, when width > 0, cut after width runes.
func printable(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, r := range s {
		if width > 0 && n == width {
			if i < len(s) {
				b.WriteString(previewCut)
			}
			break
		}
		switch {
		case r == '\t':
			b.WriteString("  ")
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString(fmt.Sprintf(`\x%02x`, s[i]))
		case !unicode.IsPrint(r):
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}
