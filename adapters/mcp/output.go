package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zuno-run/zuno/domain/tools"
)

// Caps are the tool output caps an MCP result goes through (docs/tools.md, "Output caps and
// artifacts"), and where withheld output is stored.
type Caps struct {
	MaxBytes, MaxLines int
	// MaxArtifactBytes bounds what one call may store; beyond it the rest is dropped and the
	// notice says so.
	MaxArtifactBytes int64
	ArtifactDir      string
}

// render writes a result's content as the text the model reads: text blocks as they are,
// other blocks as one line naming their kind and size (their bytes are not text the model
// can use), and the structured content when there is no content block.
func render(res *mcp.CallToolResult) string {
	var b strings.Builder
	for i, c := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch v := c.(type) {
		case *mcp.TextContent:
			b.WriteString(v.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", v.MIMEType, len(v.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", v.MIMEType, len(v.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource %s]", v.URI)
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				b.WriteString(v.Resource.Text)
			} else if v.Resource != nil {
				fmt.Fprintf(&b, "[resource %s, %d bytes]", v.Resource.URI, len(v.Resource.Blob))
			}
		default:
			fmt.Fprintf(&b, "[%T content]", c)
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	return b.String()
}

// capOutput puts text through the caps: under both it is the output; over either it is stored
// whole (up to MaxArtifactBytes) as a new artifact and the model gets a notice in its place.
func (c Caps) capOutput(callID, tool, text string, r *tools.Result) {
	lines := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	w := &tools.WithheldOutput{Bytes: int64(len(text)), Lines: lines, MaxBytes: c.MaxBytes, MaxLines: c.MaxLines}
	switch {
	case c.MaxBytes > 0 && len(text) > c.MaxBytes:
		w.Limit = "max_bytes"
	case c.MaxLines > 0 && lines > c.MaxLines:
		w.Limit = "max_lines"
	default:
		r.Output = text
		return
	}
	kept := text
	if c.MaxArtifactBytes > 0 && int64(len(kept)) > c.MaxArtifactBytes {
		kept = kept[:c.MaxArtifactBytes]
	}
	path, err := c.store(callID, tool, kept)
	if err != nil {
		r.Outcome, r.ErrorCode = tools.OutcomeError, "failed"
		r.Output = fmt.Sprintf("the result is %d bytes, over tool_output.%s, and could not be stored: %v", len(text), w.Limit, err)
		return
	}
	w.Path = path
	r.Metadata.OutputPaths, r.Metadata.WithheldOutput = []string{path}, w
	limit, unit := c.MaxBytes, "bytes"
	if w.Limit == "max_lines" {
		limit, unit = c.MaxLines, "lines"
	}
	r.Output = fmt.Sprintf("Output withheld: it is %d bytes in %d lines, over tool_output.%s (%d %s). ", len(text), lines, w.Limit, limit, unit)
	if len(kept) < len(text) {
		r.Output += fmt.Sprintf("Its first %d bytes (tool_output.max_artifact_bytes) are saved at %s; the rest was dropped. ", len(kept), path)
	} else {
		r.Output += fmt.Sprintf("Nothing was cut: all %d bytes are saved at %s. ", len(text), path)
	}
	r.Output += fmt.Sprintf("Read them back a window at a time with bg {\"action\": \"artifact\", \"outputPath\": %s}.", strconv.Quote(path))
}

// store writes a new artifact; an existing one is never overwritten.
func (c Caps) store(callID, tool, text string) (string, error) {
	if c.ArtifactDir == "" {
		return "", fmt.Errorf("no artifact directory")
	}
	if err := os.MkdirAll(c.ArtifactDir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(c.ArtifactDir, Normalise(callID)+"-"+tool+".out")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}
