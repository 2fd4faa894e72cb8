package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zuno-run/zuno/domain/bounds"
)

// toolOutputBelowProject is each tool_output limit as the layers under the project layer (the
// global file) leave it, else its default: what a project file may lower and never raise
// (docs/config.md, "Bounds"). A value above the ceiling counts as the ceiling, since that is
// what is in effect.
func toolOutputBelowProject(docs []Document) map[string]int64 {
	below := map[string]int64{}
	for _, l := range bounds.ToolOutput {
		below[l.Key] = l.Default
	}
	for _, d := range docs {
		if !d.Layer.Trusted() {
			break // docs are in layer order: what follows the project layer overrides it anyway
		}
		for _, m := range memberValue(d.Node, "tool_output").Members {
			for _, l := range bounds.ToolOutput {
				if v, ok := limitValue(l, m); ok && v > 0 {
					below[l.Key] = l.Effective(v)
				}
			}
		}
	}
	return below
}

// checkProjectToolOutput refuses a tool_output value of the project layer above what the
// layers under it say: a checked-in file may ask for less output inline or on disk, never
// for more (issue 30: a project file once raised max_bytes to 2 GB and put 300 MB in one event).
func checkProjectToolOutput(d Document, below map[string]int64, p Paths) error {
	global := filepath.Join(p.GlobalDir, "zuno.json")
	for _, m := range memberValue(d.Node, "tool_output").Members {
		for _, l := range bounds.ToolOutput {
			v, ok := limitValue(l, m)
			if !ok || v <= below[l.Key] {
				continue // not this key, not a number (decoding refuses it), or a lowering
			}
			return untrusted(d, m.Offset, l.Key,
				fmt.Sprintf("it raises the limit from %d to %d %s, and a checked-in file may only lower how much output reaches the model, the log, the provider and the disk", below[l.Key], v, l.Unit),
				fmt.Sprintf("set at most %d here, or raise it in the global file %s (or --config, or the managed policy), up to the ceiling %d", below[l.Key], global, l.Ceiling))
		}
	}
	return nil
}

// limitValue is m's integer value when m is the member of limit l (case folded).
func limitValue(l bounds.Limit, m Member) (int64, bool) {
	if !strings.EqualFold("tool_output."+m.Key, l.Key) {
		return 0, false
	}
	var v int64
	if json.Unmarshal(m.Value.Raw, &v) != nil {
		return 0, false
	}
	return v, true
}
